// Lines of Criteo's text format (`telar dlrm --raw-data-file`): a malformed line is refused by
// returning false with a reason, never by anything else.
#include <cstdlib>
#include <vector>

#include "dlrm/criteo.hpp"
#include "fuzz/harness.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::vector<std::int64_t> rows(telar::dlrm::kCriteoSparse, 1000);
  std::string_view text = telar::fuzz::text(data, size);
  while (!text.empty()) {
    const std::size_t end = std::min(text.find('\n'), text.size());
    telar::dlrm::CriteoRecord record;
    std::string why;
    if (!telar::dlrm::parse_criteo_line(text.substr(0, end), rows, record, &why) && why.empty())
      std::abort();  // a refusal must say why
    text.remove_prefix(std::min(end + 1, text.size()));
  }
  return 0;
}
