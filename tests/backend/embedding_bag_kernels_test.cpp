// The fast EmbeddingBag kernels of the CPU backend against the reference kernels of ops/:
// forward sums bit for bit (same order of additions), the sparse gradient equals the dense
// reference gradient on the rows used and is zero elsewhere, the SGD update touches only
// those rows, and bad bags are one-line errors. Also the CPU backend's input gradients.
#include "backend/cpu/embedding_bag_kernels.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "backend/backend.hpp"
#include "core/error.hpp"
#include "core/rng.hpp"
#include "graph/builder.hpp"
#include "graph/loss.hpp"
#include "ops/kernels.hpp"

using namespace telar;
using namespace telar::backend::cpu;

namespace {

struct RandomBags {
  Tensor indices, offsets;
  CsrBags csr() const {
    return {indices.data<std::int64_t>(), offsets.data<std::int64_t>(), offsets.numel(),
            indices.numel()};
  }
};

// `bags` bags of 0..max_len indices (some empty), rows repeating across and within bags.
RandomBags random_bags(std::int64_t bags, std::int64_t max_len, std::int64_t rows,
                       std::uint64_t seed) {
  Rng rng(seed);
  std::vector<std::int64_t> idx, off;
  for (std::int64_t b = 0; b < bags; ++b) {
    off.push_back(static_cast<std::int64_t>(idx.size()));
    const auto len = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(max_len) + 1));
    for (std::int64_t k = 0; k < len; ++k)
      idx.push_back(static_cast<std::int64_t>(rng.below(rows)));
  }
  RandomBags r{Tensor({static_cast<std::int64_t>(idx.size())}, DType::I64),
               Tensor({bags}, DType::I64)};
  std::copy(idx.begin(), idx.end(), r.indices.data<std::int64_t>());
  std::copy(off.begin(), off.end(), r.offsets.data<std::int64_t>());
  return r;
}

Tensor random_table(std::int64_t rows, std::int64_t dim, std::uint64_t seed) {
  Tensor t({rows, dim});
  Rng rng(seed);
  for (float& v : t.span<float>()) v = rng.uniform(-1.0f, 1.0f);
  return t;
}

graph::EmbeddingBagAttrs attrs(std::int64_t rows, std::int64_t dim) {
  graph::EmbeddingBagAttrs a;
  a.num_embeddings = rows;
  a.dim = dim;
  return a;
}

}  // namespace

TEST(EmbeddingBagKernels, ForwardEqualsReferenceBitForBit) {
  // Widths with compile-time loops (16, 32, 64, 128) and without (1, 7, 33); batches small
  // (one thread) and large (split across threads).
  for (std::int64_t dim : {1, 7, 16, 32, 33, 64, 128}) {
    for (std::int64_t bags : {1, 5, 700}) {
      SCOPED_TRACE(testing::Message() << "dim " << dim << ", bags " << bags);
      const std::int64_t rows = 300;
      Tensor table = random_table(rows, dim, static_cast<std::uint64_t>(dim * 1000 + bags));
      RandomBags b = random_bags(bags, 60, rows, static_cast<std::uint64_t>(bags));
      Tensor ref({bags, dim}), fast({bags, dim});
      fast.fill(42.0f);  // overwritten, empty bags included
      ops::embedding_bag_forward(attrs(rows, dim), b.indices, b.offsets, table, nullptr, ref);
      embedding_bag_sum(table.f32(), dim, b.csr(), fast.f32());
      for (std::int64_t i = 0; i < ref.numel(); ++i) ASSERT_EQ(fast.f32()[i], ref.f32()[i]) << i;
    }
  }
  EXPECT_TRUE(embedding_bag_isa() == "avx512" || embedding_bag_isa() == "avx2" ||
              embedding_bag_isa() == "portable");
}

TEST(EmbeddingBagKernels, ManyTablesAtOnceEqualOneAtATime) {
  // Tables of different widths and bag counts in one call (blocks numbered across tables).
  const std::vector<std::int64_t> dims = {32, 7, 16, 32}, bags = {300, 1, 45, 17};
  std::vector<Tensor> tables, outs, refs;
  std::vector<RandomBags> csr;
  std::vector<BagSumJob> jobs;
  for (std::size_t j = 0; j < dims.size(); ++j) {
    tables.push_back(random_table(90, dims[j], 40 + j));
    csr.push_back(random_bags(bags[j], 30, 90, 50 + j));
    outs.emplace_back(Shape{bags[j], dims[j]});
    refs.emplace_back(Shape{bags[j], dims[j]});
    ops::embedding_bag_forward(attrs(90, dims[j]), csr[j].indices, csr[j].offsets, tables[j],
                               nullptr, refs[j]);
  }
  for (std::size_t j = 0; j < dims.size(); ++j)
    jobs.push_back({tables[j].f32(), dims[j], csr[j].csr(), outs[j].f32()});
  embedding_bag_sum_many(jobs);
  for (std::size_t j = 0; j < dims.size(); ++j)
    for (std::int64_t i = 0; i < refs[j].numel(); ++i)
      ASSERT_EQ(outs[j].f32()[i], refs[j].f32()[i]) << "table " << j << " element " << i;
}

TEST(EmbeddingBagKernels, SparseGradientIsTheDenseGradientOnTheRowsUsed) {
  const std::int64_t rows = 50, dim = 12, bags = 40;
  RandomBags b = random_bags(bags, 9, rows, 3);
  Tensor dy = random_table(bags, dim, 4);
  Tensor dense({rows, dim});
  ops::embedding_bag_backward(attrs(rows, dim), b.indices, b.offsets, nullptr, dy, dense);
  SparseRowGrad g;
  embedding_bag_sparse_backward(b.csr(), dy.f32(), dim, g);
  // Rows: the distinct indices, ascending.
  std::vector<std::int64_t> expected(b.indices.data<std::int64_t>(),
                                     b.indices.data<std::int64_t>() + b.indices.numel());
  std::sort(expected.begin(), expected.end());
  expected.erase(std::unique(expected.begin(), expected.end()), expected.end());
  ASSERT_EQ(g.rows, expected);
  for (std::int64_t u = 0; u < g.size(); ++u)
    for (std::int64_t c = 0; c < dim; ++c)
      EXPECT_NEAR(g.values[u * dim + c], dense.f32()[g.rows[u] * dim + c], 1e-5);
  // Written out densely it is the reference gradient (zeros on the rows never used).
  Tensor back({rows, dim});
  back.fill(7.0f);
  sparse_to_dense(g, rows, back.f32());
  for (std::int64_t i = 0; i < back.numel(); ++i) EXPECT_NEAR(back.f32()[i], dense.f32()[i], 1e-5);
}

TEST(EmbeddingBagKernels, SparseGradientOfLargeRowNumbersNeedsSeveralRadixPasses) {
  // Rows above 2^22 take three 11-bit passes; the result must still be sorted and grouped.
  const std::int64_t dim = 2;
  Tensor idx({6}, DType::I64), off({3}, DType::I64);
  const std::int64_t r[] = {5000000, 7, 5000000, 4194304, 7, 4194303};
  std::copy(r, r + 6, idx.data<std::int64_t>());
  const std::int64_t o[] = {0, 2, 4};
  std::copy(o, o + 3, off.data<std::int64_t>());
  Tensor dy = Tensor::from(std::vector<float>{1, 2, 10, 20, 100, 200}, {3, 2});
  SparseRowGrad g;
  embedding_bag_sparse_backward({idx.data<std::int64_t>(), off.data<std::int64_t>(), 3, 6},
                                dy.f32(), dim, g);
  ASSERT_EQ(g.rows, (std::vector<std::int64_t>{7, 4194303, 4194304, 5000000}));
  // Bags: {5000000, 7}, {5000000, 4194304}, {7, 4194303}. Row 7: bags 0 and 2; 4194303: bag 2;
  // 4194304: bag 1; 5000000: bags 0 and 1.
  EXPECT_EQ(g.values, (std::vector<float>{101, 202, 100, 200, 10, 20, 11, 22}));
}

TEST(EmbeddingBagKernels, SgdUpdateTouchesOnlyTheRowsUsed) {
  const std::int64_t rows = 20, dim = 4;
  Tensor table = random_table(rows, dim, 8), before = table.clone();
  RandomBags b = random_bags(6, 3, rows, 9);
  Tensor dy = random_table(6, dim, 10);
  SparseRowGrad g;
  embedding_bag_sparse_backward(b.csr(), dy.f32(), dim, g);
  Tensor dense({rows, dim});
  ops::embedding_bag_backward(attrs(rows, dim), b.indices, b.offsets, nullptr, dy, dense);
  sparse_sgd_update(table.f32(), g, 0.5f);
  for (std::int64_t i = 0; i < table.numel(); ++i)
    EXPECT_NEAR(table.f32()[i], before.f32()[i] - 0.5f * dense.f32()[i], 1e-6);
}

TEST(EmbeddingBagKernels, BadBagsAreOneLineErrors) {
  Tensor idx({3}, DType::I64), off({2}, DType::I64);
  auto set = [&](std::vector<std::int64_t> i, std::vector<std::int64_t> o) {
    std::copy(i.begin(), i.end(), idx.data<std::int64_t>());
    std::copy(o.begin(), o.end(), off.data<std::int64_t>());
    return CsrBags{idx.data<std::int64_t>(), off.data<std::int64_t>(), 2, 3};
  };
  auto message = [](const CsrBags& b) {
    try {
      check_bags(b, 10, "table 2");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(message(set({1, 2, 3}, {0, 2})), "(no error)");
  EXPECT_NE(message(set({1, 12, 3}, {0, 2}))
                .find("table 2: index 12 (position 1, bag 0) is out of range"),
            std::string::npos);
  EXPECT_NE(message(set({1, 2, -1}, {0, 2})).find("index -1"), std::string::npos);
  EXPECT_NE(message(set({1, 2, 3}, {1, 2})).find("offsets[0] is 1"), std::string::npos);
  EXPECT_NE(message(set({1, 2, 3}, {0, 4})).find("past the end"), std::string::npos);
  EXPECT_EQ(message(set({1, 2, 3}, {0, 4})).find('\n'), std::string::npos);
}

TEST(EmbeddingBagKernels, CpuBackendRunsEmbeddingBagNodesLikeTheReference) {
  graph::GraphBuilder b("bags");
  auto idx = b.dynamic_input("idx", DType::I64);
  auto off = b.input("off", {}, DType::I64);
  auto e = b.embedding_bag(idx, off, 40, 8, graph::EmbeddingBagMode::Sum, "emb");
  b.output(b.linear(e, 3, "fc"));
  graph::Graph g = graph::with_loss(b.finish(), graph::LossKind::CrossEntropy);
  RandomBags bags = random_bags(6, 5, 40, 12);
  Tensor labels({6}, DType::I64);
  for (std::int64_t i = 0; i < 6; ++i) labels.data<std::int64_t>()[i] = i % 3;
  std::vector<Tensor> inputs = {bags.indices, bags.offsets, labels};
  std::vector<Tensor> outs, grads;
  for (const char* spec : {"cpu:ref", "cpu"}) {
    graph::ParameterSet p = graph::ParameterSet::initialize(g, 5);
    auto exe = backend::compile(backend::parse_backend_spec(spec), g, p);
    exe->forward(inputs, backend::Mode::Train);
    Tensor one(Shape{});
    one.f32()[0] = 1.0f;
    exe->backward(std::vector<Tensor>{Tensor(), one});
    outs.push_back(exe->output(0).clone());
    grads.push_back(exe->gradients().at(g.value_id("emb.weight")).clone());
  }
  for (std::int64_t i = 0; i < outs[0].numel(); ++i)
    EXPECT_NEAR(outs[1].f32()[i], outs[0].f32()[i], 1e-5);
  for (std::int64_t i = 0; i < grads[0].numel(); ++i)
    EXPECT_NEAR(grads[1].f32()[i], grads[0].f32()[i], 1e-5);
}

TEST(InputGradients, EqualTheChainRuleThroughALinearLayer) {
  // loss = MSE(x W^T + b, t) over B x 2 outputs: dL/dx = (2/(B*2)) (y - t) W.
  graph::GraphBuilder b("lin");
  auto x = b.input("x", {3});
  b.output(b.linear(x, 2, "fc"));
  graph::Graph g = graph::with_loss(b.finish(), graph::LossKind::MSE);
  graph::ParameterSet p = graph::ParameterSet::initialize(g, 2);
  backend::CompileOptions o;
  o.input_gradients = {g.value_id("x")};
  for (const char* spec : {"cpu", "cpu:ref"}) {
    SCOPED_TRACE(spec);
    auto exe = backend::compile(backend::parse_backend_spec(spec), g, p, o);
    Tensor xv = random_table(4, 3, 1), t = random_table(4, 2, 2);
    exe->forward(std::vector<Tensor>{xv, t}, backend::Mode::Train);
    Tensor one(Shape{});
    one.f32()[0] = 1.0f;
    exe->backward(std::vector<Tensor>{Tensor(), one});
    const Tensor& dx = exe->input_gradient(0);
    const Tensor& y = exe->output(0);
    const float* w = p.at(g.value_id("fc.weight")).f32();
    for (std::int64_t i = 0; i < 4; ++i)
      for (std::int64_t k = 0; k < 3; ++k) {
        double expected = 0.0;
        for (std::int64_t j = 0; j < 2; ++j)
          expected += 2.0 / 8.0 * (y.f32()[i * 2 + j] - t.f32()[i * 2 + j]) * w[j * 3 + k];
        EXPECT_NEAR(dx.f32()[i * 3 + k], expected, 1e-5);
      }
    EXPECT_THROW(exe->input_gradient(1), Error);  // the target was not asked for
  }
}
