#pragma once
// Event lists as users write them: an events file (one name per line, `#` comments, blank lines)
// or a comma-separated list on the command line.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace telar::prof {

// Parses an events file's text; `source` names the file in errors ("events.txt:3: ...").
std::vector<std::string> parse_event_file_text(std::string_view text, std::string_view source);

std::vector<std::string> read_event_file(const std::filesystem::path& path);

// `-e` argument: the name of an existing file is read as an events file; anything else is a
// comma-separated list of names.
std::vector<std::string> parse_event_argument(std::string_view argument);

}  // namespace telar::prof
