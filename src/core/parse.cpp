#include "core/parse.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "core/error.hpp"

namespace telar {

std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    std::size_t pos = text.find(separator, start);
    parts.emplace_back(text.substr(start, pos == std::string_view::npos ? pos : pos - start));
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  return parts;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  return text;
}

std::int64_t parse_int(std::string_view text, std::string_view what) {
  text = trim(text);
  std::int64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size())
    fail("{}: '{}' is not an integer; give a whole number", what, text);
  return value;
}

double parse_double(std::string_view text, std::string_view what) {
  std::string s(trim(text));
  char* end = nullptr;
  double value = s.empty() ? 0.0 : std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(value))
    fail("{}: '{}' is not a finite number", what, s);
  return value;
}

std::string to_lower(std::string_view text) {
  std::string s(text);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string to_upper(std::string_view text) {
  std::string s(text);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
  return s;
}

bool parse_bool(std::string_view text, std::string_view what) {
  const std::string s = to_lower(trim(text));
  if (s == "1" || s == "true" || s == "yes" || s == "on") return true;
  if (s == "0" || s == "false" || s == "no" || s == "off") return false;
  fail("{}: '{}' is not a boolean; use 1/0, true/false", what, s);
}

namespace {
// Integers separated by `separator`, each at least `min`; `kind` names them in messages and
// `example` shows a valid list.
std::vector<std::int64_t> parse_bounded_list(std::string_view text, char separator,
                                             std::string_view what, std::int64_t min,
                                             std::string_view kind, const std::string& example) {
  std::vector<std::int64_t> values;
  if (trim(text).empty()) fail("{}: empty list; give {} like {}", what, kind, example);
  for (const auto& part : split(text, separator)) {
    if (trim(part).empty())
      fail("{}: malformed list '{}' (empty element); write {} separated by '{}'", what, text,
           kind, separator);
    std::int64_t v = 0;
    try {
      v = parse_int(part, what);
    } catch (const Error&) {
      fail("{}: malformed list '{}': '{}' is not an integer", what, text, part);
    }
    if (v < min)
      fail("{}: {} must be {}, got {} in '{}'", what, kind, min == 0 ? "0 or more" : "positive", v,
           text);
    values.push_back(v);
  }
  return values;
}
}  // namespace

std::vector<std::int64_t> parse_int_list(std::string_view text, char separator,
                                         std::string_view what) {
  return parse_bounded_list(text, separator, what, 1, "sizes",
                            fmt::format("784{}256{}10", separator, separator));
}

std::vector<std::int64_t> parse_index_list(std::string_view text, char separator,
                                           std::string_view what) {
  return parse_bounded_list(text, separator, what, 0, "indices",
                            fmt::format("0{}1", separator));
}

std::vector<std::int64_t> parse_dims(std::string_view text, std::string_view what) {
  return parse_int_list(text, 'x', what);
}

namespace {
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                        std::tolower(static_cast<unsigned char>(b[j - 1]));
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (same ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}
}  // namespace

std::string closest_match(std::string_view word, const std::vector<std::string>& choices) {
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(2, word.size() / 3) + 1;
  for (const auto& c : choices) {
    std::size_t d = edit_distance(word, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

}  // namespace telar
