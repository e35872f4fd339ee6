// Graph-level backward against central finite differences of the loss, for the ops whose
// backward lives only in the graph wiring (Add sends its gradient to both branches, Flatten
// relabels it): every parameter of both Add branches and of the layer after the Flatten.
#include <gtest/gtest.h>

#include "../ops/test_util.hpp"
#include "backend/backend.hpp"
#include "graph/builder.hpp"
#include "graph/loss.hpp"

using namespace telar;
using namespace telar::graph;

TEST(GraphGradient, AddAndFlattenMatchFiniteDifferences) {
  GraphBuilder b("add_flatten");
  ValueId x = b.input("x", {2, 5, 5});
  ValueId left = b.conv2d(x, 3, 3, 1, 1, 1, true, "left");
  ValueId right = b.conv2d(x, 3, 1, 1, 0, 1, true, "right");
  ValueId sum = b.add(b.tanh(left, "t"), right, "add");
  b.output(b.linear(b.flatten(sum, "flat"), 4, "fc"));
  Graph g = with_loss(b.finish(), LossKind::CrossEntropy);

  ParameterSet params = ParameterSet::initialize(g, 7);
  auto exe = backend::compile(backend::parse_backend_spec("cpu:ref"), g, params);
  Rng rng(3);
  Tensor images = ops::testing::uniform({2, 2, 5, 5}, rng);
  Tensor labels({2}, DType::I64);
  labels.data<std::int64_t>()[0] = 1;
  labels.data<std::int64_t>()[1] = 3;
  const std::vector<Tensor> inputs = {images, labels};
  // Training mode (backward needs it); the graph has no dropout or batch norm, so the loss is
  // the same function of the parameters as in evaluation.
  auto loss = [&] {
    exe->forward(inputs, backend::Mode::Train);
    return static_cast<double>(exe->output(g.outputs().size() - 1).f32()[0]);
  };

  loss();
  Tensor one(Shape{});
  one.f32()[0] = 1.0f;
  std::vector<Tensor> seeds(g.outputs().size());
  seeds.back() = one;
  exe->backward(seeds);
  for (ValueId id : g.parameters()) {
    Tensor analytic = exe->gradients().at(id).clone();
    ops::testing::expect_gradient(g.value(id).name, params.at(id), analytic, loss);
  }
}
