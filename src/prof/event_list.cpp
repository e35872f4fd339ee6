#include "prof/event_list.hpp"

#include <system_error>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/parse.hpp"

namespace telar::prof {

std::vector<std::string> parse_event_file_text(std::string_view text, std::string_view source) {
  std::vector<std::string> names;
  std::size_t line_number = 0;
  for (const auto& raw_line : split(text, '\n')) {
    ++line_number;
    std::string_view line = raw_line;
    if (auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    line = trim(line);
    if (line.empty()) continue;
    require(line.find_first_of(" \t,") == std::string_view::npos,
            "{}:{}: '{}' holds more than one name; write one event name per line", source,
            line_number, line);
    names.emplace_back(line);
  }
  require(!names.empty(), "{}: no event names in it; write one event name per line", source);
  return names;
}

std::vector<std::string> read_event_file(const std::filesystem::path& path) {
  return parse_event_file_text(read_file(path), path.string());
}

std::vector<std::string> parse_event_argument(std::string_view argument) {
  const std::string text{trim(argument)};
  require(!text.empty(), "-e: no events given; name events (task-clock,cycles) or an events file");
  std::error_code ec;
  // A path (or an existing file) is an events file; a missing one is reported as such rather
  // than as an unknown event name.
  if (std::filesystem::is_regular_file(text, ec) || text.find('/') != std::string::npos)
    return read_event_file(text);
  std::vector<std::string> names;
  for (const auto& part : split(text, ',')) {
    const std::string name{trim(part)};
    require(!name.empty(), "-e '{}': an empty name between commas", text);
    names.push_back(name);
  }
  return names;
}

}  // namespace telar::prof
