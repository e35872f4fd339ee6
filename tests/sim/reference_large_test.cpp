// The three larger STONNE runs (shared/reference/README.md) through the cycle-by-cycle oracle:
// the exact loop must reach STONNE's cycle counts without any skipping, and agree with the fast
// mode on every counter. Seconds per case, hence a separate binary labelled slow.
#include <gtest/gtest.h>

#include "core/parse.hpp"
#include "reference_cases.hpp"
#include "sim/accelerator.hpp"
#include "sim/stonne_args.hpp"

namespace telar::sim {
namespace {

OpResult run_case(const testing::StonneCase& c, bool exact) {
  std::vector<std::string> args;
  for (const std::string& w : split(c.command, ' '))
    if (!w.empty()) args.push_back(w);
  const StonneCommand cmd = parse_stonne_args(args);
  RunOptions options;
  options.exact_cycle_loop = exact;
  return Accelerator(cmd.hw).run(cmd.op, cmd.tile, options);
}

class ReferenceLarge : public ::testing::TestWithParam<testing::StonneCase> {};

TEST_P(ReferenceLarge, ExactCycleLoop) {
  const testing::StonneCase& c = GetParam();
  const OpResult exact = run_case(c, true);
  EXPECT_EQ(exact.stats.cycles, c.cycles) << c.id;
  EXPECT_EQ(exact.simulated_cycles, exact.stats.cycles) << "the oracle steps every cycle";
  EXPECT_EQ(exact.outputs_from_fabric, exact.output.size());
  EXPECT_TRUE(exact.output_correct) << c.id << ": max abs error " << exact.max_abs_error;

  const OpResult fast = run_case(c, false);
  EXPECT_EQ(fast.stats.cycles, exact.stats.cycles) << c.id;
  EXPECT_EQ(fast.stats.gb.reads(), exact.stats.gb.reads()) << c.id;
  EXPECT_EQ(fast.stats.gb.writes(), exact.stats.gb.writes()) << c.id;
  EXPECT_EQ(format_counters(fast.stats.counters), format_counters(exact.stats.counters)) << c.id;
}

INSTANTIATE_TEST_SUITE_P(Stonne, ReferenceLarge, ::testing::ValuesIn(testing::stonne_cases(true)),
                         [](const auto& info) {
                           std::string n = info.param.id;
                           for (char& ch : n)
                             if (ch == '-') ch = '_';
                           return n;
                         });

}  // namespace
}  // namespace telar::sim
