// Training measurably learns the synthetic click rule: after a few epochs the test AUC and
// accuracy are well above chance and the base rate (a model that has learnt nothing scores
// AUC 0.5 and at best the base rate).
#include <gtest/gtest.h>

#include "dlrm/runner.hpp"

using namespace telar;
using namespace telar::dlrm;

TEST(DlrmLearning, SyntheticClicksAreLearnt) {
  const DlrmConfig c = make_config(8, "400-400-400", "8-16-8", "16-1", "dot", false);
  DlrmModel model(c, StorageKind::Memory, 3);
  auto exe = make_executor(model, "cpu", {LossFunction::Bce, 3});
  auto train = make_synthetic_data(c, BatchPlan{12000, 64}, {4, false}, 5, 0);
  auto test = make_synthetic_data(c, BatchPlan{3000, 500}, {4, false}, 5, 1);
  // The base rate of the test set: the accuracy of always answering the majority class.
  double clicks = 0;
  DlrmBatch b;
  for (std::int64_t j = 0; j < test->batches(); ++j) {
    test->batch(j, b);
    for (float y : b.target.span<float>()) clicks += y;
  }
  const double base = std::max(clicks, 3000 - clicks) / 3000;
  const TestReport before = evaluate(*exe, *test);
  RunOptions o;
  o.epochs = 3;
  o.learning_rate = 0.1f;
  o.print_freq = 1000;
  const RunSummary s = run_dlrm(*exe, *train, test.get(), o);
  ASSERT_TRUE(s.test.has_value());
  EXPECT_GT(s.test->auc, 0.75) << "base rate " << base;
  EXPECT_GT(s.test->accuracy, base + 0.05) << "base rate " << base;
  EXPECT_LT(s.test->loss, before.loss);
}
