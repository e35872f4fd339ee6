// Graph-level backward against central finite differences of the loss, for the ops whose
// backward lives only in the graph wiring (Add sends its gradient to both branches, Flatten
// relabels it): every parameter of both Add branches and of the layer after the Flatten. And
// the ops ONNX import brings (Pad, Reshape, Transpose, Slice, broadcasting arithmetic,
// HardSigmoid, HardSwish, ReduceMean, Sqrt, Erf, Pow, ConvTranspose; attention's MatMul, Softmax
// over the last axis, Expand and LayerNorm) wired into graphs, on the
// reference and the oneDNN kernels.
#include <gtest/gtest.h>

#include "../ops/test_util.hpp"
#include "backend/backend.hpp"
#include "graph/builder.hpp"
#include "graph/loss.hpp"

using namespace telar;
using namespace telar::graph;

namespace {

// Every parameter's gradient from the backend's backward against finite differences of the
// cross-entropy of a random batch of `input` shape.
void expect_parameter_gradients(const Graph& g, const char* backend, const Shape& input) {
  ParameterSet params = ParameterSet::initialize(g, 7);
  auto exe = backend::compile(backend::parse_backend_spec(backend), g, params);
  Rng rng(3);
  Tensor images = ops::testing::uniform(input, rng);
  Tensor labels({2}, DType::I64);
  labels.data<std::int64_t>()[0] = 1;
  labels.data<std::int64_t>()[1] = 3;
  const std::vector<Tensor> inputs = {images, labels};
  // Training mode (backward needs it); the graph has no dropout or batch norm, so the loss is
  // the same function of the parameters as in evaluation.
  auto loss = [&] {
    exe->parameters_updated();  // the oneDNN kernels keep reordered copies of the weights
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

}  // namespace

TEST(GraphGradient, AddAndFlattenMatchFiniteDifferences) {
  GraphBuilder b("add_flatten");
  ValueId x = b.input("x", {2, 5, 5});
  ValueId left = b.conv2d(x, 3, 3, 1, 1, 1, true, "left");
  ValueId right = b.conv2d(x, 3, 1, 1, 0, 1, true, "right");
  ValueId sum = b.add(b.tanh(left, "t"), right, "add");
  b.output(b.linear(b.flatten(sum, "flat"), 4, "fc"));
  Graph g = with_loss(b.finish(), LossKind::CrossEntropy);

  expect_parameter_gradients(g, "cpu:ref", {2, 2, 5, 5});
}

TEST(GraphGradient, TheImportedOpsMatchFiniteDifferences) {
  GraphBuilder b("onnx_ops");
  Graph& g0 = b.graph();
  ValueId x = b.input("x", {2, 4, 4});
  PadAttrs pad;
  pad.top = 1, pad.left = 0, pad.bottom = 0, pad.right = 2;
  ValueId padded = g0.add_node(OpKind::Pad, "pad", pad, {x});                // [B, 2, 5, 6]
  ValueId conv0 = b.conv2d(padded, 4, 3, 1, 1, 1, true, "conv");             // [B, 4, 5, 6]
  ResizeAttrs up_size;  // bilinear up to [B, 4, 7, 9], then back with aligned corners
  up_size.out_h = 7, up_size.out_w = 9;
  ResizeAttrs down_size;
  down_size.align_corners = true;
  down_size.out_h = 5, down_size.out_w = 6;
  ValueId resized =
      g0.add_node(OpKind::Resize, "resize_down", down_size,
                  {g0.add_node(OpKind::Resize, "resize_up", up_size, {conv0})});  // [B, 4, 5, 6]
  ConvTranspose2dAttrs up;  // 3x3, stride 1, pad 1, 2 groups: the same size
  up.in_channels = up.out_channels = 4;
  up.kernel_h = up.kernel_w = 3;
  up.pad_h = up.pad_w = 1;
  up.groups = 2;
  ValueId conv = g0.add_node(
      OpKind::ConvTranspose2d, "deconv", up,
      {resized, g0.add_parameter("deconv.weight", {4, 2, 3, 3}, Initializer::uniform(-0.3f, 0.3f)),
       g0.add_parameter("deconv.bias", {4}, Initializer::uniform(-0.1f, 0.1f))});
  // (LeakyReLU's kink at 0 would sit among the convolution's outputs, where a finite-difference
  // step carries some across it: its gradient is checked on the kernel, tests/ops.)
  ValueId smooth = b.tanh(conv, "tanh");
  ReshapeAttrs groups;
  groups.dims = {2, 2, 5, 6};
  ValueId grouped = g0.add_node(OpKind::Reshape, "group", groups, {smooth});
  TransposeAttrs perm;
  perm.perm = {0, 2, 1, 3, 4};
  ValueId shuffled = g0.add_node(OpKind::Transpose, "shuffle", perm, {grouped});
  ReshapeAttrs back;
  back.dims = {4, 5, 6};
  ValueId ungrouped = g0.add_node(OpKind::Reshape, "ungroup", back, {shuffled});
  ValueId first = g0.add_node(OpKind::Slice, "first", SliceAttrs{1, 0, 2, {}}, {ungrouped});
  ValueId second = g0.add_node(OpKind::Slice, "second", SliceAttrs{1, 2, 4, {}}, {ungrouped});
  ValueId scale = g0.add_parameter("scale", {2, 1, 1}, Initializer::uniform(0.5f, 1.5f));
  ValueId scaled = g0.add_node(OpKind::Mul, "scale_mul", {}, {second, scale});
  ValueId gate = g0.add_node(OpKind::HardSigmoid, "gate", EltwiseAttrs{1.0f / 6, 0.5f},
                             {b.global_avgpool(first, "squeeze")});
  ReshapeAttrs keep;
  keep.dims = {2, 1, 1};
  ValueId gate4 = g0.add_node(OpKind::Reshape, "keepdims", keep, {gate});
  ValueId gated = g0.add_node(OpKind::Mul, "excite", {}, {scaled, gate4});
  ValueId divisor = g0.add_parameter("divisor", {1, 1, 6}, Initializer::uniform(1.0f, 2.0f));
  ValueId ratio = g0.add_node(OpKind::Div, "ratio", {}, {gated, divisor});
  ValueId diff = g0.add_node(OpKind::Sub, "diff", {}, {ratio, first});
  // Tanh keeps HardSwish between its kinks at -3 and 3 (the kernel tests cover them).
  ValueId swish = g0.add_node(OpKind::HardSwish, "swish", {}, {b.tanh(diff, "bounded")});
  // A layer norm over the channels, as imported: ReduceMean, Sub, Mul, Add, Sqrt, Div; then Erf.
  ValueId mean = g0.add_node(OpKind::ReduceMean, "mean", ReduceAttrs{1}, {swish});
  ValueId centred = g0.add_node(OpKind::Sub, "centre", {}, {swish, mean});
  ValueId var = g0.add_node(OpKind::ReduceMean, "variance", ReduceAttrs{1},
                            {g0.add_node(OpKind::Mul, "square", {}, {centred, centred})});
  ValueId eps = g0.add_parameter("eps", {1}, Initializer::constant(0.5f));
  ValueId sd = g0.add_node(OpKind::Sqrt, "sd", {}, {g0.add_node(OpKind::Add, "plus_eps", {}, {var, eps})});
  ValueId gelu = g0.add_node(OpKind::Erf, "erf", {}, {g0.add_node(OpKind::Div, "norm", {}, {centred, sd})});
  // Pow with an odd exponent over both signs, and a fractional one over positive values.
  ValueId cube = g0.add_node(OpKind::Pow, "cube", EltwiseAttrs{3.0f, 0.0f}, {gelu});
  ValueId lift = g0.add_parameter("lift", {1}, Initializer::constant(2.0f));  // cube + 2 > 1
  ValueId root = g0.add_node(OpKind::Pow, "root", EltwiseAttrs{-0.5f, 0.0f},
                             {g0.add_node(OpKind::Add, "shift", {}, {cube, lift})});
  b.output(b.linear(b.flatten(root, "flat"), 4, "fc"));
  const Graph g = with_loss(b.finish(), LossKind::CrossEntropy);
  for (const char* backend : {"cpu:ref", "cpu"}) {
    SCOPED_TRACE(backend);
    expect_parameter_gradients(g, backend, {2, 2, 4, 4});
  }
}

// Attention as ONNX import builds it: queries and keys scaled by parameters, split into heads,
// scores by a MatMul of two computed tensors, softmax over the last axis, the context by a
// second MatMul, a class token expanded over the batch and concatenated in front. The gradient
// of every parameter flows through both operands of both products, and through a LayerNorm of
// the tokens.
TEST(GraphGradient, AttentionMatchesFiniteDifferences) {
  GraphBuilder b("attention");
  Graph& g0 = b.graph();
  ValueId x = b.input("x", {4, 6});  // 4 tokens of 6 features
  auto scaled = [&](const std::string& name) {
    ValueId w = g0.add_parameter(name, {1, 4, 6}, Initializer::uniform(0.5f, 1.5f));
    ReshapeAttrs heads;
    heads.dims = {4, 2, 3};
    TransposeAttrs by_head;
    by_head.perm = {0, 2, 1, 3};  // [B, 2 heads, 4 tokens, 3]
    return g0.add_node(OpKind::Transpose, name + "/heads", by_head,
                       {g0.add_node(OpKind::Reshape, name + "/split", heads,
                                    {g0.add_node(OpKind::Mul, name + "/scale", {}, {x, w})})});
  };
  ValueId q = scaled("wq"), k = scaled("wk"), v = scaled("wv");
  TransposeAttrs keys;
  keys.perm = {0, 1, 3, 2};
  ValueId scores = g0.add_node(OpKind::MatMul, "scores", {},
                               {q, g0.add_node(OpKind::Transpose, "kt", keys, {k})});
  ValueId p = g0.add_node(OpKind::Softmax, "p", {}, {scores});
  ValueId context = g0.add_node(OpKind::MatMul, "context", {}, {p, v});  // [B, 2, 4, 3]
  ReshapeAttrs tokens;
  tokens.dims = {8, 3};
  ValueId cls =
      g0.add_node(OpKind::Expand, "cls", {},
                  {x, g0.add_parameter("cls_token", {1, 1, 3}, Initializer::uniform(-1.0f, 1.0f))});
  ValueId seq = b.concat({cls, g0.add_node(OpKind::Reshape, "merge", tokens, {context})}, "seq");
  // A transformer's LayerNorm over each token's features.
  ValueId norm =
      g0.add_node(OpKind::LayerNorm, "norm", LayerNormAttrs{.features = 3, .eps = 1e-3f},
                  {seq, g0.add_parameter("norm_scale", {3}, Initializer::uniform(0.5f, 1.5f)),
                   g0.add_parameter("norm_bias", {3}, Initializer::uniform(-0.5f, 0.5f))});
  b.output(b.linear(b.flatten(norm, "flat"), 4, "fc"));
  const Graph g = with_loss(b.finish(), LossKind::CrossEntropy);
  for (const char* backend : {"cpu:ref", "cpu"}) {
    SCOPED_TRACE(backend);
    expect_parameter_gradients(g, backend, {2, 4, 6});
  }
}
