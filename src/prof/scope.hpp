#pragma once
// Scope labels: what a profiled stretch of work is (the run, an epoch, a batch, a node's forward
// or backward pass, an evaluation pass, a named region) and how it is written in a scope path
// such as `run/epoch[0]/batch[17]/node[conv2].fwd`.
#include <cstdint>
#include <string>
#include <string_view>

namespace telar::prof {

enum class ScopeKind : std::uint8_t { Run, Epoch, Batch, Eval, Node, Region, Gap };
inline constexpr int kScopeKindCount = 7;

// Forward and backward passes of a node are separate scopes.
enum class Pass : std::uint8_t { None, Forward, Backward };

std::string_view scope_kind_name(ScopeKind kind);  // "run", "epoch", ..., "gap"
std::string_view pass_suffix(Pass pass);           // "", "fwd", "bwd"

struct ScopeLabel {
  ScopeKind kind = ScopeKind::Region;
  std::int64_t index = -1;  // epoch, batch or region index; -1 when it has none
  std::string name;         // node or region name
  Pass pass = Pass::None;

  static ScopeLabel run() { return {ScopeKind::Run, -1, {}, Pass::None}; }
  static ScopeLabel epoch(std::int64_t i) { return {ScopeKind::Epoch, i, {}, Pass::None}; }
  static ScopeLabel batch(std::int64_t i) { return {ScopeKind::Batch, i, {}, Pass::None}; }
  static ScopeLabel eval(std::int64_t i = -1) { return {ScopeKind::Eval, i, {}, Pass::None}; }
  static ScopeLabel node(std::string_view name, Pass pass) {
    return {ScopeKind::Node, -1, std::string(name), pass};
  }
  static ScopeLabel region(std::string_view name, std::int64_t i = -1) {
    return {ScopeKind::Region, i, std::string(name), Pass::None};
  }
};

// The label's own path segment: "run", "epoch[3]", "eval", "node[conv2].fwd", "matmul[512]".
std::string path_segment(const ScopeLabel& label);

// The node column of the tidy CSV: "conv2.fwd" (empty for other kinds).
std::string node_column(const ScopeLabel& label);

// Which kinds of scope a session records. Scopes of other kinds are still tracked (so paths and
// epoch/batch numbers stay right) but cost no counter read.
class ScopeSet {
 public:
  static ScopeSet all();
  static ScopeSet none() { return ScopeSet{}; }
  // "run,epoch,batch,eval,node,region" or "all"; `what` names the option in errors.
  static ScopeSet parse(std::string_view text, std::string_view what = "--profile-scopes");
  bool contains(ScopeKind kind) const { return (bits_ >> static_cast<int>(kind)) & 1u; }
  ScopeSet& add(ScopeKind kind) {
    bits_ |= 1u << static_cast<int>(kind);
    return *this;
  }
  std::string str() const;

 private:
  unsigned bits_ = 0;
};

}  // namespace telar::prof
