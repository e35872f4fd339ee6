#include "sim/workload.hpp"

#include "core/enum_names.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "sim/key_value.hpp"
#include "sim/mapper.hpp"

namespace telar::sim {

namespace {
int ceil_div(int a, int b) {
  return (a + b - 1) / b;
}
}  // namespace

constexpr EnumNames<OpKind, OpKind::DenseGemm> kOpKinds{{"CONV", "FC", "DenseGEMM"}};

std::string_view name(OpKind kind) {
  return kOpKinds(kind);
}

long long DenseOp::macs() const {
  return 1LL * N * out_x() * out_y() * K * R * S * c_per_group();
}
long long DenseOp::input_elements() const {
  return 1LL * N * X * Y * C;
}
long long DenseOp::weight_elements() const {
  return 1LL * R * S * c_per_group() * K;
}
long long DenseOp::output_elements() const {
  return 1LL * N * out_x() * out_y() * K;
}

DenseOp make_conv(int R, int S, int C, int K, int G, int N, int X, int Y, int stride) {
  DenseOp op;
  op.kind = OpKind::Conv;
  op.R = R, op.S = S, op.C = C, op.K = K, op.G = G, op.N = N, op.X = X, op.Y = Y;
  op.stride = stride;
  return op;
}

DenseOp make_gemm(OpKind kind, int M, int N, int K) {
  DenseOp op;
  op.kind = kind;
  op.R = 1, op.S = K, op.C = 1, op.K = N, op.G = 1, op.N = 1, op.X = M, op.Y = K, op.stride = 1;
  op.gemm_M = M, op.gemm_N = N, op.gemm_K = K;
  return op;
}

void validate(const DenseOp& op) {
  const bool gemm = op.kind != OpKind::Conv;
  if (gemm) {
    require(op.gemm_M > 0 && op.gemm_N > 0 && op.gemm_K > 0,
            "{}: M={}, N={}, K={} must all be positive", name(op.kind), op.gemm_M, op.gemm_N,
            op.gemm_K);
    return;
  }
  require(op.R > 0 && op.S > 0 && op.C > 0 && op.K > 0 && op.G > 0 && op.N > 0 && op.X > 0 &&
              op.Y > 0 && op.stride > 0,
          "CONV: R, S, C, K, G, N, X, Y and strides must all be positive");
  require(op.C % op.G == 0, "CONV: C={} is not a multiple of G={} (each group takes C/G channels)",
          op.C, op.G);
  require(op.K % op.G == 0, "CONV: K={} is not a multiple of G={} (each group makes K/G filters)",
          op.K, op.G);
  require(op.X >= op.R && op.Y >= op.S,
          "CONV: the {}x{} filter does not fit the {}x{} input (need X >= R and Y >= S)", op.R,
          op.S, op.X, op.Y);
}

Tile make_gemm_tile(int T_M, int T_N, int T_K) {
  Tile t;
  t.T_S = T_K;
  t.T_K = T_N;
  t.T_X = T_M;
  return t;
}

std::string describe(const Tile& t, OpKind kind) {
  if (kind != OpKind::Conv) return fmt::format("T_M={} T_N={} T_K={}", t.T_X, t.T_K, t.T_S);
  return fmt::format("T_R={} T_S={} T_C={} T_K={} T_G={} T_N={} T_X'={} T_Y'={}", t.T_R, t.T_S,
                     t.T_C, t.T_K, t.T_G, t.T_N, t.T_X, t.T_Y);
}

TileGeometry tile_geometry(const HardwareConfig& hw, const DenseOp& op, const Tile& t) {
  TileGeometry g;
  g.iter_R = ceil_div(op.R, t.T_R);
  g.iter_S = ceil_div(op.S, t.T_S);
  g.iter_C = ceil_div(op.c_per_group(), t.T_C);
  g.iter_K = ceil_div(op.k_per_group(), t.T_K);
  g.iter_G = ceil_div(op.G, t.T_G);
  g.iter_N = ceil_div(op.N, t.T_N);
  g.iter_X = ceil_div(op.out_x(), t.T_X);
  g.iter_Y = ceil_div(op.out_y(), t.T_Y);
  g.n_folding = g.iter_R * g.iter_S * g.iter_C;
  g.folding = g.n_folding > 1 && !hw.accumulation_buffer && hw.rn != ReduceNetwork::Fen &&
              hw.mn == MultiplierNetwork::Linear;
  g.vn_size = t.T_R * t.T_S * t.T_C + (g.folding ? 1 : 0);
  g.num_vns = t.T_K * t.T_G * t.T_N * t.T_X * t.T_Y;
  return g;
}

std::string tile_violation(const HardwareConfig& hw, const DenseOp& op, const Tile& t) {
  if (t.T_R < 1 || t.T_S < 1 || t.T_C < 1 || t.T_K < 1 || t.T_G < 1 || t.T_N < 1 || t.T_X < 1 ||
      t.T_Y < 1)
    return "every tile dimension must be at least 1";
  if (t.T_R > op.R || t.T_S > op.S)
    return fmt::format(
        "the tile's {}x{} window is larger than the {}x{} filter (T_R <= R, T_S <= S)", t.T_R,
        t.T_S, op.R, op.S);
  if (op.G % t.T_G != 0)
    return fmt::format("T_G={} must divide G={} (the controller does not pad groups)", t.T_G, op.G);
  if (op.N % t.T_N != 0)
    return fmt::format("T_N={} must divide N={} (the controller does not pad the batch)", t.T_N,
                       op.N);
  const long long product = 1LL * t.T_R * t.T_S * t.T_C * t.T_K * t.T_G * t.T_N * t.T_X * t.T_Y;
  if (hw.mn == MultiplierNetwork::OsMesh) {
    if (product > 1LL * hw.ms_rows * hw.ms_cols)
      return fmt::format("the tile needs {} processing elements but the mesh has {}x{}={}", product,
                         hw.ms_rows, hw.ms_cols, hw.ms_rows * hw.ms_cols);
    if (t.T_K > hw.ms_cols)
      return fmt::format("T_N={} exceeds ms_cols={} (one output column per mesh column)", t.T_K,
                         hw.ms_cols);
    if (1LL * t.T_X * t.T_Y > hw.ms_rows)
      return fmt::format("T_M={} exceeds ms_rows={} (one output row per mesh row)", t.T_X * t.T_Y,
                         hw.ms_rows);
    return "";
  }
  const TileGeometry g = tile_geometry(hw, op, t);
  if (product > hw.ms_size)
    return fmt::format("the tile maps {} virtual neurons of {} multipliers = {} > ms_size={}",
                       g.num_vns, t.T_R * t.T_S * t.T_C, product, hw.ms_size);
  if (t.T_R * t.T_S * t.T_C == 1 && g.num_vns > 1 && g.n_folding > 1 &&
      (hw.accumulation_buffer || hw.rn == ReduceNetwork::Fen))
    return fmt::format(
        "virtual neurons of a single multiplier (T_R*T_S*T_C=1) share an adder, so their {} "
        "folds would be accumulated together (STONNE aborts on this mapping); map at least two "
        "multipliers per virtual neuron",
        g.n_folding);
  if (g.folding && 1LL * g.vn_size * g.num_vns > hw.ms_size)
    return fmt::format(
        "with {} folds and no accumulation buffer each virtual neuron needs one extra "
        "multiplier for its partial sums: {}x{} = {} > ms_size={} (enable the accumulation "
        "buffer or shrink the tile)",
        g.n_folding, g.num_vns, g.vn_size, g.num_vns * g.vn_size, hw.ms_size);
  return "";
}

std::string wrong_result_reason(const HardwareConfig& hw, const DenseOp& op, const Tile& t) {
  if (hw.controller != Controller::MaeriDense) return "";
  if (op.stride > 1 && (t.T_X > 1 || t.T_Y > 1))
    return fmt::format(
        "with strides={} and T_X'={}, T_Y'={} the controller treats the input window as "
        "T_X'+R-1 by T_Y'+S-1 (as for stride 1) and sends zeros for the rest of it; use "
        "T_X'=T_Y'=1 with strides > 1",
        op.stride, t.T_X, t.T_Y);
  if (op.out_x() % t.T_X != 0 || op.out_y() % t.T_Y != 0)
    return fmt::format(
        "X'={} and Y'={} are not multiples of T_X'={} and T_Y'={}: with a partial output tile "
        "the controller starts the next output-channel iteration before the previous one has "
        "finished; use T_X' and T_Y' that divide X' and Y'",
        op.out_x(), op.out_y(), t.T_X, t.T_Y);
  return "";
}

void validate_tile(const HardwareConfig& hw, const DenseOp& op, const Tile& t) {
  const std::string problem = tile_violation(hw, op, t);
  if (problem.empty()) return;
  std::string hint;
  try {
    hint = fmt::format("; a legal tile is {}", describe(suggest_legal_tile(hw, op), op.kind));
  } catch (const Error&) {
    hint = "";
  }
  fail("illegal tile {}: {}{}", describe(t, op.kind), problem, hint);
}

Tile parse_tile(std::string_view text, std::string_view origin, OpKind op_kind) {
  const KeyValueFile f = KeyValueFile::parse(text, origin);
  std::string type = f.get_string("tile_type").value_or(op_kind == OpKind::Conv ? "CONV" : "FC");
  require(type == "CONV" || type == "FC", "{}: tile_type=\"{}\" is not CONV or FC", origin, type);
  const bool conv = op_kind == OpKind::Conv;
  require((type == "CONV") == conv,
          "{}: this {} tile does not fit a {} layer; give a tile_type=\"{}\" tile (or --tile auto)",
          origin, type, conv ? "CONV" : "FC/GEMM", conv ? "CONV" : "FC");
  if (conv)
    f.require_known({"tile_type", "T_R", "T_S", "T_C", "T_K", "T_G", "T_N", "T_X'", "T_Y'"},
                    "a CONV tile");
  else
    f.require_known({"tile_type", "T_S", "T_K", "T_N"}, "an FC tile");
  auto field = [&](const std::string& key, bool required) {
    auto v = f.get_int(key);
    if (!v) {
      require(!required, "{}: {} tile is missing {}", origin, type, key);
      return 1;
    }
    require(*v >= 1 && *v <= (1 << 20), "{}: {}={} must be a positive integer", origin, key, *v);
    return static_cast<int>(*v);
  };
  Tile t;
  if (type == "FC") {
    // STONNE's FC tile: T_S input neurons per virtual neuron, T_K output neurons, T_N batch.
    t = make_gemm_tile(field("T_N", true), field("T_K", true), field("T_S", true));
  } else {
    t.T_R = field("T_R", true), t.T_S = field("T_S", true), t.T_C = field("T_C", true);
    t.T_K = field("T_K", true), t.T_G = field("T_G", true), t.T_N = field("T_N", true);
    t.T_X = field("T_X'", true), t.T_Y = field("T_Y'", true);
  }
  return t;
}

Tile load_tile(const std::filesystem::path& path, OpKind op_kind) {
  return parse_tile(read_file(path), path.string(), op_kind);
}

std::string format_tile(const Tile& t, OpKind kind) {
  if (kind != OpKind::Conv)
    return fmt::format("tile_type=\"FC\"\nT_S={}\nT_K={}\nT_N={}\n", t.T_S, t.T_K, t.T_X);
  return fmt::format(
      "tile_type=\"CONV\"\nT_R={}\nT_S={}\nT_C={}\nT_K={}\nT_G={}\nT_N={}\nT_X'={}\nT_Y'={}\n",
      t.T_R, t.T_S, t.T_C, t.T_K, t.T_G, t.T_N, t.T_X, t.T_Y);
}

}  // namespace telar::sim
