#include <gtest/gtest.h>

#include "core/error.hpp"
#include "ops/kernels.hpp"
#include "test_util.hpp"

using namespace telar;
using namespace telar::ops;
using namespace telar::ops::testing;

namespace {

EmbeddingBagAttrs bag_attrs(std::int64_t rows, std::int64_t dim, graph::EmbeddingBagMode mode,
                            bool weighted = false) {
  EmbeddingBagAttrs a;
  a.num_embeddings = rows;
  a.dim = dim;
  a.mode = mode;
  a.per_sample_weights = weighted;
  return a;
}

// Rows 0..3 of width 2: (1, 2), (3, 4), (5, 6), (7, 8).
Tensor table4() { return f32({1, 2, 3, 4, 5, 6, 7, 8}, {4, 2}); }

Tensor lookup(const EmbeddingBagAttrs& a, const Tensor& indices, const Tensor& offsets,
              const Tensor& weight, const Tensor* psw = nullptr) {
  Tensor y({offsets.numel(), a.dim});
  y.fill(123.0f);  // overwritten, including empty bags
  embedding_bag_forward(a, indices, offsets, weight, psw, y);
  return y;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST(OpsEmbeddingBag, TwoBagsByHand) {
  Tensor w = table4(), idx = i64({0, 2, 3}), off = i64({0, 2});
  // Bag 0 = rows 0 and 2, bag 1 = row 3 (it ends at indices.numel()).
  expect_values(lookup(bag_attrs(4, 2, graph::EmbeddingBagMode::Sum), idx, off, w), {6, 8, 7, 8});
  expect_values(lookup(bag_attrs(4, 2, graph::EmbeddingBagMode::Mean), idx, off, w), {3, 4, 7, 8});
  Tensor psw = f32({0.5f, 2, -1}, {3});
  expect_values(lookup(bag_attrs(4, 2, graph::EmbeddingBagMode::Sum, true), idx, off, w, &psw),
                {0.5f + 10, 1 + 12, -7, -8});
  // Mean of weighted rows divides the weighted sum by the bag's length.
  expect_values(lookup(bag_attrs(4, 2, graph::EmbeddingBagMode::Mean, true), idx, off, w, &psw),
                {10.5f / 2, 13.0f / 2, -7, -8});
}

TEST(OpsEmbeddingBag, EmptyBagsGiveZeros) {
  // Bags [0, 0), [0, 2), [2, 3), [3, 3): the first and the last are empty.
  Tensor w = table4(), idx = i64({1, 1, 0}), off = i64({0, 0, 2, 3});
  expect_values(lookup(bag_attrs(4, 2, graph::EmbeddingBagMode::Sum), idx, off, w),
                {0, 0, 6, 8, 1, 2, 0, 0});
  expect_values(lookup(bag_attrs(4, 2, graph::EmbeddingBagMode::Mean), idx, off, w),
                {0, 0, 3, 4, 1, 2, 0, 0});
  // No indices at all.
  Tensor none({0}, DType::I64);
  expect_values(lookup(bag_attrs(4, 2, graph::EmbeddingBagMode::Mean), none, i64({0, 0}), w),
                {0, 0, 0, 0});
}

TEST(OpsEmbeddingBag, BackwardByHand) {
  // Row 1 appears twice in bag 0, row 0 once in bag 1; rows 2 and 3 get nothing.
  Tensor idx = i64({1, 1, 0}), off = i64({0, 2});
  Tensor dy = f32({1, 2, 10, 20}, {2, 2}), dw({4, 2});
  dw.fill(9.0f);
  embedding_bag_backward(bag_attrs(4, 2, graph::EmbeddingBagMode::Sum), idx, off, nullptr, dy, dw);
  expect_values(dw, {10, 20, 2, 4, 0, 0, 0, 0});
  embedding_bag_backward(bag_attrs(4, 2, graph::EmbeddingBagMode::Mean), idx, off, nullptr, dy, dw);
  expect_values(dw, {10, 20, 1, 2, 0, 0, 0, 0});
  Tensor psw = f32({3, -1, 0.5f}, {3});
  embedding_bag_backward(bag_attrs(4, 2, graph::EmbeddingBagMode::Sum, true), idx, off, &psw, dy, dw);
  expect_values(dw, {5, 10, 2, 4, 0, 0, 0, 0});
}

TEST(OpsEmbeddingBag, GradientsMatchFiniteDifferences) {
  Rng rng(111);
  const std::int64_t rows = 6, dim = 3;
  // Repeated rows, an empty bag, an unused row (5).
  Tensor idx = i64({0, 3, 3, 1, 4, 2, 0, 0, 1}), off = i64({0, 3, 3, 5});
  Tensor psw = uniform({9}, rng, 0.5f, 2.0f);
  for (auto mode : {graph::EmbeddingBagMode::Sum, graph::EmbeddingBagMode::Mean}) {
    for (bool weighted : {false, true}) {
      const EmbeddingBagAttrs a = bag_attrs(rows, dim, mode, weighted);
      const Tensor* p = weighted ? &psw : nullptr;
      Tensor w = uniform({rows, dim}, rng), y({4, dim}), r = uniform({4, dim}, rng);
      auto objective = [&] {
        embedding_bag_forward(a, idx, off, w, p, y);
        return project(y, r);
      };
      Tensor dw({rows, dim});
      embedding_bag_backward(a, idx, off, p, r, dw);
      expect_gradient(fmt::format("dweight (mean {}, weighted {})",
                                  mode == graph::EmbeddingBagMode::Mean, weighted),
                      w, dw, objective);
      for (std::int64_t d = 0; d < dim; ++d) EXPECT_EQ(dw.f32()[5 * dim + d], 0.0f);
    }
  }
}

TEST(OpsEmbeddingBag, IndexOutOfRangeNamesIndexBagAndTableSize) {
  const EmbeddingBagAttrs a = bag_attrs(4, 2, graph::EmbeddingBagMode::Sum);
  Tensor w = table4(), y({2, 2}), dw({4, 2}), dy({2, 2});
  Tensor off = i64({0, 2});
  const std::string high = error_of([&] {
    embedding_bag_forward(a, i64({0, 1, 4}), off, w, nullptr, y);
  });
  EXPECT_NE(high.find("index 4"), std::string::npos) << high;
  EXPECT_NE(high.find("bag 1"), std::string::npos) << high;
  EXPECT_NE(high.find("4 rows"), std::string::npos) << high;
  const std::string negative = error_of([&] {
    embedding_bag_forward(a, i64({-1, 1, 2}), off, w, nullptr, y);
  });
  EXPECT_NE(negative.find("index -1"), std::string::npos) << negative;
  EXPECT_NE(negative.find("bag 0"), std::string::npos) << negative;
  // The backward validates too (it would otherwise write outside the table).
  EXPECT_THROW(embedding_bag_backward(a, i64({0, 1, 7}), off, nullptr, dy, dw), Error);
}

TEST(OpsEmbeddingBag, BadOffsetsAreErrors) {
  const EmbeddingBagAttrs a = bag_attrs(4, 2, graph::EmbeddingBagMode::Sum);
  Tensor w = table4(), idx = i64({0, 1, 2}), y3({3, 2}), y2({2, 2});
  const std::string decreasing = error_of([&] {
    embedding_bag_forward(a, idx, i64({0, 2, 1}), w, nullptr, y3);
  });
  EXPECT_NE(decreasing.find("non-decreasing"), std::string::npos) << decreasing;
  const std::string past_end = error_of([&] {
    embedding_bag_forward(a, idx, i64({0, 4}), w, nullptr, y2);
  });
  EXPECT_NE(past_end.find("past the end of the 3 indices"), std::string::npos) << past_end;
  const std::string late_start = error_of([&] {
    embedding_bag_forward(a, idx, i64({1, 2}), w, nullptr, y2);
  });
  EXPECT_NE(late_start.find("offsets[0]"), std::string::npos) << late_start;
}

TEST(OpsEmbeddingBag, ManyBagsAgreeWithDefinition) {
  // Enough bags to run threaded; compared with a per-bag sum in double.
  Rng rng(112);
  const std::int64_t rows = 50, dim = 16, bags = 300;
  Tensor w = uniform({rows, dim}, rng);
  std::vector<std::int64_t> idx, off;
  for (std::int64_t b = 0; b < bags; ++b) {
    off.push_back(static_cast<std::int64_t>(idx.size()));
    const auto len = static_cast<std::int64_t>(rng.below(6));
    for (std::int64_t k = 0; k < len; ++k) idx.push_back(static_cast<std::int64_t>(rng.below(rows)));
  }
  const EmbeddingBagAttrs a = bag_attrs(rows, dim, graph::EmbeddingBagMode::Mean);
  Tensor indices = i64(idx), offsets = i64(off);
  Tensor y = lookup(a, indices, offsets, w);
  for (std::int64_t b = 0; b < bags; ++b) {
    const std::int64_t begin = off[b];
    const std::int64_t end = b + 1 < bags ? off[b + 1] : static_cast<std::int64_t>(idx.size());
    for (std::int64_t d = 0; d < dim; ++d) {
      double s = 0.0;
      for (std::int64_t k = begin; k < end; ++k) s += w.f32()[idx[k] * dim + d];
      if (end > begin) s /= static_cast<double>(end - begin);
      ASSERT_NEAR(y.f32()[b * dim + d], s, 1e-5) << "bag " << b;
    }
  }
}
