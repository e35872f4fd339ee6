// Derived metrics from hand-made totals.
#include <gtest/gtest.h>

#include "prof/derived_metrics.hpp"

using namespace telar::prof;

namespace {
double metric(const std::vector<Metric>& metrics, const std::string& name) {
  for (const auto& m : metrics)
    if (m.name == name) return m.value;
  ADD_FAILURE() << "no metric " << name;
  return -1;
}
bool has(const std::vector<Metric>& metrics, const std::string& name) {
  for (const auto& m : metrics)
    if (m.name == name) return true;
  return false;
}
}  // namespace

TEST(ProfDerived, IpcMissRatesAndUtilisation) {
  EventTotals t;
  t.wall_ns = 2'000'000'000;
  t.values = {{"instructions", 3000},       {"cycles", 1200},        {"branch-misses", 5},
              {"branch-instructions", 200}, {"cache-misses", 30},    {"cache-references", 120},
              {"L1-dcache-load-misses", 8}, {"L1-dcache-loads", 64}, {"task-clock", 3e9}};
  const auto m = derive_metrics(t);
  EXPECT_DOUBLE_EQ(metric(m, "ipc"), 2.5);
  EXPECT_DOUBLE_EQ(metric(m, "branch_miss_rate"), 0.025);
  EXPECT_DOUBLE_EQ(metric(m, "cache_miss_rate"), 0.25);
  EXPECT_DOUBLE_EQ(metric(m, "l1d_miss_rate"), 0.125);
  EXPECT_DOUBLE_EQ(metric(m, "cpus_utilized"), 1.5);  // 3 s of CPU in 2 s
  EXPECT_FALSE(has(m, "llc_miss_rate"));
  EXPECT_FALSE(has(m, "fp_ops"));
}

TEST(ProfDerived, NativeAndPapiSpellingsCount) {
  EventTotals t;
  t.values = {{"inst_retired.any", 900},
              {"cpu_clk_unhalted.thread", 300},
              {"br_misp_retired.all_branches", 1},
              {"papi_br_cn", 50}};
  const auto m = derive_metrics(t);
  EXPECT_DOUBLE_EQ(metric(m, "ipc"), 3.0);
  EXPECT_DOUBLE_EQ(metric(m, "branch_miss_rate"), 0.02);
}

TEST(ProfDerived, FlopsWeighEachFpArithEventByItsLanes) {
  EventTotals t;
  t.wall_ns = 500'000'000;
  t.values = {{"fp_arith_inst_retired.scalar_double", 10},
              {"fp_arith_inst_retired.128b_packed_double", 10},
              {"fp_arith_inst_retired.256b_packed_double", 10},
              {"fp_arith_inst_retired.512b_packed_double", 10},
              {"fp_arith_inst_retired.scalar_single", 1},
              {"fp_arith_inst_retired.128b_packed_single", 1},
              {"fp_arith_inst_retired.256b_packed_single", 1},
              {"fp_arith_inst_retired.512b_packed_single", 1},
              {"instructions", 2900}};
  // 10·(1+2+4+8) + (1+4+8+16) = 150 + 29
  const auto m = derive_metrics(t);
  EXPECT_DOUBLE_EQ(metric(m, "fp_ops"), 179);
  EXPECT_DOUBLE_EQ(metric(m, "flop_per_s"), 358);
  EXPECT_DOUBLE_EQ(fp_operations(t), 179);
  EXPECT_DOUBLE_EQ(fp_operations(EventTotals{}), -1);
}

TEST(ProfDerived, TopDownLevelOne) {
  EventTotals t;
  // 1000 cycles -> 4000 slots; 800 not delivered; issued 2600, retired 2000, 50 recovery cycles.
  t.values = {{"cycles", 1000},
              {"idq_uops_not_delivered.core", 800},
              {"uops_issued.any", 2600},
              {"uops_retired.retire_slots", 2000},
              {"int_misc.recovery_cycles", 50}};
  const auto m = derive_metrics(t);
  EXPECT_DOUBLE_EQ(metric(m, "topdown_frontend_bound"), 0.2);
  EXPECT_DOUBLE_EQ(metric(m, "topdown_bad_speculation"), 0.2);  // (600 + 200) / 4000
  EXPECT_DOUBLE_EQ(metric(m, "topdown_retiring"), 0.5);
  EXPECT_NEAR(metric(m, "topdown_backend_bound"), 0.1, 1e-12);
}

TEST(ProfDerived, ZeroDenominatorsGiveNoMetric) {
  EventTotals t;
  t.values = {{"instructions", 10}, {"cycles", 0}};
  EXPECT_FALSE(has(derive_metrics(t), "ipc"));
}
