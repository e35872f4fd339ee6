// What a plan holds, estimated before anything is allocated (bench --batch-sweep, train's
// memory check): counted by hand on a small graph.
#include <gtest/gtest.h>

#include <limits>

#include "backend/measure.hpp"
#include "graph/builder.hpp"

using telar::graph::GraphBuilder;
using telar::graph::ValueId;

TEST(MemoryEstimate, CountsEveryValueAndTrainingAddsGradientsAndOptimizerState) {
  GraphBuilder b("small");
  const ValueId x = b.input("x", {10});
  b.output(b.relu(b.linear(x, 4, "fc"), "r"));
  const auto g = b.finish();
  // Batch 8: x 8x10, fc.weight 4x10, fc.bias 4, fc's output 8x4, relu's 8x4: 188 floats.
  EXPECT_EQ(telar::backend::inference_memory_bytes(g, 8), 188 * 4);
  // Training: every value once more (its gradient), and 44 parameters x 2 slots (Adam).
  EXPECT_EQ(telar::backend::training_memory_bytes(g, 8, 2), 2 * 188 * 4 + 44 * 4 * 2);
  EXPECT_EQ(telar::backend::training_memory_bytes(g, 8, 0), 2 * 188 * 4);
}

TEST(MemoryEstimate, AModelLargerThanAnyMachineSaturatesInsteadOfWrapping) {
  GraphBuilder b("huge");
  const ValueId x = b.input("x", {1 << 20});
  b.output(b.linear(x, std::int64_t{1} << 40, "fc", false));
  const auto g = b.finish();
  EXPECT_EQ(telar::backend::training_memory_bytes(g, 1 << 20, 2),
            std::numeric_limits<std::int64_t>::max());
}
