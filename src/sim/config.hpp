#pragma once
// The accelerator's hardware configuration, in STONNE's taxonomy and STONNE's `.cfg` format
// (TOML sections [MSNetwork], [ReduceNetwork], [SDMemory]). Defaults are STONNE's.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace telar::sim {

enum class MultiplierNetwork { Linear, OsMesh };  // LINEAR (MAERI, SIGMA), OS_MESH (TPU)
enum class ReduceNetwork { Art, Fen, Temporal };  // ASNETWORK, FENETWORK, TEMPORALRN
enum class Controller { MaeriDense, SigmaSparseGemm, MagmaSparseDense, TpuOsDense };

std::string_view name(MultiplierNetwork v);  // STONNE spelling: "LINEAR", "OS_MESH"
std::string_view name(ReduceNetwork v);      // "ASNETWORK", "FENETWORK", "TEMPORALRN"
std::string_view name(Controller v);         // "MAERI_DENSE_WORKLOAD", ...
// Parse STONNE spellings (case-insensitive); also the CLI's numeric forms (0/1/2) where STONNE
// accepts them. `what` names the option in the error.
MultiplierNetwork parse_multiplier_network(std::string_view text, std::string_view what);
ReduceNetwork parse_reduce_network(std::string_view text, std::string_view what);
Controller parse_controller(std::string_view text, std::string_view what);

struct HardwareConfig {
  std::string name = "stonne-default";  // file stem or "cli"
  MultiplierNetwork mn = MultiplierNetwork::Linear;
  int ms_size = 64;              // multiplier switches (LINEAR)
  int ms_rows = 0, ms_cols = 0;  // mesh shape (OS_MESH)
  ReduceNetwork rn = ReduceNetwork::Art;
  bool accumulation_buffer = false;
  int dn_bw = 4;  // Global Buffer read ports (distribution network bandwidth)
  int rn_bw = 4;  // Global Buffer write ports (collection bus lines)
  Controller controller = Controller::MaeriDense;

  int multipliers() const { return mn == MultiplierNetwork::OsMesh ? ms_rows * ms_cols : ms_size; }
};

// Reads a STONNE `.cfg` file. Unknown sections/keys that STONNE also ignores (DSwitch latency
// and the like) are accepted; bad values raise telar::Error naming the file and key.
HardwareConfig load_config(const std::filesystem::path& path);
HardwareConfig parse_config(std::string_view text, std::string_view origin);
// The `.cfg` text STONNE reads (round-trips through parse_config).
std::string format_config(const HardwareConfig& config);

// Checks the structural constraints (powers of two, bandwidths within the array, network
// combinations the simulator models); throws telar::Error naming the constraint.
void validate(const HardwareConfig& config);  // also check_fits_memory(config, MemAvailable)

// The simulated fabric's resident memory, estimated from measurements per multiplier.
std::int64_t fabric_memory_bytes(const HardwareConfig& config);
// Refuses (telar::Error, one line) an array larger than the engines index or whose fabric
// would need more than `available` bytes.
void check_fits_memory(const HardwareConfig& config, std::optional<std::int64_t> available);

bool is_power_of_two(long long v);

}  // namespace telar::sim
