#pragma once
#include <chrono>
#include <cstdint>

namespace telar {

inline std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

class Stopwatch {
 public:
  Stopwatch() : start_(now_ns()) {}
  void reset() { start_ = now_ns(); }
  double seconds() const { return static_cast<double>(now_ns() - start_) * 1e-9; }
  std::int64_t nanoseconds() const { return now_ns() - start_; }

 private:
  std::int64_t start_;
};

}  // namespace telar
