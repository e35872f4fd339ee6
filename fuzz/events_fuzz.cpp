// Event files of `telar prof --events @FILE`.
#include "fuzz/harness.hpp"
#include "prof/event_list.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return telar::fuzz::refused_only_by_errors(
      [&] { telar::prof::parse_event_file_text(telar::fuzz::text(data, size), "fuzz.events"); });
}
