#pragma once
// What a `sim:` backend string names: one accelerator configuration (`sim:CONFIG.cfg`) or a
// hybrid (`sim:HYBRID.toml`) that maps op classes to accelerators:
//   dense   Linear and Conv2d                        (MAERI, the TPU-like mesh, or SIGMA)
//   sparse  EmbeddingBag as CSR sparse × dense        (MAGMA)
//   pruned  Linear and Conv2d with pruned weights     (SIGMA; --weight-sparsity)
// A class without an accelerator runs on the host. The hybrid file:
//
//   [dense]
//   config = "maeri_256mses_128_bw.cfg"   # relative to the TOML file
//   tiles = "auto"                        # or "auto:energy", "auto:edp"
//   [sparse]
//   config = "magma_128mses_128_bw.cfg"
//   T_N = 4                               # optional fixed SparseDense tile (default: mapper)
//   T_K = 32
//   [pruned]
//   config = "sigma_128mses_128_bw.cfg"
//   [tiles]                               # optional tile files per layer (graph node names)
//   "bot/fc0" = "tiles/bot_fc0.txt"
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "sim/config.hpp"
#include "sim/mapper.hpp"
#include "sim/sparse_workload.hpp"

namespace telar::backend::sim {

struct AcceleratorChoice {
  telar::sim::HardwareConfig hw;
  telar::sim::MapObjective objective = telar::sim::MapObjective::Performance;
  std::optional<telar::sim::SparseDenseTile> sparse_tile;  // sparse class: fixed tile
};

struct SimTarget {
  std::string name;  // the file's stem
  std::optional<AcceleratorChoice> dense, sparse, pruned;
  std::map<std::string, std::filesystem::path> tile_files;  // node name -> STONNE tile file
};

// Reads a `.cfg` (one accelerator, classes by its controller) or a `.toml` hybrid. Errors
// (unreadable files, unknown sections or keys, a controller that cannot run the class) are
// telar::Error naming the file and key.
SimTarget load_target(const std::filesystem::path& path);
// The classes a single configuration serves, by its controller: MAERI and the mesh take dense
// layers, SIGMA dense and pruned ones, MAGMA EmbeddingBags.
SimTarget target_from_config(const telar::sim::HardwareConfig& hw, std::string name);

}  // namespace telar::backend::sim
