#include "sim/stonne_args.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

#include "core/error.hpp"
#include "core/parse.hpp"

namespace telar::sim {

namespace {

// The layer name goes into the stats and counters file names (output_stats_layer_NAME_
// architecture_..., about 100 characters besides it), which the file system caps at 255 bytes.
constexpr std::size_t kMaxLayerName = 128;

std::string checked_layer_name(const std::string& value) {
  require(!value.empty() && value.find('/') == std::string::npos,
          "-layer_name='{}' must be a non-empty name without '/'", value);
  require(value.size() <= kMaxLayerName,
          "-layer_name='{}...' has {} characters; it names the stats files, so give at most {}",
          value.substr(0, 20), value.size(), kMaxLayerName);
  return value;
}

int flag_int(const std::string& name, const std::string& value) {
  const long long v = parse_int(value, name);
  require(v >= 0 && v <= (1LL << 30), "{}={} is out of range", name, value);
  return static_cast<int>(v);
}

int positive(const std::string& name, const std::string& value) {
  const int v = flag_int(name, value);
  require(v > 0, "{}={} must be positive", name, value);
  return v;
}

int power_of_two(const std::string& name, const std::string& value) {
  const int v = positive(name, value);
  require(is_power_of_two(v), "{}={} must be a power of two", name, value);
  return v;
}

std::string hardware_flags(const HardwareConfig& hw) {
  std::string s;
  if (hw.mn == MultiplierNetwork::OsMesh)
    s += fmt::format(" -ms_rows={} -ms_cols={} -mn_type=OS_MESH", hw.ms_rows, hw.ms_cols);
  else
    s += fmt::format(" -num_ms={}", hw.ms_size);
  s += fmt::format(" -dn_bw={} -rn_bw={}", hw.dn_bw, hw.rn_bw);
  if (hw.rn != ReduceNetwork::Art) s += fmt::format(" -rn_type={}", name(hw.rn));
  if (hw.controller != Controller::MaeriDense)
    s += fmt::format(" -mem_ctrl={}", name(hw.controller));
  if (hw.accumulation_buffer) s += " -accumulation_buffer=1";
  return s;
}

// "-name=value" (the value maybe in double quotes) -> {"-name", "value"}.
std::pair<std::string, std::string> split_parameter(const std::string& arg) {
  const std::size_t eq = arg.find('=');
  if (eq == std::string::npos || eq == 0 || arg[0] != '-')
    fail("'{}' is not a STONNE parameter; parameters look like -name=value", arg);
  std::string value = arg.substr(eq + 1);
  if (value.size() >= 2 && value.front() == '"' && value.back() == '"')
    value = value.substr(1, value.size() - 2);
  return {arg.substr(0, eq), value};
}

// Fails for a parameter `command` does not have, suggesting the closest of its own parameters
// and those every command has (the hardware's, -print_stats, -layer_name).
[[noreturn]] void unknown_parameter(const std::string& name, const std::string& command,
                                    const std::vector<std::string>& own) {
  std::vector<std::string> known = {"-num_ms",
                                    "-dn_bw",
                                    "-rn_bw",
                                    "-rn_type",
                                    "-mn_type",
                                    "-mem_ctrl",
                                    "-accumulation_buffer",
                                    "-ms_rows",
                                    "-ms_cols",
                                    "-print_stats",
                                    "-layer_name"};
  known.insert(known.end(), own.begin(), own.end());
  const std::string near = closest_match(name, known);
  fail("parameter {} does not exist for {}{}", name, command,
       near.empty() ? "" : fmt::format(" (did you mean {}?)", near));
}

// Hardware flags common to every operation; returns false for other flags.
bool parse_hardware_flag(StonneCommand& cmd, const std::string& name, const std::string& value) {
  // The sizes, each a power of two.
  static constexpr std::pair<std::string_view, int HardwareConfig::*> kSizes[] = {
      {"-num_ms", &HardwareConfig::ms_size},
      {"-dn_bw", &HardwareConfig::dn_bw},
      {"-rn_bw", &HardwareConfig::rn_bw},
      {"-ms_rows", &HardwareConfig::ms_rows},
      {"-ms_cols", &HardwareConfig::ms_cols}};
  HardwareConfig& hw = cmd.hw;
  const auto size = std::find_if(std::begin(kSizes), std::end(kSizes),
                                 [&](const auto& flag) { return flag.first == name; });
  if (size != std::end(kSizes)) {
    hw.*(size->second) = power_of_two(name, value);
  } else if (name == "-rn_type") {
    hw.rn = parse_reduce_network(value, name);
  } else if (name == "-mn_type") {
    hw.mn = parse_multiplier_network(value, name);
  } else if (name == "-mem_ctrl") {
    hw.controller = parse_controller(value, name);
  } else if (name == "-accumulation_buffer") {
    hw.accumulation_buffer = parse_bool(value, name);
  } else {
    return false;
  }
  cmd.hw_flags.insert(name);
  return true;
}

int percent(const std::string& name, const std::string& value) {
  const long long v = parse_int(value, name);
  require(v >= 0 && v <= 100, "{}={} is a percentage of zeros and must be between 0 and 100", name,
          value);
  return static_cast<int>(v);
}

StonneCommand parse_sparse_args(const std::vector<std::string>& args) {
  StonneCommand cmd;
  const bool dense_kn = args[0] == "-SparseDense";
  cmd.kind = dense_kn ? CommandKind::SparseDense : CommandKind::SparseGemm;
  SparseArgs& a = cmd.sparse;
  // STONNE's defaults for these commands.
  if (dense_kn) {
    a.layer_name = "SparseDenseTestLayer";
    a.M = 32, a.N = 16, a.K = 32, a.mk_sparsity = 70;
    a.tile = SparseDenseTile{4, 8};
    cmd.hw.controller = Controller::MagmaSparseDense;
    cmd.hw.accumulation_buffer = true;
  } else {
    a.layer_name = "GEMMTestLayer";
    a.M = 4, a.N = 4, a.K = 8, a.mk_sparsity = 20, a.kn_sparsity = 20;
    cmd.hw.controller = Controller::SigmaSparseGemm;
  }
  const std::vector<std::string> own =
      dense_kn ? std::vector<std::string>{"-M",
                                          "-N",
                                          "-K",
                                          "-MK_sparsity",
                                          "-T_N",
                                          "-T_K",
                                          "-generate_tile",
                                          "-generator"}
               : std::vector<std::string>{"-M",           "-N",        "-K",       "-MK_sparsity",
                                          "-KN_sparsity", "-dataflow", "-optimize"};
  for (std::size_t i = 1; i < args.size(); ++i) {
    const auto [name, value] = split_parameter(args[i]);
    if (parse_hardware_flag(cmd, name, value)) continue;
    if (name == "-print_stats") {
      cmd.print_stats = parse_bool(value, name);
    } else if (name == "-layer_name") {
      a.layer_name = checked_layer_name(value);
    } else if (name == "-M" || name == "-N" || name == "-K") {
      const int v = positive(name, value);
      (name == "-M" ? a.M : name == "-N" ? a.N : a.K) = v;
      a.dims_given.insert(name);
    } else if (name == "-MK_sparsity") {
      a.mk_sparsity = percent(name, value);
    } else if (name == "-KN_sparsity" && !dense_kn) {
      a.kn_sparsity = percent(name, value);
    } else if (name == "-dataflow" && !dense_kn) {
      a.dataflow = parse_sparse_dataflow(value, name);
    } else if (name == "-optimize" && !dense_kn) {
      require(!parse_bool(value, name),
              "-optimize=1 (STONNE's reordering of the stationary rows) is not modelled; order "
              "the rows yourself and give the matrix as a Matrix Market file (--mk)");
    } else if ((name == "-T_N" || name == "-T_K") && dense_kn) {
      (name == "-T_N" ? a.tile.T_N : a.tile.T_K) = positive(name, value);
      cmd.tile_given = true;
    } else if (name == "-generate_tile" && dense_kn) {
      if (value != "0" && value != "none") cmd.generate_tile = value == "1" ? "performance" : value;
    } else if (name == "-generator" && dense_kn) {
      // STONNE's choice of mapper; telar has one
    } else {
      unknown_parameter(name, args[0], own);
    }
  }
  cmd.hw.name = "cli";
  return cmd;
}

}  // namespace

StonneCommand parse_stonne_args(const std::vector<std::string>& args) {
  require(!args.empty(),
          "missing the operation: give -CONV, -FC, -DenseGEMM, -SparseGEMM or -SparseDense");
  StonneCommand cmd;
  const std::string& what = args[0];
  OpKind kind;
  if (what == "-CONV") {
    kind = OpKind::Conv;
  } else if (what == "-FC") {
    kind = OpKind::Fc;
  } else if (what == "-DenseGEMM") {
    kind = OpKind::DenseGemm;
  } else if (what == "-SparseGEMM" || what == "-SparseDense") {
    return parse_sparse_args(args);
  } else {
    const std::string near =
        closest_match(what, {"-CONV", "-FC", "-DenseGEMM", "-SparseGEMM", "-SparseDense"});
    fail(
        "unknown operation '{}'{}; give -CONV, -FC, -DenseGEMM, -SparseGEMM or -SparseDense "
        "first",
        what, near.empty() ? "" : fmt::format(" (did you mean {}?)", near));
  }
  // STONNE's defaults.
  int R = 1, S = 3, C = 1, K = 1, G = 1, N = 1, X = 1, Y = 3, strides = 1;
  int M = 1, gK = 3, gN = 1, T_M = 1, T_N = 1, T_K = 1;
  Tile conv_tile{1, 3, 1, 1, 1, 1, 1, 1};
  std::string layer_name = "TestLayer";
  // The operation's own flags: each a positive integer, some of them the tile's.
  struct OwnFlag {
    std::string name;
    int* field;
    bool tile;
  };
  const std::vector<OwnFlag> own =
      kind == OpKind::Conv
          ? std::vector<OwnFlag>{{"-R", &R, false},
                                 {"-S", &S, false},
                                 {"-C", &C, false},
                                 {"-K", &K, false},
                                 {"-G", &G, false},
                                 {"-N", &N, false},
                                 {"-X", &X, false},
                                 {"-Y", &Y, false},
                                 {"-strides", &strides, false},
                                 {"-T_R", &conv_tile.T_R, true},
                                 {"-T_S", &conv_tile.T_S, true},
                                 {"-T_C", &conv_tile.T_C, true},
                                 {"-T_K", &conv_tile.T_K, true},
                                 {"-T_G", &conv_tile.T_G, true},
                                 {"-T_N", &conv_tile.T_N, true},
                                 {"-T_X_", &conv_tile.T_X, true},
                                 {"-T_Y_", &conv_tile.T_Y, true}}
          : std::vector<OwnFlag>{{"-M", &M, false},    {"-N", &gN, false},   {"-K", &gK, false},
                                 {"-T_M", &T_M, true}, {"-T_N", &T_N, true}, {"-T_K", &T_K, true}};
  for (std::size_t i = 1; i < args.size(); ++i) {
    const auto [name, value] = split_parameter(args[i]);
    if (parse_hardware_flag(cmd, name, value)) continue;
    if (name == "-print_stats") {
      cmd.print_stats = parse_bool(value, name);
      continue;
    }
    if (name == "-layer_name") {
      layer_name = checked_layer_name(value);
      continue;
    }
    if (name == "-generate_tile") {
      if (value != "0" && value != "none") cmd.generate_tile = value == "1" ? "performance" : value;
      continue;
    }
    if (name == "-generator") continue;  // STONNE's choice of mapper; telar has one
    const auto flag = std::find_if(own.begin(), own.end(),
                                   [&name = name](const OwnFlag& f) { return f.name == name; });
    if (flag == own.end()) {
      std::vector<std::string> names = {"-generate_tile", "-generator"};
      for (const OwnFlag& f : own) names.push_back(f.name);
      unknown_parameter(name, what, names);
    }
    *flag->field = positive(name, value);
    if (flag->tile) cmd.tile_given = true;
  }
  if (kind == OpKind::Conv) {
    cmd.op = make_conv(R, S, C, K, G, N, X, Y, strides);
    cmd.tile = conv_tile;
  } else {
    cmd.op = make_gemm(kind, M, gN, gK);
    cmd.tile = make_gemm_tile(T_M, T_N, T_K);
  }
  cmd.op.layer_name = layer_name;
  cmd.hw.name = "cli";
  return cmd;
}

HardwareConfig merge_hardware(const HardwareConfig& base, const StonneCommand& cmd) {
  HardwareConfig hw = base;
  const HardwareConfig& c = cmd.hw;
  auto given = [&](const char* flag) { return cmd.hw_flags.count(flag) > 0; };
  if (given("-num_ms")) hw.ms_size = c.ms_size;
  if (given("-dn_bw")) hw.dn_bw = c.dn_bw;
  if (given("-rn_bw")) hw.rn_bw = c.rn_bw;
  if (given("-ms_rows")) hw.ms_rows = c.ms_rows;
  if (given("-ms_cols")) hw.ms_cols = c.ms_cols;
  if (given("-rn_type")) hw.rn = c.rn;
  if (given("-mn_type")) hw.mn = c.mn;
  if (given("-mem_ctrl")) hw.controller = c.controller;
  if (given("-accumulation_buffer")) hw.accumulation_buffer = c.accumulation_buffer;
  return hw;
}

std::string stonne_command_line(const HardwareConfig& hw, const SparseArgs& a, CommandKind kind) {
  if (kind == CommandKind::SparseDense)
    return fmt::format("-SparseDense -M={} -N={} -K={} -MK_sparsity={} -T_N={} -T_K={}", a.M, a.N,
                       a.K, a.mk_sparsity, a.tile.T_N, a.tile.T_K) +
           hardware_flags(hw);
  return fmt::format("-SparseGEMM -M={} -N={} -K={} -MK_sparsity={} -KN_sparsity={} -dataflow={}",
                     a.M, a.N, a.K, a.mk_sparsity, a.kn_sparsity, name(a.dataflow)) +
         hardware_flags(hw);
}

std::string stonne_command_line(const HardwareConfig& hw, const DenseOp& op, const Tile& t) {
  std::string s;
  if (op.kind == OpKind::Conv) {
    s = fmt::format(
        "-CONV -R={} -S={} -C={} -K={} -G={} -N={} -X={} -Y={} -strides={} -T_R={} -T_S={} "
        "-T_C={} -T_K={} -T_G={} -T_N={} -T_X_={} -T_Y_={}",
        op.R, op.S, op.C, op.K, op.G, op.N, op.X, op.Y, op.stride, t.T_R, t.T_S, t.T_C, t.T_K,
        t.T_G, t.T_N, t.T_X, t.T_Y);
  } else {
    s = fmt::format("-{} -M={} -N={} -K={} -T_M={} -T_N={} -T_K={}", name(op.kind), op.gemm_M,
                    op.gemm_N, op.gemm_K, t.T_X, t.T_K, t.T_S);
  }
  return s + hardware_flags(hw);
}

}  // namespace telar::sim
