// The device-neutral parts of a plan: value bindings and the backward's write-or-accumulate
// routing, against hand-derived expectations.
#include "backend/schedule.hpp"

#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"
#include "graph/builder.hpp"

using namespace telar;
using namespace telar::backend;

TEST(Schedule, BindsTheBatchAndMarksWhatNeedsAGradient) {
  graph::GraphBuilder b("t");
  graph::ValueId x = b.input("x", {3, 8, 8});
  graph::ValueId labels = b.input("labels", {}, DType::I64);
  graph::ValueId y = b.batchnorm2d(b.conv2d(x, 4, 3, 1, 1, 1, true, "conv"), "bn");
  b.output(b.linear(b.flatten(y), 10, "fc"));
  graph::Graph g = b.finish();
  const auto bound = bind_values(g, 5, {});
  const auto at = [&](const std::string& name) {
    return bound[static_cast<std::size_t>(g.value_id(name))];
  };
  EXPECT_EQ(at("x").shape, (Shape{5, 3, 8, 8}));
  EXPECT_FALSE(at("x").requires_grad);
  EXPECT_FALSE(at("labels").requires_grad);
  EXPECT_TRUE(at("conv.weight").requires_grad);
  EXPECT_FALSE(at("bn.running_mean").requires_grad);  // a buffer
  EXPECT_EQ(at("conv.out").shape, (Shape{5, 4, 8, 8}));
  EXPECT_TRUE(at("conv.out").requires_grad);  // computed from parameters
  EXPECT_EQ(at("fc.out").shape, (Shape{5, 10}));

  // Asked for, an input needs its gradient, and so does what it flows into.
  const auto with_input = bind_values(g, 2, std::vector<graph::ValueId>{x});
  EXPECT_TRUE(with_input[static_cast<std::size_t>(x)].requires_grad);
  EXPECT_THROW(bind_values(g, 2, std::vector<graph::ValueId>{labels}), Error);  // not f32
}

TEST(Schedule, TheLastReaderWritesAndEarlierReadersAccumulate) {
  // Slots 1..4; step 0 reads 1 and 2, step 1 reads 1 (again) and 3, step 2 reads 4 (seeded by
  // the caller, so its reader accumulates) and 2. Slot 3 needs no gradient.
  const int s1 = 1, s2 = 2, s3 = 3, s4 = 4;
  const std::vector<std::vector<const int*>> reads{{&s1, &s2}, {&s1, &s3}, {&s4, &s2}};
  const std::vector<const int*> seeded{&s4};
  const auto writes = gradient_writes(reads, std::span<const int* const>(seeded),
                                      [](const int* s) { return *s != 3; });
  using W = GradWrite;
  ASSERT_EQ(writes.size(), 3u);
  EXPECT_EQ(writes[2], (std::vector<W>{W::Accumulate, W::Write}));  // backward runs step 2 first
  EXPECT_EQ(writes[1], (std::vector<W>{W::Write, W::None}));
  EXPECT_EQ(writes[0], (std::vector<W>{W::Accumulate, W::Accumulate}));
}

TEST(Schedule, ASlotReadTwiceByOneStepIsWrittenThenAccumulated) {
  const int s = 0;
  const std::vector<std::vector<const int*>> reads{{&s, &s}};
  const auto writes =
      gradient_writes(reads, std::span<const int* const>(), [](const int*) { return true; });
  EXPECT_EQ(writes[0], (std::vector<GradWrite>{GradWrite::Write, GradWrite::Accumulate}));
}

TEST(Schedule, PlansAreMadeOncePerBatchSize) {
  PlanCache<int> cache;
  int made = 0;
  const auto make = [&] {
    ++made;
    return std::make_unique<int>(made);
  };
  EXPECT_EQ(cache.at(32, make), 1);
  EXPECT_EQ(cache.at(8, make), 2);
  EXPECT_EQ(cache.at(32, make), 1);
  EXPECT_EQ(made, 2);
}
