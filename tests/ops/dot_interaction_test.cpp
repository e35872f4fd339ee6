#include <gtest/gtest.h>

#include <vector>

#include "ops/kernels.hpp"
#include "test_util.hpp"

using namespace telar;
using namespace telar::ops;
using namespace telar::ops::testing;

namespace {

DotInteractionAttrs interaction(std::int64_t tables, std::int64_t dim, bool self) {
  DotInteractionAttrs a;
  a.num_sparse = tables;
  a.dim = dim;
  a.self_interaction = self;
  return a;
}

// dense (1, 0) and four embeddings (0, 1), (1, 1), (2, -1), (-1, 3), one sample.
std::vector<Tensor> four_tables() {
  return {f32({1, 0}, {1, 2}), f32({0, 1}, {1, 2}), f32({1, 1}, {1, 2}), f32({2, -1}, {1, 2}),
          f32({-1, 3}, {1, 2})};
}

}  // namespace

TEST(OpsDotInteraction, FourTablesByHand) {
  auto s = four_tables();
  Tensor y({1, 2 + 10});
  dot_interaction_forward(interaction(4, 2, false), s, y);
  // dense, then S1.S0 | S2.S0 S2.S1 | S3.S0 S3.S1 S3.S2 | S4.S0 S4.S1 S4.S2 S4.S3
  expect_values(y, {1, 0, 0, 1, 1, 2, -1, 1, -1, 3, 2, -5});
}

TEST(OpsDotInteraction, SelfInteractionIncludesTheDiagonal) {
  auto s = four_tables();
  Tensor y({1, 2 + 15});
  dot_interaction_forward(interaction(4, 2, true), s, y);
  // S0.S0 | S1.S0 S1.S1 | S2.S0 S2.S1 S2.S2 | S3.S0 .. S3.S3 | S4.S0 .. S4.S4
  expect_values(y, {1, 0, 1, 0, 1, 1, 1, 2, 2, -1, 1, 5, -1, 3, 2, -5, 10});
}

TEST(OpsDotInteraction, BackwardByHand) {
  // One table: y = [S0, S1.S0]. With dy = (1, 2 | 3): dS0 = (1, 2) + 3 S1, dS1 = 3 S0.
  std::vector<Tensor> s{f32({1, 2}, {1, 2}), f32({3, 4}, {1, 2})};
  Tensor dy = f32({1, 2, 3}, {1, 3});
  std::vector<Tensor> ds{Tensor({1, 2}), Tensor({1, 2})};
  dot_interaction_backward(interaction(1, 2, false), s, dy, ds);
  expect_values(ds[0], {1 + 9, 2 + 12});
  expect_values(ds[1], {3, 6});
  // With the diagonal: y = [S0, S0.S0, S1.S0, S1.S1]; dS0 = dense + 2 a S0 + b S1, dS1 = b S0
  // + 2 c S1 for dy = (1, 2 | a=1, b=3, c=-1).
  Tensor dys = f32({1, 2, 1, 3, -1}, {1, 5});
  dot_interaction_backward(interaction(1, 2, true), s, dys, ds);
  expect_values(ds[0], {1 + 2 + 9, 2 + 4 + 12});
  expect_values(ds[1], {3 - 6, 6 - 8});
}

TEST(OpsDotInteraction, GradientsMatchFiniteDifferences) {
  Rng rng(121);
  for (bool self : {false, true}) {
    const DotInteractionAttrs a = interaction(3, 4, self);
    std::vector<Tensor> s;
    for (int k = 0; k < 4; ++k) s.push_back(uniform({3, 4}, rng));
    Tensor y({3, 4 + graph::interaction_pairs(3, self)}), r = uniform(y.shape(), rng);
    auto objective = [&] {
      dot_interaction_forward(a, s, y);
      return project(y, r);
    };
    std::vector<Tensor> ds;
    for (int k = 0; k < 4; ++k) ds.emplace_back(Shape{3, 4});
    dot_interaction_backward(a, s, r, ds);
    for (int k = 0; k < 4; ++k)
      expect_gradient(fmt::format("input {} (self {})", k, self), s[k], ds[k], objective);
  }
}

TEST(OpsDotInteraction, UndefinedGradientSlotsAreSkipped) {
  Rng rng(122);
  const DotInteractionAttrs a = interaction(2, 3, false);
  std::vector<Tensor> s{uniform({2, 3}, rng), uniform({2, 3}, rng), uniform({2, 3}, rng)};
  Tensor dy = uniform({2, 3 + 3}, rng);
  std::vector<Tensor> all{Tensor({2, 3}), Tensor({2, 3}), Tensor({2, 3})};
  dot_interaction_backward(a, s, dy, all);
  std::vector<Tensor> some{Tensor(), Tensor({2, 3}), Tensor()};
  dot_interaction_backward(a, s, dy, some);
  expect_close(some[1], all[1], 0);
}

TEST(OpsDotInteraction, LargeBatchAgreesWithDefinition) {
  Rng rng(123);
  const std::int64_t batch = 256, tables = 8, dim = 16;
  const DotInteractionAttrs a = interaction(tables, dim, false);
  std::vector<Tensor> s;
  for (int k = 0; k <= tables; ++k) s.push_back(uniform({batch, dim}, rng));
  const std::int64_t width = dim + graph::interaction_pairs(tables, false);
  Tensor y({batch, width});
  dot_interaction_forward(a, s, y);
  for (std::int64_t n = 0; n < batch; n += 17) {
    std::int64_t at = dim;
    for (std::int64_t i = 0; i <= tables; ++i)
      for (std::int64_t j = 0; j < i; ++j) {
        double d = 0.0;
        for (std::int64_t k = 0; k < dim; ++k)
          d += static_cast<double>(s[i].f32()[n * dim + k]) * s[j].f32()[n * dim + k];
        ASSERT_NEAR(y.f32()[n * width + at], d, 1e-5);
        ++at;
      }
  }
}
