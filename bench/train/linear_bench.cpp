// A Linear layer's forward pass on one thread, side by side: telar's CPU backend (oneDNN
// matmul from 8 rows up, the inner product below) against oneDNN's inner product on the same
// plain [out, in] weights (its gemm packs the whole weight matrix on every call, which dominates
// at small batches). Shapes: the seed-001 CNN's fc1 (1568 -> 1024) at the batch sizes a worker
// of a data-parallel group meets (a few rows to a whole batch of 128), and a DLRM-sized
// 512 -> 256 layer. Arguments: rows, in, out.
//   build/release/bench/train/bench_linear
#include <benchmark/benchmark.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <memory>
#include <vector>

#include "backend/backend.hpp"
#include "core/rng.hpp"
#include "core/threads.hpp"
#include "graph/builder.hpp"

using namespace telar;

namespace {

Tensor random_tensor(const Shape& shape, std::uint64_t seed) {
  Tensor t(shape);
  Rng rng(seed);
  float* p = t.f32();
  for (std::int64_t i = 0; i < t.numel(); ++i) p[i] = rng.uniform(-0.5f, 0.5f);
  return t;
}

void TelarLinear(benchmark::State& state) {
  const std::int64_t rows = state.range(0), in = state.range(1), out = state.range(2);
  graph::GraphBuilder b("linear");
  b.output(b.linear(b.input("x", {in}), out, "fc"));
  const graph::Graph g = b.finish();
  graph::ParameterSet params = graph::ParameterSet::initialize(g, 1);
  auto exe = backend::compile(backend::parse_backend_spec("cpu:threads=1"), g, params);
  const std::vector<Tensor> inputs = {random_tensor({rows, in}, 2)};
  for (auto _ : state) {
    exe->forward(inputs, backend::Mode::Eval);
    benchmark::DoNotOptimize(exe->output(0).raw());
  }
  state.counters["rows/s"] = benchmark::Counter(static_cast<double>(rows * state.iterations()),
                                                benchmark::Counter::kIsRate);
}

void OneDnnInnerProduct(benchmark::State& state) {
  set_compute_threads(1);
  const dnnl::memory::dim rows = state.range(0), in = state.range(1), out = state.range(2);
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  const dnnl::memory::desc src({rows, in}, dt::f32, tag::ab), w({out, in}, dt::f32, tag::ab),
      bias({out}, dt::f32, tag::a), dst({rows, out}, dt::f32, tag::ab);
  const Tensor x = random_tensor({rows, in}, 2), weights = random_tensor({out, in}, 3);
  Tensor bias_t({out}), y({rows, out});
  dnnl::inner_product_forward::primitive_desc pd(
      dnnl::inner_product_forward::desc(dnnl::prop_kind::forward_inference, src, w, bias, dst),
      engine);
  dnnl::inner_product_forward ip(pd);
  const std::unordered_map<int, dnnl::memory> args = {
      {DNNL_ARG_SRC, dnnl::memory(src, engine, x.raw())},
      {DNNL_ARG_WEIGHTS, dnnl::memory(w, engine, weights.raw())},
      {DNNL_ARG_BIAS, dnnl::memory(bias, engine, bias_t.raw())},
      {DNNL_ARG_DST, dnnl::memory(dst, engine, y.raw())}};
  for (auto _ : state) {
    ip.execute(stream, args);
    stream.wait();
    benchmark::DoNotOptimize(y.raw());
  }
  state.counters["rows/s"] = benchmark::Counter(static_cast<double>(rows * state.iterations()),
                                                benchmark::Counter::kIsRate);
}

void Shapes(benchmark::internal::Benchmark* b) {
  for (std::int64_t rows : {1, 4, 8, 18, 32, 64, 110, 128}) b->Args({rows, 1568, 1024});
  for (std::int64_t rows : {128, 2048}) b->Args({rows, 512, 256});
  b->ArgNames({"rows", "in", "out"});
}

}  // namespace

BENCHMARK(TelarLinear)->Apply(Shapes);
BENCHMARK(OneDnnInnerProduct)->Apply(Shapes);

BENCHMARK_MAIN();
