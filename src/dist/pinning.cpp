#include "dist/pinning.hpp"

#include <pthread.h>
#include <sched.h>

#include <numeric>

namespace telar::dist {

namespace {

std::vector<int> cpus_in(const cpu_set_t& set) {
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

}  // namespace

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return {};
  return cpus_in(set);
}

std::vector<std::vector<int>> plan_pinning(const std::vector<int>& threads,
                                           const std::vector<int>& allowed) {
  const int needed = std::accumulate(threads.begin(), threads.end(), 0);
  if (threads.empty() || needed > static_cast<int>(allowed.size())) return {};
  std::vector<std::vector<int>> plan;
  std::size_t next = 0;
  for (int n : threads) {
    if (n < 1) return {};
    plan.emplace_back(allowed.begin() + static_cast<std::ptrdiff_t>(next),
                      allowed.begin() + static_cast<std::ptrdiff_t>(next + static_cast<std::size_t>(n)));
    next += static_cast<std::size_t>(n);
  }
  return plan;
}

bool pin_this_thread(const std::vector<int>& cpus) {
  if (cpus.empty()) return false;
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus) {
    if (c < 0 || c >= CPU_SETSIZE) return false;
    CPU_SET(c, &set);
  }
  return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

std::vector<int> this_thread_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (pthread_getaffinity_np(pthread_self(), sizeof(set), &set) != 0) return {};
  return cpus_in(set);
}

}  // namespace telar::dist
