#include "prof/event_list.hpp"

#include <system_error>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/parse.hpp"

namespace telar::prof {

namespace {

// Event names are short (the longest known ones are under 100 characters): a longer one is a
// mistake, refused before name resolution would compare it with every known name.
constexpr std::size_t kMaxEventName = 256;

// An argument that names a text file rather than events (`events.txt`).
bool looks_like_a_file(std::string_view text) {
  for (std::string_view ext : {".txt", ".list", ".events", ".cfg"})
    if (text.size() > ext.size() && text.substr(text.size() - ext.size()) == ext) return true;
  return false;
}

}  // namespace

std::vector<std::string> parse_event_file_text(std::string_view text, std::string_view source) {
  std::vector<std::string> names;
  std::size_t line_number = 0;
  for (const auto& raw_line : split(text, '\n')) {
    ++line_number;
    std::string_view line = raw_line;
    if (auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    line = trim(line);
    if (line.empty()) continue;
    require(line.size() <= kMaxEventName,
            "{}:{}: a line of {} characters is not an event name (at most {}); write one event "
            "name per line",
            source, line_number, line.size(), kMaxEventName);
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
  // A path (or an existing file, or a name like events.txt) is an events file; a missing one is
  // reported as such rather than as an unknown event name.
  if (std::filesystem::is_regular_file(text, ec) || text.find('/') != std::string::npos ||
      (text.find(',') == std::string::npos && looks_like_a_file(text))) {
    require(std::filesystem::is_regular_file(text, ec),
            "-e {}: no such events file; give an existing file (one event name per line) or "
            "event names separated by commas",
            text);
    return read_event_file(text);
  }
  std::vector<std::string> names;
  for (const auto& part : split(text, ',')) {
    const std::string name{trim(part)};
    require(!name.empty(), "-e '{}': an empty name between commas", text);
    require(name.size() <= kMaxEventName,
            "-e: a name of {} characters is not an event (at most {})", name.size(),
            kMaxEventName);
    names.push_back(name);
  }
  return names;
}

}  // namespace telar::prof
