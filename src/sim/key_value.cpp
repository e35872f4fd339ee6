#include "sim/key_value.hpp"

#include "core/error.hpp"
#include "core/parse.hpp"

namespace telar::sim {

KeyValueFile KeyValueFile::parse(std::string_view text, std::string_view origin) {
  KeyValueFile file;
  file.origin_ = std::string(origin);
  std::string section;
  int line_number = 0;
  for (const std::string& raw_line : split(text, '\n')) {
    ++line_number;
    std::string_view line = trim(raw_line);
    // A '#' outside quotes starts a comment.
    bool in_quotes = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
      if (line[i] == '"') in_quotes = !in_quotes;
      if (line[i] == '#' && !in_quotes) {
        line = trim(line.substr(0, i));
        break;
      }
    }
    if (line.empty()) continue;
    if (line.front() == '[') {
      require(line.back() == ']' && line.size() > 2, "{}:{}: malformed section header '{}'", origin,
              line_number, line);
      section = std::string(trim(line.substr(1, line.size() - 2)));
      continue;
    }
    const std::size_t eq = line.find('=');
    require(eq != std::string_view::npos && eq > 0, "{}:{}: expected key=value, got '{}'", origin,
            line_number, line);
    std::string key(trim(line.substr(0, eq)));
    std::string value(trim(line.substr(eq + 1)));
    require(!value.empty(), "{}:{}: key '{}' has no value", origin, line_number, key);
    bool quoted = false;
    if (value.size() >= 2 && ((value.front() == '"' && value.back() == '"') ||
                              (value.front() == '\'' && value.back() == '\''))) {
      value = value.substr(1, value.size() - 2);
      quoted = true;
    }
    const std::string full = section.empty() ? key : section + "." + key;
    file.values_[full] = value;
    file.quoted_[full] = quoted;
  }
  return file;
}

std::optional<long long> KeyValueFile::get_int(const std::string& key) const {
  auto it = values_.find(key);
  if (it == values_.end()) return std::nullopt;
  const std::string& v = it->second;
  if (v == "true") return 1;
  if (v == "false") return 0;
  return parse_int(v, origin_ + ": " + key);
}

std::optional<std::string> KeyValueFile::get_string(const std::string& key) const {
  auto it = values_.find(key);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

}  // namespace telar::sim
