#include "sim/accelerator.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "core/error.hpp"
#include "sim/reference.hpp"

namespace telar::sim {

Accelerator::Accelerator(HardwareConfig config) : config_(std::move(config)) {
  validate(config_);
}

OpResult Accelerator::run(const DenseOp& op, const Tile& tile, const RunOptions& options) const {
  if (!options.compute_values) return simulate(op, tile, nullptr, options);
  const DenseData data = make_operands(op, options.seed);
  return simulate(op, tile, &data, options);
}

OpResult Accelerator::run(const DenseOp& op, const Tile& tile, const DenseData& data,
                          const RunOptions& options) const {
  require(data.input.size() == static_cast<std::size_t>(op.input_elements()) &&
              data.weights.size() == static_cast<std::size_t>(op.weight_elements()),
          "operand sizes do not match the operation: input {} (expected {}), weights {} "
          "(expected {})",
          data.input.size(), op.input_elements(), data.weights.size(), op.weight_elements());
  return simulate(op, tile, &data, options);
}

Stats Accelerator::estimate(const DenseOp& op, const Tile& tile) const {
  RunOptions options;
  options.compute_values = false;
  return simulate(op, tile, nullptr, options).stats;
}

OpResult Accelerator::simulate(const DenseOp& op, const Tile& tile, const DenseData* data,
                               const RunOptions& options) const {
  validate(op);
  require(
      config_.controller == Controller::MaeriDense || config_.controller == Controller::TpuOsDense,
      "controller {} runs sparse operations; dense operations need MAERI_DENSE_WORKLOAD or "
      "TPU_OS_DENSE",
      name(config_.controller));
  if (config_.controller == Controller::TpuOsDense)
    require(op.kind != OpKind::Conv,
            "TPU_OS_DENSE runs GEMMs (-DenseGEMM/-FC); lower the convolution to a GEMM first");
  validate_tile(config_, op, tile);

  EngineOptions eo;
  eo.fast = !options.exact_cycle_loop;
  eo.data = data;
  const auto start = std::chrono::steady_clock::now();
  EngineRun run = config_.controller == Controller::TpuOsDense ? run_mesh(config_, op, tile, eo)
                                                               : run_maeri(config_, op, tile, eo);
  const auto stop = std::chrono::steady_clock::now();

  OpResult r;
  r.seconds = std::chrono::duration<double>(stop - start).count();
  r.simulated_cycles = run.simulated_cycles;
  r.skips = run.skips;
  r.stats.cycles = run.cycles;
  r.stats.gb = run.gb;
  r.stats.multiplications = run.multiplications;
  r.stats.multipliers = config_.multipliers();
  r.stats.multipliers_mapped = config_.mn == MultiplierNetwork::OsMesh
                                   ? tile.T_X * tile.T_K
                                   : tile_geometry(config_, op, tile).multipliers_used();
  r.stats.counters = std::move(run.counters);
  if (!data) return r;

  // The outputs that came out of the fabric must equal the reference kernel; where fast mode
  // skipped the fabric, the output is the reference value (the skipped repetitions compute the
  // same tile loop on other operands).
  const std::vector<float> expected = reference_output(op, *data);
  r.output = std::move(run.output);
  r.output_checked = true;
  r.output_correct = true;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    if (!run.from_fabric[i]) {
      r.output[i] = expected[i];
      continue;
    }
    ++r.outputs_from_fabric;
    const double err = std::fabs(static_cast<double>(r.output[i]) - expected[i]);
    if (err > r.max_abs_error) r.max_abs_error = err;
    // Exact for the generated (integer) operands; float rounding of the other summation order
    // for given operands.
    if (err >
        1e-5 * (1.0 + std::fabs(expected[i])) * std::max(1LL, op.R * op.S * 1LL * op.c_per_group()))
      r.output_correct = false;
  }
  return r;
}

namespace {

// Fills the outputs the fabric did not produce (rows fast mode skipped, rows with nothing to
// compute) from the reference and checks the others against it.
void check_outputs(OpResult& r, std::vector<float> output, const std::vector<std::uint8_t>& fabric,
                   const std::vector<float>& expected, long long reduction) {
  r.output = std::move(output);
  r.output_checked = true;
  r.output_correct = true;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    if (!fabric[i]) {
      r.output[i] = expected[i];
      continue;
    }
    ++r.outputs_from_fabric;
    const double err = std::fabs(static_cast<double>(r.output[i]) - expected[i]);
    if (err > r.max_abs_error) r.max_abs_error = err;
    if (err > 1e-5 * (1.0 + std::fabs(expected[i])) * std::max(1LL, reduction))
      r.output_correct = false;
  }
}

void fill_stats(OpResult& r, const HardwareConfig& hw, EngineRun& run, int mapped) {
  r.simulated_cycles = run.simulated_cycles;
  r.skips = run.skips;
  r.reconfigurations = run.reconfigurations;
  r.stats.cycles = run.cycles;
  r.stats.gb = run.gb;
  r.stats.multiplications = run.multiplications;
  r.stats.multipliers = hw.multipliers();
  r.stats.multipliers_mapped = mapped;
  r.stats.counters = std::move(run.counters);
}

void require_sparse_fabric(const HardwareConfig& hw, Controller controller, const char* op) {
  require(hw.controller == controller,
          "{} runs on controller {}, but the configuration has {}; use a {} configuration (e.g. "
          "configs/{}) or -mem_ctrl={}",
          op, name(controller), name(hw.controller),
          controller == Controller::SigmaSparseGemm ? "SIGMA" : "MAGMA",
          controller == Controller::SigmaSparseGemm ? "sigma_128mses_128_bw.cfg"
                                                    : "magma_128mses_128_bw.cfg",
          name(controller));
  require(hw.mn == MultiplierNetwork::Linear && hw.rn == ReduceNetwork::Art,
          "{} needs a LINEAR multiplier array with the ASNETWORK reduction tree (the sparse "
          "controllers configure variable-size clusters on the ART); got {} and {}",
          op, name(hw.mn), name(hw.rn));
}

}  // namespace

OpResult Accelerator::run(const SparseDenseOp& op, const SparseDenseTile& tile,
                          const RunOptions& options) const {
  validate(op);
  require_sparse_fabric(config_, Controller::MagmaSparseDense, "SparseDense");
  require(config_.accumulation_buffer,
          "MAGMA_SPARSE_DENSE accumulates the folds of a row in the accumulation buffer; enable "
          "it (accumulation_buffer_enabled=1 or -accumulation_buffer=1)");
  const std::string why = tile_violation(config_.ms_size, op, tile);
  require(why.empty(), "illegal SparseDense tile {}: {}; e.g. T_N={} T_K={}", describe(tile), why,
          std::min(op.N, 4), std::max(1, config_.ms_size / std::min(op.N, 4)));
  SparseEngineOptions eo;
  eo.fast = !options.exact_cycle_loop;
  eo.values = options.compute_values && !op.kn.empty();
  const auto start = std::chrono::steady_clock::now();
  EngineRun run = run_magma(config_, op, tile, eo);
  OpResult r;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fill_stats(r, config_, run, tile.T_N * tile.T_K);
  if (eo.values)
    check_outputs(r, std::move(run.output), run.from_fabric, reference_output(op), op.K);
  return r;
}

OpResult Accelerator::run(const SparseGemmOp& op, const RunOptions& options) const {
  validate(op);
  require_sparse_fabric(config_, Controller::SigmaSparseGemm, "SparseGEMM");
  require(!config_.accumulation_buffer,
          "SIGMA_SPARSE_GEMM folds long rows through the Global Buffer and configures no "
          "accumulation buffer; disable it (accumulation_buffer_enabled=0)");
  SparseEngineOptions eo;
  eo.fast = !options.exact_cycle_loop;
  eo.values = options.compute_values;
  const auto start = std::chrono::steady_clock::now();
  EngineRun run = run_sigma(config_, op, eo);
  OpResult r;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fill_stats(r, config_, run, config_.ms_size);
  if (eo.values)
    check_outputs(r, std::move(run.output), run.from_fabric, reference_output(op), op.K);
  return r;
}

}  // namespace telar::sim
