#include "sim/key_value.hpp"

#include <algorithm>

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
    require(key.find_first_of(" \t") == std::string::npos,
            "{}:{}: expected key=value, got '{}' (is this a .cfg or tile file?)", origin,
            line_number, line);
    require(!value.empty(), "{}:{}: key '{}' has no value", origin, line_number, key);
    bool quoted = false;
    if (value.size() >= 2 && ((value.front() == '"' && value.back() == '"') ||
                              (value.front() == '\'' && value.back() == '\''))) {
      value = value.substr(1, value.size() - 2);
      quoted = true;
    }
    const std::string full = section.empty() ? key : section + "." + key;
    if (auto seen = file.lines_.find(full); seen != file.lines_.end())
      fail("{}:{}: '{}' is set twice (first on line {}); keep one", origin, line_number, full,
           seen->second);
    file.values_[full] = value;
    file.quoted_[full] = quoted;
    file.lines_[full] = line_number;
  }
  return file;
}

void KeyValueFile::require_known(const std::vector<std::string>& known,
                                 std::string_view what) const {
  for (const auto& [key, line] : lines_) {
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    // The nearest known key: the same name in another section (a key before its section, a
    // misspelt section), else the closest spelling.
    const std::string_view name = std::string_view(key).substr(key.rfind('.') + 1);
    std::string near;
    for (const std::string& k : known)
      if (std::string_view(k).substr(k.rfind('.') + 1) == name) near = k;
    if (near.empty()) near = closest_match(key, known);
    const bool sectioned = std::any_of(known.begin(), known.end(), [](const std::string& k) {
      return k.find('.') != std::string::npos;
    });
    const bool top_level = sectioned && key.find('.') == std::string::npos;
    fail("{}:{}: unknown key '{}'{} in {}{}", origin_, line, key,
         top_level ? " (before any [section])" : "", what,
         near.empty() ? std::string() : "; did you mean '" + near + "'?");
  }
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
