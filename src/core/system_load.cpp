#include "core/system_load.hpp"

#include <fstream>

namespace telar {

std::optional<double> load_average() {
  std::ifstream in("/proc/loadavg");
  double one_minute = 0.0;
  if (!(in >> one_minute)) return std::nullopt;
  return one_minute;
}

}  // namespace telar
