#include "sim/config.hpp"

#include "core/enum_names.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/memory.hpp"
#include "core/parse.hpp"
#include "sim/key_value.hpp"

namespace telar::sim {

namespace {

int positive_field(const KeyValueFile& file, const std::string& key, int fallback) {
  auto v = file.get_int(key);
  if (!v) return fallback;
  require(*v > 0 && *v <= (1 << 20), "{}: {}={} must be a positive integer", file.origin(), key,
          *v);
  return static_cast<int>(*v);
}

}  // namespace

bool is_power_of_two(long long v) {
  return v > 0 && (v & (v - 1)) == 0;
}

namespace {

constexpr EnumNames<MultiplierNetwork, MultiplierNetwork::OsMesh> kMultiplierNetworks{
    {"LINEAR", "OS_MESH"}};
constexpr EnumNames<ReduceNetwork, ReduceNetwork::Temporal> kReduceNetworks{
    {"ASNETWORK", "FENETWORK", "TEMPORALRN"}};
constexpr EnumNames<Controller, Controller::TpuOsDense> kControllers{
    {"MAERI_DENSE_WORKLOAD", "SIGMA_SPARSE_GEMM", "MAGMA_SPARSE_DENSE", "TPU_OS_DENSE"}};

// STONNE's spelling in any case, or (where STONNE accepts it) the value's number.
template <typename E, E Last>
E parse_named(const EnumNames<E, Last>& names, std::string_view text, std::string_view what,
              std::string_view kind, bool by_number) {
  const std::string s = to_upper(text);
  if (auto v = names.find(s)) return *v;
  if (by_number && s.size() == 1 && s[0] >= '0' && static_cast<std::size_t>(s[0] - '0') < names.kCount)
    return static_cast<E>(s[0] - '0');
  fail("{}: unknown {} '{}'; use {}", what, kind, text, names.choices());
}

}  // namespace

std::string_view name(MultiplierNetwork v) {
  return kMultiplierNetworks(v);
}
std::string_view name(ReduceNetwork v) {
  return kReduceNetworks(v);
}
std::string_view name(Controller v) {
  return kControllers(v);
}

MultiplierNetwork parse_multiplier_network(std::string_view text, std::string_view what) {
  return parse_named(kMultiplierNetworks, text, what, "multiplier network", true);
}
ReduceNetwork parse_reduce_network(std::string_view text, std::string_view what) {
  return parse_named(kReduceNetworks, text, what, "reduce network", true);
}
Controller parse_controller(std::string_view text, std::string_view what) {
  return parse_named(kControllers, text, what, "memory controller", false);
}

namespace {

// Every key of STONNE's .cfg format (its Config::loadFile): telar reads those of MSNetwork,
// ReduceNetwork and SDMemory; the others (latencies, port widths, buffer capacities) STONNE
// itself does not model, and they change nothing here either.
const std::vector<std::string>& stonne_config_keys() {
  static const std::vector<std::string> keys = {
      "print_stats_enabled", "storage_type", "DSNetwork.n_switches_traversed_by_cycle",
      "DSwitch.latency", "DSwitch.input_ports", "DSwitch.output_ports", "DSwitch.port_width",
      "MSNetwork.ms_size", "MSNetwork.ms_rows", "MSNetwork.ms_cols", "MSNetwork.type",
      "MSwitch.latency", "MSwitch.input_ports", "MSwitch.output_ports",
      "MSwitch.forwarding_ports", "MSwitch.port_width", "MSwitch.buffers_capacity",
      "ReduceNetwork.type", "ReduceNetwork.accumulation_buffer_enabled",
      "ASwitch.buffers_capacity", "ASwitch.input_ports", "ASwitch.output_ports",
      "ASwitch.forwarding_ports", "ASwitch.port_width", "ASwitch.latency",
      "LookUpTable.latency", "LookUpTable.port_width", "SDMemory.dn_bw", "SDMemory.rn_bw",
      "SDMemory.port_width", "SDMemory.controller_type"};
  return keys;
}

}  // namespace

HardwareConfig parse_config(std::string_view text, std::string_view origin) {
  const KeyValueFile file = KeyValueFile::parse(text, origin);
  require(!file.empty(),
          "{}: no settings in it; a hardware .cfg sets [MSNetwork] ms_size, [ReduceNetwork] "
          "type and [SDMemory] dn_bw, rn_bw and controller_type (see configs/)",
          origin);
  file.require_known(stonne_config_keys(), "a hardware .cfg");
  HardwareConfig c;
  const std::string where(origin);
  if (auto t = file.get_string("MSNetwork.type"))
    c.mn = parse_multiplier_network(*t, where + ": [MSNetwork] type");
  c.ms_size = positive_field(file, "MSNetwork.ms_size", c.ms_size);
  c.ms_rows = positive_field(file, "MSNetwork.ms_rows", c.ms_rows);
  c.ms_cols = positive_field(file, "MSNetwork.ms_cols", c.ms_cols);
  if (auto t = file.get_string("ReduceNetwork.type"))
    c.rn = parse_reduce_network(*t, where + ": [ReduceNetwork] type");
  if (auto v = file.get_int("ReduceNetwork.accumulation_buffer_enabled")) {
    require(*v == 0 || *v == 1, "{}: accumulation_buffer_enabled={} must be 0 or 1", origin, *v);
    c.accumulation_buffer = *v != 0;
  }
  c.dn_bw = positive_field(file, "SDMemory.dn_bw", c.dn_bw);
  c.rn_bw = positive_field(file, "SDMemory.rn_bw", c.rn_bw);
  if (auto t = file.get_string("SDMemory.controller_type"))
    c.controller = parse_controller(*t, where + ": [SDMemory] controller_type");
  return c;
}

HardwareConfig load_config(const std::filesystem::path& path) {
  require(!is_dir(path),  // a name the file system refuses: read_file says why
          "'{}' is a directory; give a hardware .cfg file (e.g. configs/maeri_128mses_128_bw.cfg)",
          path.string());
  std::error_code ec;
  require(std::filesystem::exists(path, ec),
          "no hardware configuration '{}'; give a .cfg file that exists (e.g. "
          "configs/maeri_128mses_128_bw.cfg)",
          path.string());
  HardwareConfig c = parse_config(read_file(path), path.string());
  c.name = path.stem().string();
  return c;
}

std::string format_config(const HardwareConfig& c) {
  std::string out = "[MSNetwork]\n";
  if (c.mn == MultiplierNetwork::OsMesh) {
    out += "type=\"OS_MESH\"\n";
    out += fmt::format("ms_rows={}\nms_cols={}\n", c.ms_rows, c.ms_cols);
  } else {
    out += fmt::format("ms_size={}\n", c.ms_size);
  }
  out += "[ReduceNetwork]\n";
  out += fmt::format("type=\"{}\"\n", name(c.rn));
  if (c.accumulation_buffer) out += "accumulation_buffer_enabled=1\n";
  out += "[SDMemory]\n";
  out += fmt::format("dn_bw={}\nrn_bw={}\n", c.dn_bw, c.rn_bw);
  out += fmt::format("controller_type=\"{}\"\n", name(c.controller));
  return out;
}

namespace {

// Resident memory of the simulated fabric per multiplier, measured with `telar sim` of a small
// operation at growing array sizes (peak RSS, release build): about 3.0 KB per LINEAR
// multiplier (16K to 256K of them) and 1.7 KB per mesh processing element (256x256 to
// 1024x1024). The engines index multipliers with 32-bit integers: no array exceeds
// kMaxMultipliers.
constexpr std::int64_t kLinearBytesPerMultiplier = 3100;
constexpr std::int64_t kMeshBytesPerElement = 1800;
constexpr std::int64_t kMaxMultipliers = std::int64_t{1} << 26;

}  // namespace

std::int64_t fabric_memory_bytes(const HardwareConfig& c) {
  if (c.mn == MultiplierNetwork::OsMesh)
    return std::int64_t{c.ms_rows} * c.ms_cols * kMeshBytesPerElement;
  return std::int64_t{c.ms_size} * kLinearBytesPerMultiplier;
}

void check_fits_memory(const HardwareConfig& c, std::optional<std::int64_t> available) {
  const std::int64_t multipliers = c.mn == MultiplierNetwork::OsMesh
                                       ? std::int64_t{c.ms_rows} * c.ms_cols
                                       : std::int64_t{c.ms_size};
  require(multipliers <= kMaxMultipliers,
          "{} multipliers ({}) are more than telar simulates ({}); use a smaller array",
          multipliers,
          c.mn == MultiplierNetwork::OsMesh ? fmt::format("ms_rows={} x ms_cols={}", c.ms_rows,
                                                          c.ms_cols)
                                            : fmt::format("ms_size={}", c.ms_size),
          kMaxMultipliers);
  const std::int64_t need = fabric_memory_bytes(c);
  if (available && need > *available)
    fail("simulating {} multipliers needs about {:.1f} GB, more than the {:.1f} GB this machine "
         "has available; use a smaller array",
         multipliers, static_cast<double>(need) / 1e9, static_cast<double>(*available) / 1e9);
}

void validate(const HardwareConfig& c) {
  require(is_power_of_two(c.dn_bw), "dn_bw={} must be a power of two (Global Buffer read ports)",
          c.dn_bw);
  require(is_power_of_two(c.rn_bw), "rn_bw={} must be a power of two (Global Buffer write ports)",
          c.rn_bw);
  if (c.mn == MultiplierNetwork::Linear) {
    require(is_power_of_two(c.ms_size) && c.ms_size >= 2,
            "ms_size={} must be a power of two >= 2 (the distribution and reduction trees are "
            "binary)",
            c.ms_size);
    require(c.dn_bw <= c.ms_size,
            "dn_bw={} exceeds ms_size={}: each read port feeds ms_size/dn_bw multipliers; use "
            "dn_bw <= {}",
            c.dn_bw, c.ms_size, c.ms_size);
    require(c.rn != ReduceNetwork::Temporal,
            "a LINEAR multiplier network needs rn_type ASNETWORK or FENETWORK (TEMPORALRN belongs "
            "to the OS_MESH array)");
  } else {
    require(c.ms_rows > 0 && c.ms_cols > 0,
            "an OS_MESH multiplier network needs ms_rows and ms_cols (e.g. -ms_rows=16 "
            "-ms_cols=16)");
    require(is_power_of_two(c.ms_rows) && is_power_of_two(c.ms_cols),
            "ms_rows={} and ms_cols={} must be powers of two", c.ms_rows, c.ms_cols);
    const int edge = c.ms_rows + c.ms_cols;
    require(c.dn_bw <= edge && edge % c.dn_bw == 0 && is_power_of_two(edge / c.dn_bw),
            "dn_bw={} must divide ms_rows+ms_cols={} into power-of-two groups (one read port "
            "feeds (ms_rows+ms_cols)/dn_bw edge multipliers)",
            c.dn_bw, edge);
    require(c.rn == ReduceNetwork::Temporal,
            "an OS_MESH multiplier network needs rn_type=TEMPORALRN (its accumulators sit in the "
            "processing elements)");
  }
  check_fits_memory(c, available_memory_bytes());
  if (c.controller == Controller::TpuOsDense)
    require(c.mn == MultiplierNetwork::OsMesh,
            "controller TPU_OS_DENSE drives an OS_MESH multiplier network; add -mn_type=OS_MESH "
            "-ms_rows=R -ms_cols=C -rn_type=TEMPORALRN");
  if (c.mn == MultiplierNetwork::OsMesh)
    require(c.controller == Controller::TpuOsDense,
            "an OS_MESH multiplier network is driven by controller TPU_OS_DENSE; add "
            "-mem_ctrl=TPU_OS_DENSE");
}

}  // namespace telar::sim
