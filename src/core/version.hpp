#pragma once
#include <string>

namespace telar {

std::string version();          // "0.1.0"
std::string build_summary();    // version, compiler, optional parts compiled in

}  // namespace telar
