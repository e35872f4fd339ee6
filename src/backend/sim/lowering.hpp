#pragma once
// Lowering of graph nodes to simulator workloads, and their simulation.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backend/sim/sim_backend.hpp"
#include "core/background_writer.hpp"
#include "core/tensor.hpp"
#include "graph/graph.hpp"
#include "sim/accelerator.hpp"
#include "sim/energy.hpp"
#include "sim/report.hpp"

namespace telar::backend::sim {

// The values a node's simulation may read (null where the lowering does not need them).
struct NodeOperands {
  std::int64_t batch = 0;
  const Tensor* x = nullptr;        // SIGMA: the activations (their zeros are skipped)
  const Tensor* weight = nullptr;   // SIGMA: the (pruned) weights
  const Tensor* indices = nullptr;  // EmbeddingBag
  const Tensor* offsets = nullptr;  // EmbeddingBag
};

class NodeSimulator {
 public:
  NodeSimulator(SimTarget target, SimOptions options);

  const SimTarget& target() const { return target_; }
  // Where a node goes; `pruned`: its weights were pruned (--weight-sparsity).
  enum class Route { Host, Dense, Sparse, Pruned };
  Route route(const graph::Node& node, bool pruned) const;
  // Whether the node's simulation reads its activations (x) and, for EmbeddingBag, its indices.
  bool needs_activations(const graph::Node& node, bool pruned) const;

  // Simulates one node of a forward pass; appends the files it writes to `files` (written
  // in the background: finish_files() waits for them).
  NodeSimulation simulate(const graph::Graph& graph, const graph::Node& node,
                          const NodeOperands& operands, bool pruned,
                          std::vector<std::filesystem::path>& files);
  // Waits until every file of the nodes simulated is written; rethrows a failed write.
  void finish_files();

 private:
  struct DenseResult {
    telar::sim::OperationRecord record;
    std::string tile_source;
  };
  std::string host_note(const graph::Node& node, bool pruned) const;
  NodeSimulation dense(const graph::Graph& graph, const graph::Node& node,
                       const NodeOperands& operands, const AcceleratorChoice& accel,
                       std::vector<std::filesystem::path>& files);
  NodeSimulation sigma(const graph::Graph& graph, const graph::Node& node,
                       const NodeOperands& operands, const AcceleratorChoice& accel,
                       std::vector<std::filesystem::path>& files);
  NodeSimulation magma(const graph::Graph& graph, const graph::Node& node,
                       const NodeOperands& operands, const AcceleratorChoice& accel,
                       std::vector<std::filesystem::path>& files);
  // A dense operation on `accel`, mapped (or from a tile file), cached by shape.
  const DenseResult& run_dense(const AcceleratorChoice& accel, const telar::sim::DenseOp& op,
                               const std::string& node_name);
  void add_call(NodeSimulation& n, const telar::sim::OperationRecord& record, int repeats,
                std::vector<std::filesystem::path>& files);
  std::filesystem::path tile_file(const std::string& node_name) const;

  SimTarget target_;
  SimOptions options_;
  telar::sim::EnergyTable energy_table_;
  std::map<std::string, DenseResult> dense_cache_;                   // by accelerator + op + tile
  std::map<std::string, telar::sim::SparseDenseTile> sparse_tiles_;  // by node (or shape)
  std::unique_ptr<BackgroundWriter> writer_;  // STONNE's files, while the simulation goes on
};

// "bot/fc0" -> "bot"; "conv1" -> "conv1".
std::string component_of(const std::string& node_name);

}  // namespace telar::backend::sim
