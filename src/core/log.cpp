#include "core/log.hpp"

#include <atomic>
#include <mutex>
#include <set>
#include <string>

namespace telar::log {

namespace {
std::atomic<Level> g_level{Level::Normal};
}

void set_level(Level level) { g_level = level; }
Level level() { return g_level; }

void notice_once(const char* key, const std::string& message) {
  static std::mutex mutex;
  static std::set<std::string> seen;
  std::lock_guard lock(mutex);
  if (!seen.insert(key).second) return;
  if (g_level != Level::Quiet) fmt::print(stderr, "note: {}\n", message);
}

}  // namespace telar::log
