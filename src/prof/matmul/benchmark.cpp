#include "prof/matmul/benchmark.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/parse.hpp"
#include "core/rng.hpp"
#include "prof/matmul/kernels.hpp"

namespace telar::prof::matmul {

const std::vector<Variant>& variants() {
  static const std::vector<Variant> list = {
      {"naive-O0", "naive triple loop with a sum = 0.0 accumulator, compiled at -O0", naive_o0},
      {"naive-O3", "the same loop compiled at -O3", naive_o3},
      {"blas", "BLAS dgemm (OpenBLAS)", blas_dgemm},
  };
  return list;
}

std::vector<std::string> parse_variants(std::string_view text, std::string_view what) {
  std::vector<std::string> names, known;
  for (const auto& v : variants()) known.push_back(v.name);
  for (const auto& raw : split(text, ',')) {
    const std::string name{trim(raw)};
    if (name.empty()) continue;
    auto it = std::find_if(variants().begin(), variants().end(),
                           [&](const Variant& v) { return v.name == name; });
    if (it == variants().end()) {
      const std::string near = closest_match(name, known);
      fail("{}: unknown variant '{}'{}; choose from naive-O0, naive-O3, blas", what, name,
           near.empty() ? "" : " (did you mean '" + near + "'?)");
    }
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  require(!names.empty(), "{}: no variant given; choose from naive-O0, naive-O3, blas", what);
  return names;
}

namespace {

const Variant& variant_named(const std::string& name) {
  for (const auto& v : variants())
    if (v.name == name) return v;
  fail("unknown matmul variant '{}'", name);
}

double trimmed_mean(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  if (values.size() >= 3) values = std::vector<double>(values.begin() + 1, values.end() - 1);
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

}  // namespace

std::vector<Point> run(Session& session, const Options& options,
                       const std::function<void(const Point&)>& on_point) {
  require(options.repeat >= 1, "--repeat must be at least 1");
  for (auto n : options.sizes)
    require(n >= 1 && n <= 16384, "--sizes: {} is out of range; use sizes from 1 to 16384", n);
  std::vector<Point> points;
  for (const std::int64_t n : options.sizes) {
    const auto elements = static_cast<std::size_t>(n * n);
    std::vector<double> a(elements), b(elements), c(elements), reference;
    Rng rng(options.seed + static_cast<std::uint64_t>(n));
    for (auto& x : a) x = rng.uniform();
    for (auto& x : b) x = rng.uniform();
    for (const auto& name : options.variants) {
      const Variant& v = variant_named(name);
      std::fill(c.begin(), c.end(), 0.0);
      std::vector<double> seconds;
      session.begin(ScopeLabel::region(name, n));
      const int region_record = session.current_record();
      for (int r = 0; r < options.repeat; ++r) {
        if (options.repeat > 1) session.begin(ScopeLabel::region("rep", r));
        const std::int64_t start = now_ns();
        v.kernel(a.data(), b.data(), c.data(), n);
        seconds.push_back(static_cast<double>(now_ns() - start) * 1e-9);
        if (options.repeat > 1) session.end(ScopeKind::Region);
      }
      session.end(ScopeKind::Region);

      Point p;
      p.variant = name;
      p.n = n;
      p.seconds = trimmed_mean(seconds);
      p.gflops = p.seconds > 0 ? expected_fp_ops(n) / p.seconds * 1e-9 : 0;
      p.record = region_record;
      if (reference.empty()) {
        reference = c;
      } else {
        double max_diff = 0, max_ref = 0;
        for (std::size_t i = 0; i < elements; ++i) {
          max_diff = std::max(max_diff, std::abs(c[i] - reference[i]));
          max_ref = std::max(max_ref, std::abs(reference[i]));
        }
        p.max_rel_error = max_ref > 0 ? max_diff / max_ref : max_diff;
      }
      points.push_back(p);
      if (on_point) on_point(p);
    }
  }
  return points;
}

}  // namespace telar::prof::matmul
