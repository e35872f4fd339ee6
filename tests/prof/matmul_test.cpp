// The seed's matmul validation workload: every variant computes the product; where the
// fp_arith events can be counted, the naive loop retires exactly 2n³ floating-point operations.
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.hpp"
#include "prof/derived_metrics.hpp"
#include "prof/matmul/benchmark.hpp"
#include "prof/matmul/kernels.hpp"

using namespace telar::prof;

namespace {

// The product written out independently of the kernels under test (i-j-k order).
std::vector<double> reference_product(const std::vector<double>& a, const std::vector<double>& b,
                                      int n) {
  std::vector<double> c(a.size(), 0.0);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      long double s = 0;
      for (int k = 0; k < n; ++k) s += static_cast<long double>(a[i * n + k]) * b[k * n + j];
      c[i * n + j] = static_cast<double>(s);
    }
  return c;
}

}  // namespace

TEST(ProfMatmul, EveryVariantComputesTheProduct) {
  const int n = 37;  // not a multiple of any vector width
  std::vector<double> a(n * n), b(n * n);
  for (int i = 0; i < n * n; ++i) a[i] = std::sin(i), b[i] = std::cos(3 * i);
  const auto expected = reference_product(a, b, n);
  for (const auto& v : matmul::variants()) {
    std::vector<double> c(n * n, -1.0);
    v.kernel(a.data(), b.data(), c.data(), n);
    for (int i = 0; i < n * n; ++i) ASSERT_NEAR(c[i], expected[i], 1e-12) << v.name << " at " << i;
  }
}

TEST(ProfMatmul, VariantNamesAreChecked) {
  EXPECT_EQ(matmul::parse_variants("naive-O0,naive-O3"),
            (std::vector<std::string>{"naive-O0", "naive-O3"}));
  try {
    matmul::parse_variants("naive-O2");
    FAIL();
  } catch (const telar::Error& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean"), std::string::npos) << e.what();
  }
}

TEST(ProfMatmul, BenchmarkProfilesEachSizeAndVariantAsAScope) {
  SessionOptions o;
  o.events = {"task-clock"};
  Session s(o);
  s.begin(ScopeLabel::run());
  matmul::Options m;
  m.sizes = {16, 32};
  m.variants = {"naive-O0", "naive-O3"};
  m.repeat = 3;
  const auto points = matmul::run(s, m);
  s.end();
  const Profile p = s.finish();
  ASSERT_EQ(points.size(), 4u);
  EXPECT_EQ(p.records[static_cast<std::size_t>(points[3].record)].path, "run/naive-O3[32]");
  EXPECT_EQ(points[1].max_rel_error, 0.0) << "-O0 and -O3 do the same operations in the same order";
  for (const auto& pt : points) EXPECT_GT(pt.seconds, 0.0);
  bool has_rep = false;
  for (const auto& r : p.records) has_rep = has_rep || r.path == "run/naive-O0[16]/rep[2]";
  EXPECT_TRUE(has_rep);
}

TEST(ProfMatmul, NaiveLoopRetiresExactlyTwoNCubedFpOperations) {
  SessionOptions o;
  o.events = {"fp_arith_inst_retired.scalar_double", "fp_arith_inst_retired.128b_packed_double",
              "fp_arith_inst_retired.256b_packed_double",
              "fp_arith_inst_retired.512b_packed_double"};
  o.counting.domain = Domain::User;
  std::unique_ptr<Session> s;
  try {
    s = std::make_unique<Session>(o);
  } catch (const telar::Error& e) {
    GTEST_SKIP() << "the fp_arith events cannot be named here: " << e.what();
  }
  // Built for baseline x86-64 (SSE2), the kernels can only use scalar and 128-bit
  // instructions; the wider classes are counted where they exist, in case flags change.
  for (std::size_t i = 0; i < 2; ++i) {
    const auto& e = s->events()[i];
    if (!e.unavailable.empty())
      GTEST_SKIP() << "this machine cannot count " << e.name << " (" << e.unavailable
                   << "), so the 2n³ check cannot run";
  }
  const int n = 128;
  std::vector<double> a(n * n, 1.5), b(n * n, 0.5), c(n * n);
  s->begin(ScopeLabel::region("naive-O0", n));
  matmul::naive_o0(a.data(), b.data(), c.data(), n);
  s->end();
  s->begin(ScopeLabel::region("naive-O3", n));
  matmul::naive_o3(a.data(), b.data(), c.data(), n);
  s->end();
  const Profile p = s->finish();
  for (const auto& r : p.records)
    EXPECT_EQ(fp_operations(totals_of(p, r)), matmul::expected_fp_ops(n)) << r.path;  // 4,194,304
}
