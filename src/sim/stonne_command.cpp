#include "sim/stonne_command.hpp"

#include <fmt/format.h>

#include <optional>

#include "core/error.hpp"
#include "sim/glibc_random.hpp"
#include "sim/mapper.hpp"

namespace telar::sim {

namespace {

// A dimension given on the command line must agree with the file's.
void check_dims(const SparseArgs& a, const char* flag, int from_file, const char* what) {
  if (a.dims_given.count(flag))
    require((flag[1] == 'M'   ? a.M
             : flag[1] == 'N' ? a.N
                              : a.K) == from_file,
            "{}={} disagrees with {}, which has {} {}", flag,
            flag[1] == 'M'   ? a.M
            : flag[1] == 'N' ? a.N
                             : a.K,
            what, from_file, flag[1] == 'K' ? "columns/rows (K)" : "rows/columns");
}

std::uint32_t rand_seed(std::uint64_t seed) {
  require(seed <= 0xffffffffULL, "--seed={} is out of range for rand() (0 to 4294967295)", seed);
  return static_cast<std::uint32_t>(seed);
}

// MK from --mk (its shape checked against -M/-K), or drawn from `rng` at -MK_sparsity.
CsrMatrix mk_operand(const SparseArgs& a, const SparseOperandSources& o, GlibcRandom& rng,
                     std::string& source) {
  if (!o.mk_path.empty()) {
    CsrMatrix mk = load_matrix_market(o.mk_path);
    check_dims(a, "-M", mk.rows, o.mk_path.c_str());
    check_dims(a, "-K", mk.cols, o.mk_path.c_str());
    source = "MK from " + o.mk_path;
    return mk;
  }
  source = fmt::format("MK random (seed {})", o.seed);
  return CsrMatrix::from_dense(stonne_random_matrix(rng, a.M, a.K, a.mk_sparsity), a.M, a.K);
}

// KN from --kn (K rows, its columns checked against -N); nothing without --kn.
std::optional<CsrMatrix> kn_from_file(const SparseArgs& a, const SparseOperandSources& o, int K,
                                      std::string& source) {
  if (o.kn_path.empty()) return std::nullopt;
  CsrMatrix kn = load_matrix_market(o.kn_path);
  require(kn.rows == K, "{} has {} rows, but MK has K={} columns", o.kn_path, kn.rows, K);
  check_dims(a, "-N", kn.cols, o.kn_path.c_str());
  source += ", KN from " + o.kn_path;
  return kn;
}

}  // namespace

SparseDenseOp sparse_dense_operands(const SparseArgs& a, const SparseOperandSources& o,
                                    std::string& source) {
  if (o.mk_path.empty() && o.kn_path.empty()) {
    source = fmt::format("random (STONNE's generator, seed {})", o.seed);
    SparseDenseOp op = stonne_sparse_dense(a.M, a.N, a.K, a.mk_sparsity, rand_seed(o.seed));
    op.layer_name = a.layer_name;
    return op;
  }
  GlibcRandom rng(rand_seed(o.seed));
  SparseDenseOp op;
  op.layer_name = a.layer_name;
  op.mk = mk_operand(a, o, rng, source);
  op.M = op.mk.rows;
  op.K = op.mk.cols;
  if (auto kn = kn_from_file(a, o, op.K, source)) {
    op.N = kn->cols;
    op.kn = kn->to_dense();
  } else {
    op.N = a.N;
    op.kn = stonne_random_matrix(rng, op.K, op.N, 0);
    source += ", KN random";
  }
  return op;
}

SparseGemmOp sparse_gemm_operands(const SparseArgs& a, const SparseOperandSources& o,
                                  std::string& source) {
  if (o.mk_path.empty() && o.kn_path.empty()) {
    source = fmt::format("random (STONNE's generator, seed {})", o.seed);
    SparseGemmOp op = stonne_sparse_gemm(a.M, a.N, a.K, a.mk_sparsity, a.kn_sparsity, a.dataflow,
                                         rand_seed(o.seed));
    op.layer_name = a.layer_name;
    return op;
  }
  GlibcRandom rng(rand_seed(o.seed));
  SparseGemmOp op;
  op.layer_name = a.layer_name;
  op.dataflow = a.dataflow;
  op.mk = mk_operand(a, o, rng, source);
  op.M = op.mk.rows;
  op.K = op.mk.cols;
  if (auto kn = kn_from_file(a, o, op.K, source)) {
    op.kn_t = kn->transposed();
  } else {
    op.kn_t = CsrMatrix::from_dense(stonne_random_matrix(rng, op.K, a.N, a.kn_sparsity), op.K, a.N)
                  .transposed();
    source += ", KN random";
  }
  op.N = op.kn_t.rows;
  return op;
}

OperationRecord simulate_sparse_command(const Accelerator& accelerator, const StonneCommand& cmd,
                                        const SparseOperandSources& sources,
                                        const std::optional<std::string>& auto_objective,
                                        bool exact_cycle_loop, const EnergyTable& table) {
  RunOptions options;
  options.exact_cycle_loop = exact_cycle_loop;
  OperationRecord record;
  record.hw = accelerator.config();
  record.exact_cycle_loop = exact_cycle_loop;
  std::string source;
  if (cmd.kind == CommandKind::SparseDense) {
    const SparseDenseOp op = sparse_dense_operands(cmd.sparse, sources, source);
    SparseDenseTile tile = cmd.sparse.tile;
    record.tile_source = cmd.tile_given ? "command line" : "STONNE defaults";
    if (auto_objective) {
      const MapObjective objective = parse_objective(*auto_objective, "--tile auto");
      const SparseDenseChoice choice = map_sparse_dense_tile(accelerator, op, objective);
      tile = choice.tile;
      record.tile_source =
          fmt::format("mapper ({}, {} candidates simulated)", name(objective), choice.evaluated);
    }
    record.result = accelerator.run(op, tile, options);
    record.sparse = describe_operation(op, tile, source);
  } else {
    const SparseGemmOp op = sparse_gemm_operands(cmd.sparse, sources, source);
    record.result = accelerator.run(op, options);
    record.sparse = describe_operation(op, source);
  }
  record.sparse->mk_sparsity = cmd.sparse.mk_sparsity;
  record.sparse->kn_sparsity = cmd.sparse.kn_sparsity;
  record.energy = compute_energy(table, record.result.stats.counters);
  return record;
}

DenseTileChoice choose_dense_tile(const Accelerator& accelerator, const StonneCommand& cmd,
                                  const std::string& tile_arg) {
  DenseTileChoice choice{cmd.tile, cmd.tile_given ? "command line" : "STONNE defaults"};
  std::optional<std::string> auto_objective = cmd.generate_tile;
  if (!tile_arg.empty()) {
    require(!cmd.tile_given, "give the tile either as -T_* flags or with --tile, not both");
    if (tile_arg == "auto" || tile_arg.rfind("auto:", 0) == 0) {
      auto_objective = tile_arg == "auto" ? "performance" : tile_arg.substr(5);
    } else {
      choice.tile = load_tile(tile_arg, cmd.op.kind);
      choice.source = "tile file " + tile_arg;
    }
  }
  if (auto_objective) {
    const MapObjective objective = parse_objective(*auto_objective, "--tile auto");
    const MapChoice mapped = map_tile(accelerator, cmd.op, objective);
    choice.tile = mapped.tile;
    choice.source =
        fmt::format("mapper ({}, {} candidates simulated)", name(objective), mapped.evaluated);
  }
  validate_tile(accelerator.config(), cmd.op, choice.tile);
  return choice;
}

OperationRecord simulate_dense_command(const Accelerator& accelerator, const StonneCommand& cmd,
                                       const DenseTileChoice& tile, bool exact_cycle_loop,
                                       std::uint64_t seed, const EnergyTable& table) {
  RunOptions options;
  options.exact_cycle_loop = exact_cycle_loop;
  options.seed = seed;
  OperationRecord record;
  record.hw = accelerator.config();
  record.op = cmd.op;
  record.tile = tile.tile;
  record.tile_source = tile.source;
  record.exact_cycle_loop = exact_cycle_loop;
  record.result = accelerator.run(cmd.op, tile.tile, options);
  record.energy = compute_energy(table, record.result.stats.counters);
  return record;
}

}  // namespace telar::sim
