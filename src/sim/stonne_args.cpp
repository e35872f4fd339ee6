#include "sim/stonne_args.hpp"

#include <map>

#include "core/error.hpp"
#include "core/parse.hpp"

namespace telar::sim {

namespace {

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

}  // namespace

StonneCommand parse_stonne_args(const std::vector<std::string>& args) {
  require(!args.empty(), "missing the operation: give -CONV, -FC or -DenseGEMM");
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
    fail(
        "{} needs the sparse controllers (SIGMA_SPARSE_GEMM, MAGMA_SPARSE_DENSE), which this "
        "version does not simulate yet; dense operations are -CONV, -FC and -DenseGEMM",
        what);
  } else {
    const std::string near = closest_match(what, {"-CONV", "-FC", "-DenseGEMM"});
    fail("unknown operation '{}'{}; give -CONV, -FC or -DenseGEMM first", what,
         near.empty() ? "" : fmt::format(" (did you mean {}?)", near));
  }
  // STONNE's defaults.
  int R = 1, S = 3, C = 1, K = 1, G = 1, N = 1, X = 1, Y = 3, strides = 1;
  int M = 1, gK = 3, gN = 1, T_M = 1, T_N = 1, T_K = 1;
  Tile conv_tile{1, 3, 1, 1, 1, 1, 1, 1};
  std::string layer_name = "TestLayer";
  std::vector<std::string> known_hw = {"-num_ms",
                                       "-dn_bw",
                                       "-rn_bw",
                                       "-rn_type",
                                       "-mn_type",
                                       "-mem_ctrl",
                                       "-accumulation_buffer",
                                       "-ms_rows",
                                       "-ms_cols",
                                       "-print_stats",
                                       "-layer_name",
                                       "-generate_tile",
                                       "-generator"};
  std::vector<std::string> known_dims =
      kind == OpKind::Conv
          ? std::vector<std::string>{"-R",   "-S",   "-C",       "-K",    "-G",   "-N",
                                     "-X",   "-Y",   "-strides", "-T_R",  "-T_S", "-T_C",
                                     "-T_K", "-T_G", "-T_N",     "-T_X_", "-T_Y_"}
          : std::vector<std::string>{"-M", "-N", "-K", "-T_M", "-T_N", "-T_K"};
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& arg = args[i];
    const std::size_t eq = arg.find('=');
    if (eq == std::string::npos || eq == 0 || arg[0] != '-') {
      fail("'{}' is not a STONNE parameter; parameters look like -name=value", arg);
    }
    const std::string name = arg.substr(0, eq);
    std::string value = arg.substr(eq + 1);
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"')
      value = value.substr(1, value.size() - 2);
    HardwareConfig& hw = cmd.hw;
    bool hw_flag = true;
    if (name == "-num_ms") {
      hw.ms_size = power_of_two(name, value);
    } else if (name == "-dn_bw") {
      hw.dn_bw = power_of_two(name, value);
    } else if (name == "-rn_bw") {
      hw.rn_bw = power_of_two(name, value);
    } else if (name == "-ms_rows") {
      hw.ms_rows = power_of_two(name, value);
    } else if (name == "-ms_cols") {
      hw.ms_cols = power_of_two(name, value);
    } else if (name == "-rn_type") {
      hw.rn = parse_reduce_network(value, name);
    } else if (name == "-mn_type") {
      hw.mn = parse_multiplier_network(value, name);
    } else if (name == "-mem_ctrl") {
      hw.controller = parse_controller(value, name);
    } else if (name == "-accumulation_buffer") {
      hw.accumulation_buffer = parse_bool(value, name);
    } else {
      hw_flag = false;
    }
    if (hw_flag) {
      cmd.hw_flags.insert(name);
      continue;
    }
    if (name == "-print_stats") {
      cmd.print_stats = parse_bool(value, name);
      continue;
    }
    if (name == "-layer_name") {
      require(!value.empty() && value.find('/') == std::string::npos,
              "-layer_name='{}' must be a non-empty name without '/'", value);
      layer_name = value;
      continue;
    }
    if (name == "-generate_tile") {
      if (value != "0" && value != "none") cmd.generate_tile = value == "1" ? "performance" : value;
      continue;
    }
    if (name == "-generator") continue;  // STONNE's choice of mapper; telar has one
    bool known = false;
    for (const std::string& k : known_dims) known = known || k == name;
    if (!known) {
      std::vector<std::string> all = known_hw;
      all.insert(all.end(), known_dims.begin(), known_dims.end());
      const std::string near = closest_match(name, all);
      fail("parameter {} does not exist for {}{}", name, what,
           near.empty() ? "" : fmt::format(" (did you mean {}?)", near));
    }
    if (kind == OpKind::Conv) {
      static const std::map<std::string, int Tile::*> tile_fields = {
          {"-T_R", &Tile::T_R}, {"-T_S", &Tile::T_S}, {"-T_C", &Tile::T_C},  {"-T_K", &Tile::T_K},
          {"-T_G", &Tile::T_G}, {"-T_N", &Tile::T_N}, {"-T_X_", &Tile::T_X}, {"-T_Y_", &Tile::T_Y}};
      if (auto it = tile_fields.find(name); it != tile_fields.end()) {
        conv_tile.*(it->second) = positive(name, value);
        cmd.tile_given = true;
        continue;
      }
      const int v = positive(name, value);
      if (name == "-R")
        R = v;
      else if (name == "-S")
        S = v;
      else if (name == "-C")
        C = v;
      else if (name == "-K")
        K = v;
      else if (name == "-G")
        G = v;
      else if (name == "-N")
        N = v;
      else if (name == "-X")
        X = v;
      else if (name == "-Y")
        Y = v;
      else if (name == "-strides")
        strides = v;
    } else {
      const int v = positive(name, value);
      if (name == "-M")
        M = v;
      else if (name == "-N")
        gN = v;
      else if (name == "-K")
        gK = v;
      else {
        cmd.tile_given = true;
        if (name == "-T_M")
          T_M = v;
        else if (name == "-T_N")
          T_N = v;
        else if (name == "-T_K")
          T_K = v;
      }
    }
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

}  // namespace telar::sim
