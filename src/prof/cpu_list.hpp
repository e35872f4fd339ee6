#pragma once
// CPU lists as Linux writes them ("0-3,8,10-11"): the --cpus option and the kernel's list of
// online CPUs.
#include <string>
#include <string_view>
#include <vector>

namespace telar::prof {

// Sorted, without duplicates; throws telar::Error naming `what` on bad syntax.
std::vector<int> parse_cpu_list(std::string_view text, std::string_view what = "--cpus");

// "0-3,8" from {0,1,2,3,8}.
std::string format_cpu_list(const std::vector<int>& cpus);

// The online CPUs (from /sys/devices/system/cpu/online).
std::vector<int> online_cpus();

// Throws telar::Error if a listed CPU is not online.
void check_cpus_online(const std::vector<int>& cpus, std::string_view what = "--cpus");

}  // namespace telar::prof
