#include "prof/derived_metrics.hpp"

#include <initializer_list>
#include <optional>

namespace telar::prof {

namespace {

// The first of several names for the same quantity that was counted (generic perf name first,
// then Intel native names, then PAPI presets without a generic equivalent).
std::optional<double> first_of(const EventTotals& t, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (t.has(n)) return t.at(n);
  return std::nullopt;
}

std::optional<double> instructions(const EventTotals& t) {
  return first_of(t, {"instructions", "inst_retired.any", "inst_retired.any_p",
                      "instruction_retired", "retired_instructions"});
}

std::optional<double> cycles(const EventTotals& t) {
  return first_of(t, {"cycles", "cpu_clk_unhalted.thread", "cpu_clk_unhalted.thread_p",
                      "cpu_clk_unhalted.core", "unhalted_core_cycles", "cycles_not_in_halt"});
}

void ratio(std::vector<Metric>& out, const char* name, std::optional<double> num,
           std::optional<double> den, const char* unit = "ratio") {
  if (num && den && *den != 0) out.push_back({name, *num / *den, unit});
}

}  // namespace

double EventTotals::at(const std::string& canonical) const {
  auto it = values.find(canonical);
  return it == values.end() ? 0.0 : it->second;
}

EventTotals totals_of(const Profile& profile, const ScopeRecord& r) {
  EventTotals t;
  t.wall_ns = r.wall_ns;
  for (std::size_t e : profile.available_events())
    t.values[profile.events[e].canonical] += static_cast<double>(profile.total(r, e));
  return t;
}

const std::map<std::string, int>& fp_arith_weights() {
  static const std::map<std::string, int> weights = {
      {"fp_arith_inst_retired.scalar_single", 1},
      {"fp_arith_inst_retired.scalar_double", 1},
      {"fp_arith_inst_retired.128b_packed_double", 2},
      {"fp_arith_inst_retired.128b_packed_single", 4},
      {"fp_arith_inst_retired.256b_packed_double", 4},
      {"fp_arith_inst_retired.256b_packed_single", 8},
      {"fp_arith_inst_retired.512b_packed_double", 8},
      {"fp_arith_inst_retired.512b_packed_single", 16},
      // Older spellings of the same events in libpfm4 tables.
      {"fp_arith.scalar_single", 1},
      {"fp_arith.scalar_double", 1},
      {"fp_arith.128b_packed_double", 2},
      {"fp_arith.128b_packed_single", 4},
      {"fp_arith.256b_packed_double", 4},
      {"fp_arith.256b_packed_single", 8},
      {"fp_arith.512b_packed_double", 8},
      {"fp_arith.512b_packed_single", 16},
  };
  return weights;
}

double fp_operations(const EventTotals& totals) {
  bool any = false;
  double sum = 0;
  for (const auto& [name, weight] : fp_arith_weights()) {
    if (!totals.has(name)) continue;
    any = true;
    sum += weight * totals.at(name);
  }
  return any ? sum : -1;
}

std::vector<Metric> derive_metrics(const EventTotals& t) {
  std::vector<Metric> out;
  const auto ins = instructions(t);
  const auto cyc = cycles(t);
  ratio(out, "ipc", ins, cyc, "instructions/cycle");
  ratio(
      out, "branch_miss_rate",
      first_of(t, {"branch-misses", "br_misp_retired.all_branches", "mispredicted_branch_retired"}),
      first_of(t, {"branch-instructions", "br_inst_retired.all_branches",
                   "branch_instructions_retired", "papi_br_cn"}));
  ratio(out, "cache_miss_rate", first_of(t, {"cache-misses"}), first_of(t, {"cache-references"}));
  ratio(out, "l1d_miss_rate", first_of(t, {"L1-dcache-load-misses", "papi_l1_dcm"}),
        first_of(t, {"L1-dcache-loads", "papi_l1_dca"}));
  ratio(out, "l1i_miss_rate", first_of(t, {"L1-icache-load-misses"}),
        first_of(t, {"L1-icache-loads"}));
  ratio(out, "llc_miss_rate", first_of(t, {"LLC-load-misses"}), first_of(t, {"LLC-loads"}));
  ratio(out, "dtlb_miss_rate", first_of(t, {"dTLB-load-misses"}), first_of(t, {"dTLB-loads"}));

  const double seconds = static_cast<double>(t.wall_ns) * 1e-9;
  if (const double flops = fp_operations(t); flops >= 0) {
    out.push_back({"fp_ops", flops, "FLOP"});
    if (seconds > 0) out.push_back({"flop_per_s", flops / seconds, "FLOP/s"});
    if (ins && flops > 0) out.push_back({"instructions_per_fp_op", *ins / flops, "ratio"});
  }

  // Top-down level 1 with the Skylake-era events the seed used.
  const auto issued = first_of(t, {"uops_issued.any"});
  const auto retired = first_of(t, {"uops_retired.retire_slots"});
  const auto recovery = first_of(t, {"int_misc.recovery_cycles"});
  const auto not_delivered = first_of(t, {"idq_uops_not_delivered.core"});
  if (cyc && *cyc > 0 && issued && retired && recovery && not_delivered) {
    const double slots = 4.0 * *cyc;
    const double frontend = *not_delivered / slots;
    const double bad_speculation = (*issued - *retired + 4.0 * *recovery) / slots;
    const double retiring = *retired / slots;
    out.push_back({"topdown_frontend_bound", frontend, "fraction of slots"});
    out.push_back({"topdown_bad_speculation", bad_speculation, "fraction of slots"});
    out.push_back({"topdown_retiring", retiring, "fraction of slots"});
    out.push_back({"topdown_backend_bound", 1.0 - frontend - bad_speculation - retiring,
                   "fraction of slots"});
  }

  if (const auto task = first_of(t, {"task-clock"}); task && seconds > 0) {
    out.push_back({"cpus_utilized", *task * 1e-9 / seconds, "CPUs"});
    if (cyc && *task > 0) out.push_back({"ghz", *cyc / *task, "GHz"});
  }
  return out;
}

}  // namespace telar::prof
