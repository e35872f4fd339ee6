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
  // Training: relu may write over fc's output (8x4, read by relu alone), the 44 parameters'
  // gradients and 2 state slots each (Adam), and the activations' gradients relu's backward
  // touches at once (its output's and fc's, 8x4 each; fc's backward touches only its output's:
  // x is an input).
  EXPECT_EQ(telar::backend::training_memory_bytes(g, 8, 2), (188 - 32 + 44 + 64 + 44 * 2) * 4);
  EXPECT_EQ(telar::backend::training_memory_bytes(g, 8, 0), (188 - 32 + 44 + 64) * 4);
}

// Where values that do not live at once share memory. Nodes in order: fc1 (x -> a, 8x6), relu
// (a -> r, 8x6), fc2 (r -> o, 8x2), fc3 (a -> s, 8x2, no bias), add (o + s, 8x2: the output).
// By hand at batch 8, in floats: alive at fc1 a (48); at relu a, r (96); at fc2 a, r, o (112);
// at fc3 a, o, s (80: r was last read by fc2); at add o, s and the sum (48). Peak 112, against
// 48 + 48 + 16 + 16 + 16 = 144 for a buffer each; the weights (92) and x (80) in both.
TEST(MemoryEstimate, ThePeakCountsOnlyTheValuesAliveAtOnce) {
  GraphBuilder b("branch");
  const ValueId x = b.input("x", {10});
  const ValueId a = b.linear(x, 6, "fc1");
  const ValueId o = b.linear(b.relu(a, "relu"), 2, "fc2");
  const ValueId s = b.linear(a, 2, "fc3", false);
  b.output(b.add(o, s, "add"));
  const auto g = b.finish();
  const std::int64_t weights = 6 * 10 + 6 + 2 * 6 + 2 + 2 * 6, input = 8 * 10;
  EXPECT_EQ(telar::backend::inference_peak_bytes(g, 8), (weights + input + 112) * 4);
  EXPECT_EQ(telar::backend::inference_memory_bytes(g, 8), (weights + input + 144) * 4);
}

TEST(MemoryEstimate, AModelLargerThanAnyMachineSaturatesInsteadOfWrapping) {
  GraphBuilder b("huge");
  const ValueId x = b.input("x", {1 << 20});
  b.output(b.linear(x, std::int64_t{1} << 40, "fc", false));
  const auto g = b.finish();
  EXPECT_EQ(telar::backend::training_memory_bytes(g, 1 << 20, 2),
            std::numeric_limits<std::int64_t>::max());
}
