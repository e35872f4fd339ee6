// Node events reach the callbacks of the trainer that runs the executable, and only those: a
// trainer that is gone leaves nothing behind in the executable it drove (several trainers over
// one executable, one after another, is how benchmarks and the data-parallel warm-up use it).
#include <gtest/gtest.h>

#include <memory>

#include "backend/backend.hpp"
#include "graph/loss.hpp"
#include "graph/zoo/zoo.hpp"
#include "train/callback.hpp"
#include "train/data/data_loader.hpp"
#include "train/data/synthetic.hpp"
#include "train/optim/sgd.hpp"
#include "train/trainer.hpp"

namespace telar::train {
namespace {

struct NodeCounter : Callback {
  bool wants_node_events() const override { return true; }
  void on_node_begin(const TrainState&, const graph::Node&, backend::Pass) override { ++begins; }
  void on_node_end(const TrainState&, const graph::Node&, backend::Pass) override { ++ends; }
  int begins = 0, ends = 0;
};

struct Fixture {
  graph::Graph g = graph::with_loss(graph::zoo::build("mlp:784-16-10"), graph::LossKind::CrossEntropy);
  graph::ParameterSet params = graph::ParameterSet::initialize(g, 1);
  std::unique_ptr<backend::Executable> exe =
      backend::compile(backend::parse_backend_spec("cpu:threads=1"), g, params, {1});
  Sgd sgd{{0.0f, false, 0.0f}};
  DataLoader loader{make_synthetic_classification([] {
                      SyntheticSpec s;
                      s.samples = 16;
                      s.sample_shape = {784};
                      s.num_classes = 10;
                      return s;
                    }()),
                    {8, true, true, 1}};
  Trainer trainer() { return Trainer(*exe, params, sgd, LrSchedule::constant(0.01), {}); }
};

TEST(TrainerNodeEvents, EveryNodeBeginsAndEndsOncePerPassAndBatch) {
  Fixture f;
  NodeCounter counter;
  Trainer t = f.trainer();
  t.add_callback(&counter);
  t.fit(f.loader, nullptr);
  const int nodes = static_cast<int>(f.g.nodes().size());
  EXPECT_GT(counter.begins, 0);
  EXPECT_EQ(counter.begins, counter.ends);
  // Two batches; every node has a forward event, and at most a backward one too.
  EXPECT_GE(counter.begins, 2 * nodes);
  EXPECT_LE(counter.begins, 2 * 2 * nodes);
}

TEST(TrainerNodeEvents, ALaterTrainerOnTheSameExecutableDoesNotReachAnEarlierOnesCallbacks) {
  Fixture f;
  NodeCounter counter;
  {
    // On the heap, so that the later trainer cannot happen to live at the same address.
    auto first = std::make_unique<Trainer>(*f.exe, f.params, f.sgd, LrSchedule::constant(0.01),
                                           TrainerOptions{});
    first->add_callback(&counter);
    first->fit(f.loader, nullptr);
  }
  const int seen = counter.begins;
  ASSERT_GT(seen, 0);
  Trainer second = f.trainer();
  second.fit(f.loader, nullptr);  // used the destroyed trainer as its observer before the fix
  EXPECT_EQ(counter.begins, seen);
}

}  // namespace
}  // namespace telar::train
