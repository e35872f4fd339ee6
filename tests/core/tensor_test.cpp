#include "core/tensor.hpp"

#include <gtest/gtest.h>

#include <cstdint>

using telar::DType;
using telar::Tensor;

TEST(Tensor, ZeroFilledAndAligned) {
  Tensor t({3, 5});
  EXPECT_EQ(t.numel(), 15);
  EXPECT_EQ(t.nbytes(), 60u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(t.raw()) % 64, 0u);
  for (float v : t.span<float>()) EXPECT_EQ(v, 0.0f);
}

TEST(Tensor, CopiesShareStorageCloneDoesNot) {
  Tensor a({4});
  Tensor b = a;
  Tensor c = a.clone();
  a.f32()[2] = 7.0f;
  EXPECT_EQ(b.f32()[2], 7.0f);
  EXPECT_EQ(c.f32()[2], 0.0f);
}

TEST(Tensor, SliceRowsViewsTheRightElements) {
  Tensor a({4, 3});
  for (int i = 0; i < 12; ++i) a.f32()[i] = static_cast<float>(i);
  Tensor rows = a.slice_rows(1, 3);
  ASSERT_EQ(rows.shape(), (telar::Shape{2, 3}));
  EXPECT_EQ(rows.f32()[0], 3.0f);
  EXPECT_EQ(rows.f32()[5], 8.0f);
}

TEST(Tensor, WrongDtypeAccessThrows) {
  Tensor a({2}, DType::I64);
  EXPECT_THROW(a.f32(), telar::Error);
  EXPECT_NO_THROW(a.data<std::int64_t>());
}

TEST(Tensor, ReshapeChecksElementCount) {
  Tensor a({2, 6});
  EXPECT_EQ(a.reshaped({3, 4}).dim(1), 4);
  EXPECT_THROW(a.reshaped({5, 2}), telar::Error);
}
