// The CUDA backend against the reference kernels (cpu:ref): every op's forward and backward,
// whole training steps of the zoo models, a DLRM-shaped graph, dropout masks, batch-size
// changes and parameter updates. These need a GPU: without one (or in a telar built without
// the backend) they skip and say why. What runs everywhere: the errors a machine without a
// usable device gives, and spec checking.
//
// Tolerances: fp32 on both sides, but cuBLAS/cuDNN sum in other orders than the reference
// loops (and cuDNN may pick Winograd/FFT algorithms), so outputs and gradients agree to 1e-4
// relative to the tensor's largest entry on shallow graphs and 1e-3 on deep ones; deep ReLU
// networks compare gradients by cosine similarity (> 0.999), as the CPU backend's test does.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "backend/backend.hpp"
#include "core/error.hpp"
#include "core/rng.hpp"
#include "graph/builder.hpp"
#include "graph/loss.hpp"
#include "graph/zoo/zoo.hpp"

using namespace telar;
using namespace telar::graph;

namespace {

// Why the GPU tests cannot run here ("" when they can).
const std::string& why_no_gpu() {
  static const std::string reason = [] {
    if (!backend::built_in("cuda"))
      return std::string("this telar is built without the CUDA backend");
    try {
      backend::check_usable(backend::parse_backend_spec("cuda:0"));
      return std::string();
    } catch (const Error& e) {
      return std::string(e.what());
    }
  }();
  return reason;
}

#define REQUIRE_GPU()                                                              \
  do {                                                                             \
    if (!why_no_gpu().empty()) GTEST_SKIP() << "no CUDA device: " << why_no_gpu(); \
  } while (0)

Tensor random_tensor(const Shape& shape, std::uint64_t seed, float lo = -1.0f, float hi = 1.0f) {
  Tensor t(shape);
  Rng rng(seed);
  for (auto& v : t.span<float>()) v = rng.uniform(lo, hi);
  return t;
}

Tensor labels(std::int64_t batch, std::int64_t classes, std::uint64_t seed) {
  Tensor t({batch}, DType::I64);
  Rng rng(seed);
  for (auto& v : t.span<std::int64_t>()) v = static_cast<std::int64_t>(rng.below(classes));
  return t;
}

double cosine(const Tensor& a, const Tensor& b) {
  double ab = 0, aa = 0, bb = 0;
  for (std::int64_t i = 0; i < a.numel(); ++i) {
    ab += static_cast<double>(a.f32()[i]) * b.f32()[i];
    aa += static_cast<double>(a.f32()[i]) * a.f32()[i];
    bb += static_cast<double>(b.f32()[i]) * b.f32()[i];
  }
  return aa == 0 && bb == 0 ? 1.0 : ab / std::sqrt(aa * bb + 1e-300);
}

double relative_difference(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.numel(), b.numel());
  double diff = 0, scale = 1e-12;
  for (std::int64_t i = 0; i < a.numel(); ++i) {
    diff = std::max(diff, static_cast<double>(std::abs(a.f32()[i] - b.f32()[i])));
    scale = std::max(scale, static_cast<double>(std::abs(b.f32()[i])));
  }
  return diff / scale;
}

struct Run {
  std::vector<Tensor> outputs;
  ParameterSet grads;
  ParameterSet params_after;
  std::vector<Tensor> input_grads;
};

Run run(const std::string& backend, const Graph& g, const ParameterSet& initial,
        const std::vector<Tensor>& inputs, bool train,
        const std::vector<ValueId>& input_gradients = {}) {
  ParameterSet params = ParameterSet::initialize(g, 0);
  for (ValueId id : initial.ids()) params.at(id).copy_from(initial.at(id));
  backend::CompileOptions options(7);
  options.input_gradients = input_gradients;
  auto exe = backend::compile(backend::parse_backend_spec(backend), g, params, options);
  exe->forward(inputs, train ? backend::Mode::Train : backend::Mode::Eval);
  Run r;
  for (std::size_t i = 0; i < g.outputs().size(); ++i) r.outputs.push_back(exe->output(i).clone());
  if (train) {
    Tensor one(Shape{});
    one.f32()[0] = 1.0f;
    std::vector<Tensor> seeds(g.outputs().size());
    seeds.back() = one;  // the loss is the last output
    exe->backward(seeds);
    r.grads = ParameterSet::zeros_like_parameters(g);
    for (ValueId id : g.parameters()) r.grads.at(id).copy_from(exe->gradients().at(id));
    for (std::size_t i = 0; i < g.inputs().size(); ++i)
      for (ValueId id : input_gradients)
        if (g.inputs()[i] == id) r.input_grads.push_back(exe->input_gradient(i).clone());
  }
  r.params_after = std::move(params);
  return r;
}

void expect_agree(const Graph& g, const std::vector<Tensor>& inputs, double tolerance,
                  bool deep = false, const std::vector<ValueId>& input_gradients = {}) {
  ParameterSet params = ParameterSet::initialize(g, 11);
  for (bool train : {false, true}) {
    SCOPED_TRACE(train ? "training mode" : "evaluation mode");
    Run ref = run("cpu:ref", g, params, inputs, train, input_gradients);
    Run gpu = run("cuda:0", g, params, inputs, train, input_gradients);
    for (std::size_t i = 0; i < ref.outputs.size(); ++i)
      EXPECT_LT(relative_difference(gpu.outputs[i], ref.outputs[i]), tolerance) << "output " << i;
    if (!train) continue;
    for (ValueId id : g.parameters()) {
      if (deep)
        EXPECT_GT(cosine(gpu.grads.at(id), ref.grads.at(id)), 0.999)
            << "gradient of " << g.value(id).name;
      else
        EXPECT_LT(relative_difference(gpu.grads.at(id), ref.grads.at(id)), tolerance)
            << "gradient of " << g.value(id).name;
    }
    for (ValueId id : g.buffers())
      EXPECT_LT(relative_difference(gpu.params_after.at(id), ref.params_after.at(id)), tolerance)
          << "buffer " << g.value(id).name;
    for (std::size_t i = 0; i < ref.input_grads.size(); ++i)
      EXPECT_LT(relative_difference(gpu.input_grads[i], ref.input_grads[i]), tolerance)
          << "input gradient " << i;
  }
}

void expect_model_agrees(const Graph& model, const Shape& input, std::int64_t batch,
                         std::int64_t classes, double tolerance, bool deep = false) {
  Graph g = with_loss(model, LossKind::CrossEntropy);
  Shape x_shape = input;
  x_shape.insert(x_shape.begin(), batch);
  expect_agree(g, {random_tensor(x_shape, 5), labels(batch, classes, 6)}, tolerance, deep);
}

// One op between a parameterised layer and a Linear head into a cross-entropy loss: the head's
// gradient checks the op's forward, the front layer's gradient checks its backward. Without
// pre_bias the front layer has no bias: before a training-mode BatchNorm, which subtracts the
// batch mean, a bias's gradient is zero in exact arithmetic, so what either side computes for
// it is rounding noise that no relative tolerance can compare.
Graph single_op(const std::string& name, const Shape& x,
                const std::function<ValueId(GraphBuilder&, ValueId)>& op,
                bool pre_bias = true, std::int64_t classes = 5) {
  GraphBuilder b(name);
  ValueId in = b.input("x", x);
  ValueId pre = x.size() == 3 ? b.conv2d(in, x[0], 1, 1, 0, 1, pre_bias, "pre")
                              : b.linear(in, x[0], "pre", pre_bias);
  ValueId y = op(b, pre);
  if (b.shape(y).size() > 2) y = b.flatten(y, "flat");
  b.output(b.linear(y, classes, "head"));
  return with_loss(b.finish(), LossKind::CrossEntropy);
}

void expect_single_op_agrees(const std::string& name, const Shape& x,
                             const std::function<ValueId(GraphBuilder&, ValueId)>& op,
                             bool pre_bias = true) {
  SCOPED_TRACE(name);
  Graph g = single_op(name, x, op, pre_bias);
  Shape xs = x;
  xs.insert(xs.begin(), 4);
  expect_agree(g, {random_tensor(xs, 21), labels(4, 5, 22)}, 1e-4);
}

}  // namespace

// ---- runs everywhere -------------------------------------------------------------------------

TEST(CudaBackend, WithoutADeviceCompileIsAnActionableError) {
  if (why_no_gpu().empty()) GTEST_SKIP() << "a CUDA device is usable here";
  Graph g = zoo::build("mnist_cnn");
  ParameterSet p = ParameterSet::initialize(g, 0);
  try {
    backend::compile(backend::parse_backend_spec("cuda:0"), g, p);
    FAIL() << "compile(cuda:0) succeeded without a device";
  } catch (const Error& e) {
    const std::string m = e.what();
    if (backend::built_in("cuda")) {
      EXPECT_NE(m.find("no CUDA device is usable here ("), std::string::npos) << m;
      EXPECT_NE(m.find("): use --backend cpu"), std::string::npos) << m;
    } else {
      EXPECT_NE(m.find("not built into this telar"), std::string::npos) << m;
    }
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
  EXPECT_THROW(backend::check_usable(backend::parse_backend_spec("cuda")), Error);
}

TEST(CudaBackend, BadSpecsAreRejectedWithOrWithoutADevice) {
  Graph g = zoo::build("mnist_cnn");
  ParameterSet p = ParameterSet::initialize(g, 0);
  for (const char* spec : {"cuda:0:threads=2", "cuda:threads=2", "cuda:x", "cuda:-1"}) {
    SCOPED_TRACE(spec);
    try {
      backend::compile(backend::parse_backend_spec(spec), g, p);
      FAIL() << spec << " was accepted";
    } catch (const Error& e) {
      const std::string m = e.what();
      if (backend::built_in("cuda") && std::string(spec).find("threads") != std::string::npos) {
        EXPECT_NE(m.find("unknown option 'threads'"), std::string::npos) << m;
      }
    }
  }
  EXPECT_THROW(backend::parse_backend_spec("cud:0"), Error);
}

TEST(CudaBackend, CpuAndSimAreBuiltIn) {
  EXPECT_TRUE(backend::built_in("cpu"));
  EXPECT_TRUE(backend::built_in("sim"));
  EXPECT_NO_THROW(backend::check_usable(backend::parse_backend_spec("cpu:threads=1")));
}

// ---- need a GPU ------------------------------------------------------------------------------

TEST(CudaBackendGpu, EveryElementwiseAndPoolingOpMatchesReference) {
  REQUIRE_GPU();
  expect_single_op_agrees("relu", {6, 7, 7}, [](GraphBuilder& b, ValueId x) { return b.relu(x); });
  expect_single_op_agrees("relu6", {6, 7, 7}, [](GraphBuilder& b, ValueId x) {
    return b.relu6(b.add(x, x));  // values beyond 6 as well
  });
  expect_single_op_agrees("sigmoid", {9}, [](GraphBuilder& b, ValueId x) { return b.sigmoid(x); });
  expect_single_op_agrees("tanh", {9}, [](GraphBuilder& b, ValueId x) { return b.tanh(x); });
  expect_single_op_agrees("softmax", {9}, [](GraphBuilder& b, ValueId x) { return b.softmax(x); });
  expect_single_op_agrees("maxpool", {4, 9, 9},
                          [](GraphBuilder& b, ValueId x) { return b.maxpool2d(x, 3, 2, 1); });
  expect_single_op_agrees("avgpool", {4, 9, 9},
                          [](GraphBuilder& b, ValueId x) { return b.avgpool2d(x, 3, 2, 1); });
  expect_single_op_agrees("avgpool_exclude_pad", {4, 9, 9}, [](GraphBuilder& b, ValueId x) {
    return b.graph().add_node(OpKind::AvgPool2d, "avg", Pool2dAttrs{3, 3, 2, 2, 1, 1, false, {}},
                              {x});
  });
  expect_single_op_agrees("gap", {4, 5, 6},
                          [](GraphBuilder& b, ValueId x) { return b.global_avgpool(x); });
  expect_single_op_agrees(
      "batchnorm", {4, 5, 5}, [](GraphBuilder& b, ValueId x) { return b.batchnorm2d(x); },
      /*pre_bias=*/false);
  expect_single_op_agrees("add", {8}, [](GraphBuilder& b, ValueId x) {
    return b.add(b.tanh(x), b.sigmoid(x));  // x read by three nodes: accumulated gradients
  });
  expect_single_op_agrees("concat", {3, 4, 4}, [](GraphBuilder& b, ValueId x) {
    return b.concat({x, b.relu(x), b.maxpool2d(x, 1, 1)});
  });
}

TEST(CudaBackendGpu, ConvolutionsOfEveryShapeMatchReference) {
  REQUIRE_GPU();
  // stride, padding, dilation, groups (incl. depthwise), with and without bias.
  const std::vector<Conv2dAttrs> cases = {
      {6, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, true, {}},  {6, 8, 3, 3, 2, 2, 1, 1, 1, 1, 1, false, {}},
      {6, 6, 3, 3, 1, 1, 2, 2, 2, 2, 1, true, {}},  {6, 6, 3, 3, 1, 1, 1, 1, 1, 1, 6, false, {}},
      {6, 12, 5, 3, 2, 1, 2, 1, 1, 1, 3, true, {}}, {6, 4, 1, 1, 1, 1, 0, 0, 1, 1, 1, true, {}}};
  for (std::size_t k = 0; k < cases.size(); ++k) {
    expect_single_op_agrees("conv" + std::to_string(k), {6, 11, 10},
                            [&](GraphBuilder& b, ValueId x) { return b.conv2d(x, cases[k]); });
  }
}

TEST(CudaBackendGpu, MlpMatchesReference) {
  REQUIRE_GPU();
  expect_model_agrees(zoo::build("mlp:64-32-16-10", {Shape{64}, std::nullopt}), {64}, 8, 10, 1e-4);
}

TEST(CudaBackendGpu, MnistCnnTrainingStepMatchesReference) {
  REQUIRE_GPU();
  expect_model_agrees(zoo::build("mnist_cnn"), {1, 28, 28}, 4, 10, 1e-4);
}

TEST(CudaBackendGpu, MobileNetTrainingStepMatchesReference) {
  REQUIRE_GPU();
  expect_model_agrees(zoo::build("mobilenet_v1:0.25", {Shape{3, 96, 96}, 10}), {3, 96, 96}, 4, 10,
                      1e-3, true);
}

TEST(CudaBackendGpu, ResNet18TrainingStepMatchesReference) {
  REQUIRE_GPU();
  expect_model_agrees(zoo::build("resnet18", {Shape{3, 40, 40}, 7}), {3, 40, 40}, 2, 7, 1e-3, true);
}

TEST(CudaBackendGpu, DlrmShapedGraphMatchesReference) {
  REQUIRE_GPU();
  // Bottom MLP, three tables (sum, mean, weighted sum), the interaction, top MLP, BCE; and the
  // gradient of an embedding fed as an input (DLRM's own table kernels use that path).
  GraphBuilder b("dlrm");
  ValueId dense = b.input("dense", {13});
  ValueId emb_in = b.input("emb_in", {8});
  std::vector<ValueId> embs;
  std::vector<ValueId> indices, offsets;
  ValueId psw = kNoValue;
  for (int t = 0; t < 3; ++t) {
    indices.push_back(b.dynamic_input("idx" + std::to_string(t), DType::I64));
    offsets.push_back(b.input("off" + std::to_string(t), {}, DType::I64));
  }
  psw = b.dynamic_input("psw", DType::F32);
  ValueId bottom = b.relu(b.linear(b.relu(b.linear(dense, 16)), 8));
  embs.push_back(b.embedding_bag(indices[0], offsets[0], 50, 8, EmbeddingBagMode::Sum, "t0"));
  embs.push_back(b.embedding_bag(indices[1], offsets[1], 30, 8, EmbeddingBagMode::Mean, "t1"));
  embs.push_back(b.embedding_bag(indices[2], offsets[2], 20, 8, EmbeddingBagMode::Sum, "t2", psw));
  embs.push_back(emb_in);
  ValueId z = b.dot_interaction(bottom, embs, false, "interact");
  ValueId top = b.linear(b.relu(b.linear(z, 16)), 1);
  b.output(top);
  Graph g = with_loss(b.finish(), LossKind::BCEWithLogits);

  const std::int64_t batch = 6;
  Rng rng(3);
  std::vector<Tensor> inputs;
  for (ValueId id : g.inputs()) {
    const Value& v = g.value(id);
    if (v.name == "dense")
      inputs.push_back(random_tensor({batch, 13}, 1));
    else if (v.name == "emb_in")
      inputs.push_back(random_tensor({batch, 8}, 2));
    else if (v.name.rfind("idx", 0) == 0) {
      const std::int64_t rows = v.name == "idx0" ? 50 : v.name == "idx1" ? 30 : 20;
      Tensor t({17}, DType::I64);  // bag sizes 3,0,4,2,5,3 (an empty bag included)
      for (auto& i : t.span<std::int64_t>()) i = static_cast<std::int64_t>(rng.below(rows));
      inputs.push_back(t);
    } else if (v.name.rfind("off", 0) == 0) {
      Tensor t({batch}, DType::I64);
      const std::int64_t starts[] = {0, 3, 3, 7, 9, 14};
      for (int k = 0; k < batch; ++k) t.data<std::int64_t>()[k] = starts[k];
      inputs.push_back(t);
    } else if (v.name == "psw") {
      inputs.push_back(random_tensor({17}, 4, 0.0f, 2.0f));
    } else {  // BCE targets
      Tensor t({batch, 1});
      for (int k = 0; k < batch; ++k) t.f32()[k] = static_cast<float>(k % 2);
      inputs.push_back(t);
    }
  }
  expect_agree(g, inputs, 1e-4, false, {emb_in});
}

TEST(CudaBackendGpu, MseAndSelfInteractionMatchReference) {
  REQUIRE_GPU();
  GraphBuilder b("mse");
  ValueId a = b.input("a", {6});
  ValueId c = b.input("c", {6});
  ValueId z = b.dot_interaction(b.linear(a, 6), {b.tanh(b.linear(c, 6))}, true, "self");
  b.output(b.linear(z, 4));
  Graph g = with_loss(b.finish(), LossKind::SoftmaxMSE);
  expect_agree(g, {random_tensor({5, 6}, 1), random_tensor({5, 6}, 2), labels(5, 4, 3)}, 1e-4);
}

TEST(CudaBackendGpu, DropoutMasksAreTheCpuMasks) {
  REQUIRE_GPU();
  GraphBuilder b("drop");
  ValueId x = b.input("x", {5000});  // more than one 4096-element block per sample
  b.output(b.linear(b.dropout(b.linear(x, 5000 / 50), 0.3f), 3));
  Graph g = with_loss(b.finish(), LossKind::CrossEntropy);
  expect_agree(g, {random_tensor({3, 5000}, 9), labels(3, 3, 10)}, 1e-4);
}

TEST(CudaBackendGpu, BatchSizeChangesAndParameterUpdatesAreSeen) {
  REQUIRE_GPU();
  Graph g = with_loss(zoo::build("mnist_cnn"), LossKind::CrossEntropy);
  ParameterSet params = ParameterSet::initialize(g, 3);
  ParameterSet ref_params = ParameterSet::initialize(g, 3);
  auto exe = backend::compile(backend::parse_backend_spec("cuda:0"), g, params);
  auto ref = backend::compile(backend::parse_backend_spec("cpu:ref"), g, ref_params);
  Tensor x5 = random_tensor({5, 1, 28, 28}, 1), x3 = x5.slice_rows(0, 3).clone();
  std::vector<Tensor> in5 = {x5, labels(5, 10, 2)};
  std::vector<Tensor> in3 = {x3, in5[1].slice_rows(0, 3).clone()};
  exe->forward(in3, backend::Mode::Eval);
  Tensor first = exe->output(0).clone();
  exe->forward(in5, backend::Mode::Eval);
  Tensor five = exe->output(0).clone();
  EXPECT_LT(relative_difference(five.slice_rows(0, 3).clone(), first), 1e-5);
  // Scale every parameter on the host; the next forward must see it after parameters_updated().
  for (ValueId id : g.parameters()) {
    for (auto& v : params.at(id).span<float>()) v *= 0.5f;
    for (auto& v : ref_params.at(id).span<float>()) v *= 0.5f;
  }
  exe->parameters_updated();
  ref->parameters_updated();
  exe->forward(in3, backend::Mode::Eval);
  ref->forward(in3, backend::Mode::Eval);
  EXPECT_LT(relative_difference(exe->output(0), ref->output(0)), 1e-4);
}

TEST(CudaBackendGpu, BadIndicesAndLabelsAreErrorsNotCrashes) {
  REQUIRE_GPU();
  GraphBuilder b("bad");
  ValueId idx = b.dynamic_input("idx", DType::I64);
  ValueId off = b.input("off", {}, DType::I64);
  b.output(b.linear(b.embedding_bag(idx, off, 10, 4), 3));
  Graph g = with_loss(b.finish(), LossKind::CrossEntropy);
  ParameterSet p = ParameterSet::initialize(g, 0);
  auto exe = backend::compile(backend::parse_backend_spec("cuda:0"), g, p);
  Tensor indices({3}, DType::I64), offsets({2}, DType::I64);
  indices.data<std::int64_t>()[0] = 1;
  indices.data<std::int64_t>()[1] = 10;  // out of range
  offsets.data<std::int64_t>()[1] = 2;
  std::vector<Tensor> in = {indices, offsets, labels(2, 3, 1)};
  EXPECT_THROW(exe->forward(in, backend::Mode::Train), Error);
  indices.data<std::int64_t>()[1] = 2;
  in[2].data<std::int64_t>()[0] = 3;  // label out of range
  EXPECT_THROW(exe->forward(in, backend::Mode::Train), Error);
}
