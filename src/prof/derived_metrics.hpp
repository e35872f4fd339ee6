#pragma once
// Metrics derived from event counts, computed where the events they need were counted:
// IPC, cache and TLB miss rates, branch miss rate, floating-point operations and FLOP/s from the
// fp_arith_inst_retired events (weighted by the lanes each instruction computes: scalar 1,
// 128-bit packed double 2, 128-bit single and 256-bit double 4, 256-bit single and 512-bit double
// 8, 512-bit single 16; Intel counts an FMA twice in these events, so the sum is a FLOP count),
// top-down level 1 (Yasin 2014, 4-wide cores: slots = 4 × cycles) and CPU utilisation.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "prof/profile.hpp"

namespace telar::prof {

// Event totals of one scope keyed by canonical name, plus its wall time.
struct EventTotals {
  std::map<std::string, double> values;
  std::int64_t wall_ns = 0;
  bool has(const std::string& canonical) const { return values.count(canonical) != 0; }
  double at(const std::string& canonical) const;
};

// Totals of record `r` summed over CPUs (available events only).
EventTotals totals_of(const Profile& profile, const ScopeRecord& r);

struct Metric {
  std::string name;  // "ipc", "branch_miss_rate", "flops", "flop_per_s", "topdown_retiring" ...
  double value = 0;
  std::string unit;  // "", "ratio", "FLOP", "FLOP/s", "CPUs"
};

// Every metric whose inputs are present (and whose denominators are not zero).
std::vector<Metric> derive_metrics(const EventTotals& totals);

// Σ weight × count over the fp_arith_inst_retired events present; nullopt-like -1 when none is.
double fp_operations(const EventTotals& totals);

// The FP weights by canonical event name (fp_arith_inst_retired.*).
const std::map<std::string, int>& fp_arith_weights();

}  // namespace telar::prof
