// Simulated cycles per second of `telar sim` on STONNE's three larger published runs
// (shared/reference/README.md), beside STONNE's own speed on the same machine, and the ratio.
// Rates are per second of this thread's CPU time: the build machine is shared, and wall time
// there measures the neighbours as much as the simulator.
// Each benchmark simulates the whole operation in fast mode and checks that the cycle count is
// STONNE's (the counts stay exact); "timing" runs carry no values, "values" runs also move the
// operands through the fabric and check the result against the reference kernel.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "core/parse.hpp"
#include "sim/accelerator.hpp"
#include "sim/stonne_args.hpp"

namespace {

struct LargeCase {
  const char* name;
  const char* command;
  std::uint64_t stonne_cycles;
  double stonne_seconds;
};

const LargeCase kCases[] = {
    {"fc_128x80x1307",
     "-FC -M=128 -N=80 -K=1307 -num_ms=256 -dn_bw=128 -rn_bw=128 -T_K=64 -T_M=4 -T_N=1 "
     "-accumulation_buffer=1",
     111840, 35.6},
    {"fc_64x80x128",
     "-FC -M=64 -N=80 -K=128 -num_ms=256 -dn_bw=128 -rn_bw=128 -T_K=64 -T_M=4 -T_N=1 "
     "-accumulation_buffer=1",
     6400, 1.6},
    {"conv_5x5x64x192_31x31",
     "-CONV -R=5 -S=5 -C=64 -K=192 -G=1 -N=1 -X=31 -Y=31 -strides=1 -T_R=5 -T_S=5 -T_C=4 -T_K=2 "
     "-T_G=1 -T_N=1 -T_X_=1 -T_Y_=1 -num_ms=256 -dn_bw=64 -rn_bw=64 -accumulation_buffer=1",
     1251552, 153.0},
};

void BM_Simulate(benchmark::State& state, const LargeCase& c, bool values) {
  std::vector<std::string> args;
  for (const std::string& w : telar::split(c.command, ' ')) args.push_back(w);
  const telar::sim::StonneCommand cmd = telar::sim::parse_stonne_args(args);
  const telar::sim::Accelerator acc(cmd.hw);
  telar::sim::RunOptions options;
  options.compute_values = values;
  std::uint64_t cycles = 0;
  for (auto _ : state) {
    const telar::sim::OpResult r = acc.run(cmd.op, cmd.tile, options);
    cycles = r.stats.cycles;
    if (cycles != c.stonne_cycles || (values && !r.output_correct)) {
      state.SkipWithError("the simulation no longer reproduces STONNE");
      break;
    }
    benchmark::DoNotOptimize(r.stats.gb);
  }
  const double stonne_rate = static_cast<double>(c.stonne_cycles) / c.stonne_seconds;
  state.counters["cycles"] = static_cast<double>(cycles);
  state.counters["sim_cycles_per_s"] = benchmark::Counter(
      static_cast<double>(cycles), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["stonne_cycles_per_s"] = stonne_rate;
  // The ratio to STONNE: telar's simulated cycles per second over STONNE's (goal >= 1000).
  state.counters["x_stonne"] = benchmark::Counter(static_cast<double>(cycles) / stonne_rate,
                                                  benchmark::Counter::kIsIterationInvariantRate);
}

const bool registered = [] {
  for (const LargeCase& c : kCases) {
    benchmark::RegisterBenchmark((std::string("timing/") + c.name).c_str(),
                                 [c](benchmark::State& s) { BM_Simulate(s, c, false); })
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark((std::string("values/") + c.name).c_str(),
                                 [c](benchmark::State& s) { BM_Simulate(s, c, true); })
        ->Unit(benchmark::kMillisecond);
  }
  return true;
}();

}  // namespace

BENCHMARK_MAIN();
