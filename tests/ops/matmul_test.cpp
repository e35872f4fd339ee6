// MatMul of two computed tensors and Expand: by hand and against finite differences.
#include <gtest/gtest.h>

#include "ops/kernels.hpp"
#include "test_util.hpp"

using namespace telar;
using namespace telar::ops;
using namespace telar::ops::testing;

TEST(OpsMatMul, ForwardByHand) {
  // Two products, one per leading index: [[1, 2], [3, 4]] [[5], [6]] = [[17], [39]], and
  // [[1, 0], [0, 2]] [[7], [8]] = [[7], [16]].
  Tensor a = f32({1, 2, 3, 4, 1, 0, 0, 2}, {2, 2, 2});
  Tensor b = f32({5, 6, 7, 8}, {2, 2, 1});
  Tensor y({2, 2, 1});
  matmul_forward(a, b, y);
  expect_values(y, {17, 39, 7, 16});
}

TEST(OpsMatMul, BackwardByHand) {
  // y = a b with a [1, 1, 2] = [[1, 2]], b [1, 2, 2] = [[3, 4], [5, 6]], dy = [[1, 10]]:
  // da = dy b^T = [[1*3 + 10*4, 1*5 + 10*6]] = [[43, 65]];
  // db = a^T dy = [[1, 10], [2, 20]].
  Tensor a = f32({1, 2}, {1, 1, 2}), b = f32({3, 4, 5, 6}, {1, 2, 2});
  Tensor dy = f32({1, 10}, {1, 1, 2});
  Tensor da({1, 1, 2}), db({1, 2, 2});
  matmul_backward(a, b, dy, &da, &db);
  expect_values(da, {43, 65});
  expect_values(db, {1, 10, 2, 20});
}

TEST(OpsMatMul, GradientsMatchFiniteDifferences) {
  // Attention's shapes: [B, heads, L, D] x [B, heads, D, L].
  Rng rng(79);
  Tensor a = uniform({2, 3, 4, 5}, rng), b = uniform({2, 3, 5, 4}, rng);
  Tensor r = uniform({2, 3, 4, 4}, rng), y({2, 3, 4, 4});
  auto objective = [&] {
    matmul_forward(a, b, y);
    return project(y, r);
  };
  objective();
  Tensor da(a.shape()), db(b.shape());
  matmul_backward(a, b, r, &da, &db);
  expect_gradient("da", a, da, objective);
  expect_gradient("db", b, db, objective);
}

TEST(OpsExpand, RepeatsTheSampleAndSumsTheGradient) {
  Tensor w = f32({1, 2, 3}, {1, 1, 3});
  Tensor y({2, 1, 3});
  expand_forward(w, y);
  expect_values(y, {1, 2, 3, 1, 2, 3});
  Tensor dy = f32({1, 2, 3, 10, 20, 30}, {2, 1, 3});
  Tensor dw({1, 1, 3});
  expand_backward(dy, dw);
  expect_values(dw, {11, 22, 33});
}
