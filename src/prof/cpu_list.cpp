#include "prof/cpu_list.hpp"

#include <unistd.h>

#include <algorithm>
#include <fstream>

#include "core/error.hpp"
#include "core/parse.hpp"

namespace telar::prof {

std::vector<int> parse_cpu_list(std::string_view text, std::string_view what) {
  std::vector<int> cpus;
  for (const auto& raw : split(text, ',')) {
    const std::string part{trim(raw)};
    require(!part.empty(), "{}: empty entry in '{}'; write CPUs like 2-31 or 0,2,4-7", what, text);
    const auto dash = part.find('-');
    const std::int64_t first = parse_int(part.substr(0, dash), what);
    const std::int64_t last =
        dash == std::string::npos ? first : parse_int(part.substr(dash + 1), what);
    require(first >= 0 && last >= first && last < 1 << 16,
            "{}: '{}' is not a CPU range; write CPUs like 2-31 or 0,2,4-7", what, part);
    for (std::int64_t c = first; c <= last; ++c) cpus.push_back(static_cast<int>(c));
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

std::string format_cpu_list(const std::vector<int>& cpus) {
  std::string out;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(cpus[i]);
    if (j > i) out += "-" + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

std::vector<int> online_cpus() {
  std::ifstream in("/sys/devices/system/cpu/online");
  std::string line;
  if (in && std::getline(in, line) && !trim(line).empty()) return parse_cpu_list(line, "online");
  const long n = ::sysconf(_SC_NPROCESSORS_ONLN);
  std::vector<int> cpus;
  for (long c = 0; c < std::max(n, 1L); ++c) cpus.push_back(static_cast<int>(c));
  return cpus;
}

void check_cpus_online(const std::vector<int>& cpus, std::string_view what) {
  const auto online = online_cpus();
  for (int c : cpus)
    require(std::binary_search(online.begin(), online.end(), c),
            "{}: CPU {} is not online here (online: {}); pick CPUs from that list", what, c,
            format_cpu_list(online));
}

}  // namespace telar::prof
