#pragma once
// The `sim:` backend: runs a graph with values from the host (the CPU backend, so outputs equal
// `cpu`'s) and time from the accelerator simulator (src/sim). Each node is lowered to what the
// target's accelerators can run:
//   Linear        -> FC (MAERI, TPU mesh) or bitmap sparse GEMM (SIGMA; pruned weights)
//   Conv2d        -> CONV on MAERI (groups, depthwise included), im2col GEMMs per group on the
//                    TPU mesh or SIGMA
//   EmbeddingBag  -> CSR sparse × dense on MAGMA: the bag's multi-hot row (its indices, never a
//                    dense vector) times the table
//   anything else -> the host (no simulated time)
// Per node the executable reports cycles, Global Buffer traffic, multiplier utilization and
// energy, summed over the simulator calls the node took; nodes keep their graph names, so a
// caller can group them (DLRM's bot/, emb/, top/ prefixes: see NodeSimulation::component).
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "backend/sim/target.hpp"
#include "sim/stats.hpp"

namespace telar::backend::sim {

struct SimOptions {
  // Prune Linear and Conv2d weights by magnitude to this fraction of zeros (0: keep them);
  // pruned layers go to the target's `pruned` accelerator (SIGMA) when it has one.
  double weight_sparsity = 0.0;
  // A STONNE tile file per layer: DIR/<node name>.txt where it exists (else the mapper).
  std::filesystem::path tile_dir;
  // Where each simulator call writes its STONNE stats (.txt) and .counters files; empty: none.
  std::filesystem::path stats_dir;
  bool exact_cycle_loop = false;  // the simulator's oracle mode
  // EmbeddingBags of one shape (bags, rows, width) share the SparseDense tile the mapper picks
  // on the first of them, instead of a search per node (DLRM's 50 tables: one search).
  bool share_sparse_tiles = false;
  std::string energy_table;       // empty: the built-in table
};

// One node of the last forward.
struct NodeSimulation {
  std::string node;         // graph node name
  std::string op;           // "Linear", "Conv2d", ...
  std::string component;    // the node name up to its first '/', else the whole name
  std::string target;       // the accelerator configuration's name, or "host"
  std::string workload;     // what ran, e.g. "FC M=1 N=10 K=1024" or "SparseDense M=8 ..."
  std::string tile;         // the tile (and where it came from)
  std::string note;         // why it ran on the host, or how it was lowered
  int calls = 0;            // simulator calls behind the figures
  telar::sim::Stats stats;  // summed over the calls (counters: of the last call)
  double energy = 0.0;
  bool simulated() const { return calls > 0; }
  double utilization() const { return stats.utilization(); }
};

struct SimulationTotals {
  std::uint64_t cycles = 0, gb_reads = 0, gb_writes = 0, multiplications = 0;
  double energy = 0.0;
  int simulated_nodes = 0, host_nodes = 0;
};
SimulationTotals totals(const std::vector<NodeSimulation>& nodes);

// The simulation interface of a `sim:` executable (dynamic_cast an Executable to it).
class Simulated {
 public:
  virtual ~Simulated() = default;
  // The graph's nodes in order, as simulated by the last forward.
  virtual const std::vector<NodeSimulation>& node_simulations() const = 0;
  virtual const SimTarget& target() const = 0;
  // Files written by the last forward (when SimOptions::stats_dir is set).
  virtual const std::vector<std::filesystem::path>& written_files() const = 0;
};

// The `sim:PATH` backend; `spec.target` is a .cfg or .toml path.
std::unique_ptr<Executable> compile(const BackendSpec& spec, const graph::Graph& graph,
                                    graph::ParameterSet& params, const CompileOptions& options,
                                    const SimOptions& sim_options = {});

// Zeroes the `ratio` fraction of smallest-magnitude values (ties broken by position): the
// pruning --weight-sparsity applies to every Linear and Conv2d weight.
void prune_by_magnitude(Tensor& weights, double ratio);

// The simulation interface of an executable, or nullptr if it is not a `sim:` one.
const Simulated* simulated(const Executable& executable);

}  // namespace telar::backend::sim
