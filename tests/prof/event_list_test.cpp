// Events files (one name per line, # comments, blank lines) and -e arguments.
#include "prof/event_list.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "core/error.hpp"
#include "core/files.hpp"
#include "prof/event_resolver.hpp"
#include "prof/native_events.hpp"
#include "prof/papi_presets.hpp"

using namespace telar::prof;

namespace {
std::string error_of(std::string_view text) {
  try {
    parse_event_file_text(text, "events.txt");
  } catch (const telar::Error& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(ProfEventFile, OneNamePerLineWithCommentsAndBlankLines) {
  const std::string text =
      "# the seed's matmul events\n"
      "\n"
      "cycles\n"
      "   instructions   # retired\n"
      "\t\n"
      "fp_arith_inst_retired.scalar_double\r\n"
      "#task-clock\n"
      "r01c7";
  EXPECT_EQ(parse_event_file_text(text, "x"),
            (std::vector<std::string>{"cycles", "instructions",
                                      "fp_arith_inst_retired.scalar_double", "r01c7"}));
}

TEST(ProfEventFile, TwoNamesOnALineIsAnErrorNamingTheLine) {
  const std::string e = error_of("cycles\ninstructions branches\n");
  EXPECT_NE(e.find("events.txt:2"), std::string::npos) << e;
  EXPECT_NE(error_of("cycles\ntask-clock,page-faults\n").find("events.txt:2"), std::string::npos);
}

TEST(ProfEventFile, AFileWithoutNamesIsAnError) {
  EXPECT_NE(error_of("# nothing\n\n").find("no event names"), std::string::npos);
}

TEST(ProfEventFile, ArgumentIsACommaListOrAFile) {
  EXPECT_EQ(parse_event_argument("task-clock, page-faults"),
            (std::vector<std::string>{"task-clock", "page-faults"}));
  EXPECT_THROW(parse_event_argument("task-clock,,cycles"), telar::Error);
  const auto path = std::filesystem::temp_directory_path() /
                    ("telar_events_" + std::to_string(::getpid()) + ".txt");
  telar::write_file_atomic(path, "# two\ncycles\ntask-clock\n");
  EXPECT_EQ(parse_event_argument(path.string()),
            (std::vector<std::string>{"cycles", "task-clock"}));
  std::filesystem::remove(path);
  EXPECT_THROW(parse_event_argument("/no/such/dir/events.txt"), telar::Error);
}

// Issue 23, item 5: a missing events file is named as such (not as an unknown event), and a
// huge line is refused at once (it used to reach name resolution and take 53 s).
TEST(ProfEventFile, AMissingFileAndAHugeLineAreOneLineErrorsAtOnce) {
  try {
    parse_event_argument("no_such_events.txt");
    FAIL() << "a missing events file was accepted";
  } catch (const telar::Error& e) {
    EXPECT_NE(std::string(e.what()).find("no such events file"), std::string::npos) << e.what();
  }
  const std::string huge(1 << 20, 'x');
  const std::string e = error_of("cycles\n" + huge + "\n");
  EXPECT_NE(e.find("events.txt:2: a line of 1048576 characters"), std::string::npos) << e;
  EXPECT_THROW(parse_event_argument("cycles," + huge), telar::Error);
}

TEST(ProfEventFile, ShippedEventFilesParseAndEveryNameIsKnown) {
  std::size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(
           std::filesystem::path(TELAR_SOURCE_DIR) / "configs/events")) {
    if (entry.path().extension() != ".txt") continue;
    ++files;
    for (const auto& name : read_event_file(entry.path())) {
      // Native names need libpfm4 and PAPI presets (beyond the generic ones) need PAPI.
      const bool needs_libpfm =
          name.find('.') != std::string::npos ||
          (name.find('_') != std::string::npos && name.rfind("PAPI_", 0) != 0);
      if (needs_libpfm && !native::available()) continue;
      if (name.rfind("PAPI_", 0) == 0 && !papi::built_with_papi() &&
          !papi::generic_equivalent(name))
        continue;
      EXPECT_NO_THROW(resolve_event(name)) << entry.path() << ": " << name;
    }
  }
  EXPECT_GE(files, 5u);
}
