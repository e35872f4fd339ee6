#pragma once
// Parsing of user-typed values (command-line arguments, config files), with errors that name
// the option and say what is expected.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace telar {

std::vector<std::string> split(std::string_view text, char separator);
std::string_view trim(std::string_view text);
// ASCII case folding (names of events, options and formats).
std::string to_lower(std::string_view text);
std::string to_upper(std::string_view text);

// Integer; `what` names the option in the error message ("--batch-size").
std::int64_t parse_int(std::string_view text, std::string_view what);
double parse_double(std::string_view text, std::string_view what);
bool parse_bool(std::string_view text, std::string_view what);  // 1/0/true/false/yes/no/on/off
// A positive integer list separated by `separator`, e.g. "784-256-128-10".
std::vector<std::int64_t> parse_int_list(std::string_view text, char separator,
                                         std::string_view what);
// Indices (0 or more) separated by `separator`, e.g. GPU numbers "0,1".
std::vector<std::int64_t> parse_index_list(std::string_view text, char separator,
                                           std::string_view what);
// "3x224x224" -> {3, 224, 224}
std::vector<std::int64_t> parse_dims(std::string_view text, std::string_view what);
// Suggests the closest of `choices` (edit distance), or "" if none is close.
std::string closest_match(std::string_view word, const std::vector<std::string>& choices);

}  // namespace telar
