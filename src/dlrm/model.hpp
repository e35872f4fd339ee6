#pragma once
// DLRM in the telar IR. Node names carry the component, so anything that walks the graph
// (the CPU executor's timers, the simulator's statistics) can group nodes the way the thesis
// reports them:
//   bot/fcK, bot/reluK        Bottom MLP          (Linear + ReLU)
//   emb/T                     EmbeddingBags       (one EmbeddingBag per table, sum)
//   interaction               Interaction         (DotInteraction, or Concat for "cat")
//   top/fcK, top/reluK,       Top MLP             (Linear + ReLU, the last Linear + Sigmoid)
//   top/sigmoid
//   loss, loss_*              Loss                (training graphs only)
// Inputs: "dense" [B, m]; per table "indices/T" (i64, all bags' rows) and "offsets/T" (i64 [B],
// the start of each bag) — or, in the dense variant, "emb/T.out" [B, d], the tables' outputs
// computed outside the graph (see GraphOptions).
#include <string_view>

#include "dlrm/config.hpp"
#include "graph/graph.hpp"
#include "graph/loss.hpp"

namespace telar::dlrm {

enum class Component { BottomMlp, EmbeddingBags, Interaction, TopMlp, Loss };
inline constexpr int kComponents = 5;

std::string_view component_name(Component c);  // "Bottom MLP", "EmbeddingBags", ...
// The component of a node of a graph built here (by its name); throws for a foreign node.
Component component_of(const graph::Node& node);
Component component_of(std::string_view node_name);

struct GraphOptions {
  // true: the EmbeddingBag nodes are replaced by inputs "emb/T.out" [B, d]. The CPU executor
  // runs the tables with its own storage (memory, mmap or procedural; sparse updates) and the
  // rest of the graph on a backend.
  bool embeddings_as_inputs = false;
  // false: the graph ends at the last Linear (the logit), for a BCE-with-logits loss.
  bool final_sigmoid = true;
};

// The DLRM graph. Linear layers carry DLRM's initialisers (W ~ N(0, sqrt(2/(in+out))),
// b ~ N(0, sqrt(1/out))); table parameters (full variant) U(-sqrt(1/rows), sqrt(1/rows)).
// Do not ParameterSet::initialize() a full graph of large tables: the tables live in
// dlrm::EmbeddingTables.
graph::Graph build_graph(const DlrmConfig& config, const GraphOptions& options = {});

// Table t's names.
std::string table_node_name(std::int64_t t);    // "emb/3"
std::string table_output_name(std::int64_t t);  // "emb/3.out"

// The loss a --loss-function selects: mse compares the probability with the target (MSE after
// the sigmoid, as DLRM does); bce is BCE on the probability, computed as BCE-with-logits on the
// logit (the same function, numerically safer).
enum class LossFunction { Mse, Bce };
LossFunction parse_loss_function(std::string_view text);
std::string_view loss_function_name(LossFunction f);

// The graph the CPU executor compiles: the dense variant with its loss. Inputs: dense,
// emb/0.out .. emb/T-1.out, target [B, 1]; outputs: the probability (mse) or logit (bce) [B, 1],
// and the loss.
graph::Graph build_training_graph(const DlrmConfig& config, LossFunction loss);

}  // namespace telar::dlrm
