#pragma once
// Configuration of MAERI's augmented reduction tree (ART, "ASNETWORK") and of the
// forwarding-adder network (FEN) for a set of equal, contiguous virtual neurons: which adder
// switches add 2:1 or 3:1, which only forward, which augmented (sibling) links are used and in
// which direction, which switch delivers each finished sum to memory, and how the switches are
// wired to the collection bus. The mapping follows STONNE's compilers rule for rule, since the
// simulated timing depends on every one of these choices.
#include <cstdint>
#include <vector>

#include "sim/config.hpp"

namespace telar::sim {

enum class AdderMode : std::uint8_t { Add21, Add31, Add11Fw11, Fw22, Fold };
enum class LinkDir : std::uint8_t { None, Send, Receive };

struct AdderConfig {
  AdderMode mode = AdderMode::Add21;  // STONNE's default for a switch no neuron touches
  LinkDir link = LinkDir::None;       // augmented link to the sibling of the other parent
  bool configured = false;            // some neuron mapped onto this switch
  bool left_enabled = false, right_enabled = false;
  bool to_memory = false;     // sends its result to the collection bus (or accumulator)
  bool to_fold_node = false;  // FEN: sends its result up to the node that folds
};

// Nodes are numbered level by level from the root: level l holds 2^l switches at indices
// 2^l - 1 + j. A FEN has one more switch, the folding node next to the root, at index
// num_ms - 1.
struct ReduceTree {
  ReduceNetwork kind = ReduceNetwork::Art;
  int num_ms = 0;
  int levels = 0;  // log2(num_ms)
  std::vector<AdderConfig> nodes;

  static int index(int level, int j) { return (1 << level) - 1 + j; }
  int fen_special() const { return num_ms - 1; }
  int node_count() const { return static_cast<int>(nodes.size()); }
};

ReduceTree compile_reduce_tree(ReduceNetwork kind, int num_ms, int vn_size, int num_vns);
// Contiguous neurons of the given sizes from multiplier 0 on (SIGMA's variable-size clusters).
ReduceTree compile_reduce_tree(ReduceNetwork kind, int num_ms, const std::vector<int>& vn_sizes);

// Whether the compiled ART (for contiguous neurons of `vn_sizes`) makes some adder add partial
// sums of two different neurons, or wait for an input no neuron sends: STONNE's compiler
// produces such configurations for some mixes of small clusters, and its adders abort on them.
bool neurons_mix(const ReduceTree& tree, const std::vector<int>& vn_sizes);

// The collection-bus wiring of the adder switches (STONNE pairs the switches that share an
// augmented link, then adds the single ones): for each node, its bus line and input port.
// With an accumulation buffer, accumulator k sits in front of the k-th entry of `order`.
struct BusWiring {
  std::vector<int> order;  // nodes in the order STONNE connects them (pairs, then singles)
  std::vector<int> line;   // per node
  std::vector<int> port;   // per node
  int ports_per_line = 0;  // enough input ports on every line for this wiring
};
BusWiring wire_collection_bus(ReduceNetwork kind, int num_ms, int bus_lines);

// FEN only: the node that receives each node's up-forwarding link (the folding node the
// compiler may select), or -1.
std::vector<int> fen_up_targets(int num_ms);

}  // namespace telar::sim
