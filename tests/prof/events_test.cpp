// Event names: generic perf names, raw encodings, libpfm4 native names, PAPI presets, errors.
#include <gtest/gtest.h>
#include <linux/perf_event.h>

#include "core/error.hpp"
#include "prof/event_resolver.hpp"
#include "prof/generic_events.hpp"
#include "prof/native_events.hpp"
#include "prof/papi_presets.hpp"

using namespace telar::prof;

namespace {
std::string error_of(const std::string& name) {
  try {
    resolve_event(name);
  } catch (const telar::Error& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(ProfEvents, GenericNamesResolveToTheKernelsEncodings) {
  // Values from linux/perf_event.h's ABI, written out.
  const ResolvedEvent cycles = resolve_event("cycles");
  ASSERT_EQ(cycles.terms.size(), 1u);
  EXPECT_EQ(cycles.terms[0].type, 0u);  // PERF_TYPE_HARDWARE
  EXPECT_EQ(cycles.terms[0].config, 0u);
  EXPECT_FALSE(cycles.software);
  EXPECT_EQ(resolve_event("instructions").terms[0].config, 1u);
  EXPECT_EQ(resolve_event("branch-misses").terms[0].config, 5u);
  const ResolvedEvent task = resolve_event("task-clock");
  EXPECT_EQ(task.terms[0].type, 1u);  // PERF_TYPE_SOFTWARE
  EXPECT_EQ(task.terms[0].config, 1u);
  EXPECT_TRUE(task.software);
  EXPECT_EQ(resolve_event("context-switches").terms[0].config, 3u);
  // Cache events: cache id | op << 8 | result << 16 (L1D = 0, LL = 2; read = 0; miss = 1).
  const ResolvedEvent l1 = resolve_event("L1-dcache-load-misses");
  EXPECT_EQ(l1.terms[0].type, 3u);  // PERF_TYPE_HW_CACHE
  EXPECT_EQ(l1.terms[0].config, 0x10000u);
  EXPECT_EQ(resolve_event("LLC-loads").terms[0].config, 0x2u);
  EXPECT_EQ(resolve_event("dTLB-store-misses").terms[0].config, 0x3u | (1u << 8) | (1u << 16));
}

TEST(ProfEvents, AliasesAndCaseGiveTheSameCanonicalName) {
  EXPECT_EQ(resolve_event("cpu-cycles").canonical, "cycles");
  EXPECT_EQ(resolve_event("PERF_COUNT_HW_CPU_CYCLES").canonical, "cycles");
  EXPECT_EQ(resolve_event("PERF_COUNT_SW_TASK_CLOCK").canonical, "task-clock");
  EXPECT_EQ(resolve_event("L1-DCACHE-LOADS").canonical, "L1-dcache-loads");  // the seed's spelling
  EXPECT_EQ(resolve_event("PERF_COUNT_HW_CACHE_L1D.MISS").canonical, "L1-dcache-load-misses");
  EXPECT_EQ(resolve_event("branches").canonical, "branch-instructions");
  EXPECT_EQ(resolve_event("cs").name, "cs");  // the user's spelling stays the column name
}

TEST(ProfEvents, RawEncodings) {
  const ResolvedEvent raw = resolve_event("r01c7");
  EXPECT_EQ(raw.source, EventSource::Raw);
  EXPECT_EQ(raw.terms[0].type, 4u);  // PERF_TYPE_RAW
  EXPECT_EQ(raw.terms[0].config, 0x1c7u);
  EXPECT_EQ(parse_raw_event("r10"), 0x10u);
  EXPECT_FALSE(parse_raw_event("rxyz").has_value());
  EXPECT_FALSE(parse_raw_event("r").has_value());
}

TEST(ProfEvents, UnknownNamesAreErrorsThatSuggestCloseNames) {
  const std::string e = error_of("task-clok");
  EXPECT_NE(e.find("unknown event 'task-clok'"), std::string::npos) << e;
  EXPECT_NE(e.find("'task-clock'"), std::string::npos) << e;
  EXPECT_EQ(e.find('\n'), std::string::npos) << "one line";
  const std::string f = error_of("instrutions");
  EXPECT_NE(f.find("'instructions'"), std::string::npos) << f;
  EXPECT_NE(error_of("no_such_event_anywhere").find("telar prof list"), std::string::npos);
}

TEST(ProfEvents, ListingAnEventTwiceIsAnError) {
  EXPECT_THROW(resolve_events({"task-clock", "page-faults", "TASK-CLOCK"}), telar::Error);
  EXPECT_EQ(resolve_events({"task-clock", "page-faults"}).size(), 2u);
}

TEST(ProfEvents, NativeNamesOfAnyPmuModelResolveThroughLibpfm) {
  if (!native::available())
    GTEST_SKIP() << "libpfm4 is not available (not built in, or its module does not load)";
  // FP_ARITH_INST_RETIRED.SCALAR_DOUBLE is event 0xC7, unit mask 0x01 on Skylake-SP (Intel SDM).
  const ResolvedEvent e = resolve_event("skx::fp_arith_inst_retired.scalar_double");
  EXPECT_EQ(e.source, EventSource::Native);
  EXPECT_EQ(e.canonical, "fp_arith_inst_retired.scalar_double");
  ASSERT_EQ(e.terms.size(), 1u);
  EXPECT_EQ(e.terms[0].type, 4u);
  EXPECT_EQ(e.terms[0].config & 0xffffu, 0x01c7u);
  // Without a PMU prefix the name is found whichever model this CPU is: counted where the PMU
  // is present, and otherwise known but unavailable (not an unknown-event error).
  const ResolvedEvent plain = resolve_event("fp_arith_inst_retired.scalar_double");
  EXPECT_EQ(plain.canonical, "fp_arith_inst_retired.scalar_double");
  if (!plain.unavailable.empty()) {
    EXPECT_NE(plain.unavailable.find("PMU"), std::string::npos) << plain.unavailable;
  }
  // The ':' separator is accepted too.
  EXPECT_EQ(resolve_event("skx::UOPS_ISSUED:ANY").canonical, "uops_issued.any");
}

TEST(ProfEvents, AMisspeltUnitMaskSuggestsTheRightOne) {
  if (!native::available())
    GTEST_SKIP() << "libpfm4 is not available (not built in, or its module does not load)";
  const std::string e = error_of("fp_arith_inst_retired.scaler_double");
  EXPECT_NE(e.find("fp_arith_inst_retired.scalar_double"), std::string::npos) << e;
}

TEST(ProfEvents, PapiPresetsResolveWithTheirGenericIdentity) {
  const ResolvedEvent ins = resolve_event("PAPI_TOT_INS");
  EXPECT_EQ(ins.source, EventSource::Papi);
  EXPECT_EQ(ins.canonical, "instructions");
  if (ins.unavailable.empty()) {
    EXPECT_FALSE(ins.terms.empty());
  }
  const std::string e = error_of("PAPI_TOT_INZ");
  EXPECT_NE(e.find("unknown event 'PAPI_TOT_INZ'"), std::string::npos) << e;
  EXPECT_NE(e.find("PAPI_TOT_INS"), std::string::npos) << e;
}
