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

}  // namespace telar::sim
