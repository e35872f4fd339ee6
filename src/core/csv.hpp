#pragma once
// CSV, RFC 4180: a field with a comma, a quote or a line break is quoted, its quotes doubled.
#include <string>
#include <string_view>

namespace telar {

std::string csv_field(std::string_view text);

}  // namespace telar
