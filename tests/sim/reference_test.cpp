// Every public STONNE reference case, in both modes: cycles, Global Buffer reads and writes must
// equal STONNE's exactly, and the output must equal the reference kernel.
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

void expect_matches(const testing::StonneCase& c, const OpResult& r) {
  EXPECT_EQ(r.stats.cycles, c.cycles) << c.id;
  if (c.gb_reads) {
    EXPECT_EQ(r.stats.gb.reads(), c.gb_reads) << c.id;
    EXPECT_EQ(r.stats.gb.writes(), c.gb_writes) << c.id;
  }
  const auto [reads, writes] = global_buffer_counts(r.stats.counters);
  EXPECT_EQ(reads, r.stats.gb.reads()) << c.id << ": the .counters GLOBALBUFFER line";
  EXPECT_EQ(writes, r.stats.gb.writes()) << c.id;
  EXPECT_EQ(r.stats.counters.cycles, c.cycles) << c.id;
  EXPECT_TRUE(r.output_checked) << c.id;
  EXPECT_TRUE(r.output_correct) << c.id << ": max abs error " << r.max_abs_error;
  EXPECT_GT(r.outputs_from_fabric, 0u) << c.id;
}

class ReferenceCase : public ::testing::TestWithParam<testing::StonneCase> {};

TEST_P(ReferenceCase, FastModeIsExact) {
  expect_matches(GetParam(), run_case(GetParam(), false));
}

TEST_P(ReferenceCase, ExactCycleLoopIsExact) {
  // The three larger runs go through the exact loop in test_sim_large (label slow).
  const testing::StonneCase& c = GetParam();
  const OpResult r = run_case(c, true);
  expect_matches(c, r);
  EXPECT_EQ(r.simulated_cycles, r.stats.cycles) << "the oracle steps every cycle";
  EXPECT_EQ(r.outputs_from_fabric, r.output.size()) << "every output comes from the fabric";
}

INSTANTIATE_TEST_SUITE_P(Stonne, ReferenceCase, ::testing::ValuesIn(testing::stonne_cases(false)),
                         [](const auto& info) { return info.param.id; });

TEST(ReferenceCase, FastModeSkipsMostOfTheLargeCases) {
  for (const auto& c : testing::stonne_cases(true)) {
    const OpResult r = run_case(c, false);
    EXPECT_EQ(r.stats.cycles, c.cycles) << c.id;
    EXPECT_TRUE(r.output_correct) << c.id << ": max abs error " << r.max_abs_error;
    EXPECT_GE(r.skips, 1) << c.id;
    EXPECT_LT(r.simulated_cycles * 10, r.stats.cycles) << c.id << ": fast mode should skip >90%";
  }
}

}  // namespace
}  // namespace telar::sim
