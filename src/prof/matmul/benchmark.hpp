#pragma once
// The seed's validation benchmark (telar prof matmul): n×n double products by the naive loop at
// -O0 and -O3 and by BLAS dgemm, each size and variant profiled as its own scope
// `run/<variant>[<n>]` (with `rep[k]` children when repeated).
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "prof/session.hpp"

namespace telar::prof::matmul {

using Kernel = void (*)(const double*, const double*, double*, std::int64_t);

struct Variant {
  std::string name;  // "naive-O0", "naive-O3", "blas"
  std::string description;
  Kernel kernel = nullptr;
};

const std::vector<Variant>& variants();

// "naive-O0,naive-O3,blas": checks names (suggesting close ones) and availability.
std::vector<std::string> parse_variants(std::string_view text,
                                        std::string_view what = "--variants");

struct Options {
  std::vector<std::int64_t> sizes{32, 64, 128, 256, 512};
  std::vector<std::string> variants{"naive-O0", "naive-O3", "blas"};
  int repeat = 1;  // >= 3: the seed's protocol, min and max dropped from the mean time
  std::uint64_t seed = 1;
};

struct Point {
  std::string variant;
  std::int64_t n = 0;
  double seconds = 0;        // per product (trimmed mean over repetitions)
  double gflops = 0;         // 2n³ / seconds / 1e9
  double max_rel_error = 0;  // vs the naive -O3 result (or the first variant run)
  int record = -1;           // index of the variant's scope in the profile (-1: not recorded)
};

// Runs every size × variant inside whatever scope is open in `session` (normally the run).
// on_point is called after each (for progress lines).
std::vector<Point> run(Session& session, const Options& options,
                       const std::function<void(const Point&)>& on_point = {});

// 2n³: floating-point operations of one product with the sum = 0.0 accumulator.
inline double expected_fp_ops(std::int64_t n) {
  return 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
}

}  // namespace telar::prof::matmul
