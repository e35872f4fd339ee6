#include <cstdio>
#include <string>
#include <vector>
#include "core/parse.hpp"
#include "sim/accelerator.hpp"
#include "sim/stonne_args.hpp"
using namespace telar;
int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 2, argv + argc);
  bool exact = std::string(argv[1]) == "exact";
  bool novalues = std::string(argv[1]) == "timing";
  auto cmd = sim::parse_stonne_args(args);
  sim::Accelerator acc(cmd.hw);
  sim::RunOptions o; o.exact_cycle_loop = exact; o.compute_values = !novalues;
  auto r = acc.run(cmd.op, cmd.tile, o);
  std::printf("cycles=%llu reads=%llu writes=%llu (w=%llu i=%llu p=%llu) check=%d fabric=%llu sim=%llu skips=%d %.3fs\n",
    (unsigned long long)r.stats.cycles, (unsigned long long)r.stats.gb.reads(), (unsigned long long)r.stats.gb.writes(),
    (unsigned long long)r.stats.gb.weight_reads, (unsigned long long)r.stats.gb.input_reads, (unsigned long long)r.stats.gb.psum_reads,
    (int)r.output_correct, (unsigned long long)r.outputs_from_fabric, (unsigned long long)r.simulated_cycles, r.skips, r.seconds);
}
