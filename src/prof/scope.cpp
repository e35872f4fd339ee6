#include "prof/scope.hpp"

#include <fmt/format.h>

#include <array>
#include <vector>

#include "core/error.hpp"
#include "core/parse.hpp"

namespace telar::prof {

namespace {
constexpr std::array<std::string_view, kScopeKindCount> kKindNames = {
    "run", "epoch", "batch", "eval", "node", "region", "gap"};
// Kinds a user can ask for; gaps come with their parents.
constexpr std::array<ScopeKind, 6> kSelectable = {ScopeKind::Run,   ScopeKind::Epoch,
                                                  ScopeKind::Batch, ScopeKind::Eval,
                                                  ScopeKind::Node,  ScopeKind::Region};
}  // namespace

std::string_view scope_kind_name(ScopeKind kind) {
  return kKindNames[static_cast<int>(kind)];
}

std::string_view pass_suffix(Pass pass) {
  constexpr std::array<std::string_view, 3> kSuffixes = {"", "fwd", "bwd"};  // None, Forward, Backward
  return kSuffixes[static_cast<int>(pass)];
}

std::string path_segment(const ScopeLabel& label) {
  switch (label.kind) {
    case ScopeKind::Run:
      return "run";
    case ScopeKind::Gap:
      return "gap";
    case ScopeKind::Node: {
      std::string s = fmt::format("node[{}]", label.name);
      if (label.pass != Pass::None) s += fmt::format(".{}", pass_suffix(label.pass));
      return s;
    }
    case ScopeKind::Region:
      return label.index >= 0 ? fmt::format("{}[{}]", label.name, label.index) : label.name;
    case ScopeKind::Epoch:
    case ScopeKind::Batch:
    case ScopeKind::Eval: {
      const auto kind = scope_kind_name(label.kind);
      return label.index >= 0 ? fmt::format("{}[{}]", kind, label.index) : std::string(kind);
    }
  }
  return "?";
}

std::string node_column(const ScopeLabel& label) {
  if (label.kind != ScopeKind::Node) return {};
  if (label.pass == Pass::None) return label.name;
  return fmt::format("{}.{}", label.name, pass_suffix(label.pass));
}

ScopeSet ScopeSet::all() {
  ScopeSet s;
  for (ScopeKind k : kSelectable) s.add(k);
  return s;
}

ScopeSet ScopeSet::parse(std::string_view text, std::string_view what) {
  ScopeSet s;
  std::vector<std::string> names;
  for (ScopeKind k : kSelectable) names.emplace_back(scope_kind_name(k));
  names.emplace_back("all");
  for (const auto& raw : split(text, ',')) {
    const std::string word{trim(raw)};
    if (word.empty()) continue;
    if (word == "all") {
      s = all();
      continue;
    }
    bool found = false;
    for (ScopeKind k : kSelectable)
      if (word == scope_kind_name(k)) s.add(k), found = true;
    if (!found) {
      const std::string near = closest_match(word, names);
      fail("{}: unknown scope '{}'{}; choose from run,epoch,batch,eval,node,region or all", what,
           word, near.empty() ? "" : fmt::format(" (did you mean '{}'?)", near));
    }
  }
  require(s.bits_ != 0, "{}: no scope given; choose from run,epoch,batch,eval,node,region or all",
          what);
  return s;
}

std::string ScopeSet::str() const {
  std::string out;
  for (ScopeKind k : kSelectable) {
    if (!contains(k)) continue;
    if (!out.empty()) out += ',';
    out += scope_kind_name(k);
  }
  return out;
}

}  // namespace telar::prof
