// The `sim:` backend: outputs equal the cpu backend's on the zoo models and on an EmbeddingBag
// graph; nodes go where the target's accelerators can run them (the host otherwise, with a
// note); per-node figures follow from the lowered workloads and add up to the totals and to the
// STONNE files written; hybrid .toml targets and their errors; pruning and tile files.
#include "backend/sim/sim_backend.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "backend/backend.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/rng.hpp"
#include "graph/builder.hpp"
#include "graph/zoo/zoo.hpp"
#include "sim/stats.hpp"
#include "sim_backend_helpers.hpp"

using namespace telar;
using namespace telar::graph;
using namespace telar::testing;

namespace {

TEST(SimBackend, SmallZooModelsMatchTheCpuBackend) {
  check_zoo_models({{"mlp:64-32-10", {64}}, {"mobilenet_v1:0.25", {3, 16, 16}}});
}

TEST(SimBackend, LowersLayersToStonneOperations) {
  GraphBuilder b("lowering");
  ValueId x = b.input("x", {3, 8, 8});
  x = b.conv2d(x, 8, 3, 1, 1, 1, true, "conv");
  x = b.conv2d(x, 8, 3, 2, 1, 8, false, "depthwise");
  x = b.flatten(x, "flatten");
  x = b.linear(x, 5, "fc");
  b.output(x);
  Graph g = b.finish();
  ParameterSet params = ParameterSet::initialize(g, 3);
  auto exe = compare_with_cpu(g, params, {uniform({2, 3, 8, 8}, 4)},
                              "sim:" + kConfigs + "maeri_256mses_64_bw.cfg");
  // Padding 1 around 8x8 makes STONNE's 10x10 input; the depthwise layer is 8 groups.
  EXPECT_EQ(node(*exe, "conv").workload, "CONV R=3 S=3 C=3 K=8 G=1 N=2 X=10 Y=10 stride=1");
  EXPECT_EQ(node(*exe, "depthwise").workload, "CONV R=3 S=3 C=8 K=8 G=8 N=2 X=10 Y=10 stride=2");
  EXPECT_EQ(node(*exe, "fc").workload, "FC M=2 N=5 K=128");
  EXPECT_NE(node(*exe, "conv").note.find("bias added on the host"), std::string::npos);
  EXPECT_FALSE(node(*exe, "flatten").simulated());
  // On the mesh a convolution is an im2col GEMM per group.
  auto mesh = compare_with_cpu(g, params, {uniform({2, 3, 8, 8}, 4)},
                               "sim:" + kConfigs + "tpu_16_16_pes.cfg");
  EXPECT_EQ(node(*mesh, "conv").workload, "DenseGEMM M=128 N=8 K=27");
  EXPECT_EQ(node(*mesh, "depthwise").workload, "DenseGEMM M=32 N=1 K=9 x8");
  EXPECT_EQ(node(*mesh, "depthwise").calls, 8);
}

// A Linear over tokens ([B, L, in]) is one FC of B * L rows.
TEST(SimBackend, ALinearOverTokensIsOneGemmOfAllTheRows) {
  GraphBuilder b("tokens");
  ValueId x = b.input("x", {4, 6});
  x = b.linear(x, 5, "tokens_fc");
  b.output(b.linear(b.flatten(x, "flatten"), 3, "head"));
  Graph g = b.finish();
  ParameterSet params = ParameterSet::initialize(g, 3);
  auto exe = compare_with_cpu(g, params, {uniform({2, 4, 6}, 4)},
                              "sim:" + kConfigs + "maeri_256mses_64_bw.cfg");
  EXPECT_EQ(node(*exe, "tokens_fc").workload, "FC M=8 N=5 K=6");
  EXPECT_EQ(node(*exe, "head").workload, "FC M=2 N=3 K=20");
}

// A DLRM-like graph: a dense feature through a Linear, two EmbeddingBags (sum and mean),
// their concatenation and a Linear on top.
struct BagGraph {
  Graph g;
  std::vector<Tensor> inputs;
  std::int64_t nnz[2] = {0, 0};
};

BagGraph bag_graph(std::int64_t batch) {
  GraphBuilder b("bags");
  ValueId dense = b.input("dense", {4});
  ValueId i0 = b.dynamic_input("indices/0", DType::I64);
  ValueId o0 = b.input("offsets/0", {}, DType::I64);
  ValueId i1 = b.dynamic_input("indices/1", DType::I64);
  ValueId o1 = b.input("offsets/1", {}, DType::I64);
  ValueId d = b.linear(dense, 8, "bot/fc0");
  ValueId e0 = b.embedding_bag(i0, o0, 1000, 8, EmbeddingBagMode::Sum, "emb/0");
  ValueId e1 = b.embedding_bag(i1, o1, 50, 8, EmbeddingBagMode::Mean, "emb/1");
  ValueId y = b.linear(b.concat({d, e0, e1}, "interaction"), 1, "top/fc0");
  b.output(b.sigmoid(y, "top/sigmoid"));
  BagGraph r{b.finish(), {}, {}};
  Rng rng(9);
  r.inputs.push_back(uniform({batch, 4}, 5));
  for (int t = 0; t < 2; ++t) {
    const std::int64_t rows = t == 0 ? 1000 : 50;
    std::vector<std::int64_t> idx, off;
    for (std::int64_t s = 0; s < batch; ++s) {
      off.push_back(static_cast<std::int64_t>(idx.size()));
      const std::int64_t n = 1 + static_cast<std::int64_t>(rng.below(6));  // repeats allowed
      for (std::int64_t k = 0; k < n; ++k)
        idx.push_back(static_cast<std::int64_t>(rng.below(rows)));
    }
    Tensor ti({static_cast<std::int64_t>(idx.size())}, DType::I64);
    std::copy(idx.begin(), idx.end(), ti.data<std::int64_t>());
    Tensor to({batch}, DType::I64);
    std::copy(off.begin(), off.end(), to.data<std::int64_t>());
    r.inputs.push_back(ti);
    r.inputs.push_back(to);
    r.nnz[t] = static_cast<std::int64_t>(idx.size());
  }
  return r;
}

TEST(SimBackend, EmbeddingBagsRunAsCsrSparseTimesDenseOnMagma) {
  const std::int64_t B = 6;
  BagGraph bg = bag_graph(B);
  ParameterSet params = ParameterSet::initialize(bg.g, 7);
  auto exe = compare_with_cpu(bg.g, params, bg.inputs, "sim:" + kConfigs + "hybrid_dlrm.toml");
  for (int t = 0; t < 2; ++t) {
    const bs::NodeSimulation& n = node(*exe, "emb/" + std::to_string(t));
    SCOPED_TRACE(n.node + ": " + n.workload + " " + n.note);
    EXPECT_EQ(n.target, "magma_128mses_128_bw");
    EXPECT_EQ(n.component, "emb");
    // Each index reads its value and the table row (d = 8 values); each bag writes d outputs.
    EXPECT_EQ(n.stats.gb.reads(), static_cast<std::uint64_t>(bg.nnz[t]) * (1 + 8));
    EXPECT_EQ(n.stats.gb.writes(), static_cast<std::uint64_t>(B) * 8);
    EXPECT_EQ(n.calls, 1);
  }
  EXPECT_EQ(node(*exe, "bot/fc0").target, "maeri_256mses_64_bw");
  EXPECT_EQ(node(*exe, "top/fc0").component, "top");
  EXPECT_FALSE(node(*exe, "interaction").simulated());
  // A MAERI-only target runs the bags on the host and says so.
  auto maeri =
      compare_with_cpu(bg.g, params, bg.inputs, "sim:" + kConfigs + "maeri_256mses_64_bw.cfg");
  const bs::NodeSimulation& host = node(*maeri, "emb/0");
  EXPECT_FALSE(host.simulated());
  EXPECT_EQ(host.target, "host");
  EXPECT_NE(host.note.find("MAGMA_SPARSE_DENSE"), std::string::npos) << host.note;
}

TEST(SimBackend, NodeFiguresAddUpToTheTotalsAndTheFilesWritten) {
  zoo::ModelOptions o;
  o.input = Shape{1, 28, 28};
  Graph g = zoo::build("mnist_cnn", o);
  ParameterSet params = ParameterSet::initialize(g, 1);
  const fs::path dir = temp_dir("files");
  bs::SimOptions options;
  options.stats_dir = dir;
  auto exe = compare_with_cpu(g, params, {uniform({1, 1, 28, 28}, 3)},
                              "sim:" + kConfigs + "maeri_128mses_64_bw.cfg", options);
  const auto& nodes = bs::simulated(*exe)->node_simulations();
  const bs::SimulationTotals t = bs::totals(nodes);
  std::uint64_t cycles = 0, reads = 0, writes = 0, file_cycles = 0, file_reads = 0, file_writes = 0;
  int simulated = 0;
  for (const auto& n : nodes)
    if (n.simulated()) {
      ++simulated;
      cycles += n.stats.cycles;
      reads += n.stats.gb.reads();
      writes += n.stats.gb.writes();
    }
  EXPECT_EQ(t.simulated_nodes, simulated);
  EXPECT_EQ(t.cycles, cycles);
  EXPECT_EQ(t.gb_reads, reads);
  EXPECT_EQ(t.gb_writes, writes);
  EXPECT_EQ(t.simulated_nodes + t.host_nodes, static_cast<int>(g.nodes().size()));
  const auto& files = bs::simulated(*exe)->written_files();
  EXPECT_EQ(files.size(), 2u * static_cast<std::size_t>(simulated));
  for (const fs::path& f : files) {
    ASSERT_TRUE(fs::exists(f)) << f;
    if (f.extension() != ".counters") continue;
    const sim::CountersFile c = sim::parse_counters(read_file(f), f.string());
    file_cycles += c.cycles;
    const auto [r, w] = sim::global_buffer_counts(c);
    file_reads += r;
    file_writes += w;
  }
  EXPECT_EQ(file_cycles, t.cycles);
  EXPECT_EQ(file_reads, t.gb_reads);
  EXPECT_EQ(file_writes, t.gb_writes);
  fs::remove_all(dir);
}

TEST(SimBackend, PrunedLayersRunOnSigma) {
  Graph g = zoo::build("mlp:32-16-4", {});
  ParameterSet params = ParameterSet::initialize(g, 11);
  bs::SimOptions options;
  options.weight_sparsity = 0.75;
  // The reference: the cpu backend on the same pruned weights.
  ParameterSet pruned = params;
  for (const Node& n : g.nodes())
    if (n.kind == OpKind::Linear) {
      Tensor w = params.at(n.inputs[1]).clone();
      bs::prune_by_magnitude(w, 0.75);
      pruned.set(n.inputs[1], w);
    }
  const std::vector<Tensor> inputs = {uniform({3, 32}, 12)};
  auto cpu = backend::compile(backend::parse_backend_spec("cpu"), g, pruned);
  cpu->forward(inputs, backend::Mode::Eval);
  auto exe = bs::compile(backend::parse_backend_spec("sim:" + kConfigs + "hybrid_dlrm.toml"), g,
                         params, {}, options);
  exe->forward(inputs, backend::Mode::Eval);
  for (std::int64_t k = 0; k < cpu->output(0).numel(); ++k)
    EXPECT_NEAR(exe->output(0).f32()[k], cpu->output(0).f32()[k], 1e-5f);
  const bs::NodeSimulation& fc = node(*exe, g.nodes()[0].name);
  EXPECT_EQ(fc.target, "sigma_128mses_128_bw");
  // The stationary weights: 16 x 32 with 75% pruned, each non-zero read once.
  EXPECT_EQ(fc.stats.gb.weight_reads, 16u * 32 / 4);
  // The caller's weights are untouched.
  EXPECT_NE(params.at(g.nodes()[0].inputs[1]).f32()[0], 0.0f);
}

TEST(SimBackend, PruningZeroesTheSmallestMagnitudes) {
  Tensor w =
      Tensor::from(std::vector<float>{0.5f, -3.0f, 0.1f, -0.2f, 2.0f, 0.1f, 1.0f, -0.05f}, {2, 4});
  bs::prune_by_magnitude(w, 0.5);
  EXPECT_EQ(std::vector<float>(w.f32(), w.f32() + 8),
            (std::vector<float>{0.5f, -3.0f, 0.0f, 0.0f, 2.0f, 0.0f, 1.0f, 0.0f}));
  EXPECT_THROW(bs::prune_by_magnitude(w, 1.5), Error);
}

TEST(SimBackend, TileFilesPerLayer) {
  Graph g = zoo::build("mlp:64-32-10", {});
  ParameterSet params = ParameterSet::initialize(g, 1);
  const fs::path dir = temp_dir("tiles");
  const std::string layer = g.nodes()[0].name;
  write_file_atomic(dir / (layer + ".txt"), "tile_type=\"FC\"\nT_S=16\nT_K=4\nT_N=1\n");
  bs::SimOptions options;
  options.tile_dir = dir;
  auto exe = compare_with_cpu(g, params, {uniform({2, 64}, 1)},
                              "sim:" + kConfigs + "maeri_128mses_64_bw.cfg", options);
  EXPECT_EQ(node(*exe, layer).tile.rfind("T_M=1 T_N=4 T_K=16 (tile file", 0), 0u)
      << node(*exe, layer).tile;
  EXPECT_NE(node(*exe, g.nodes()[2].name).tile.find("mapper"), std::string::npos);
  fs::remove_all(dir);
}

TEST(SimBackend, HybridFilesAndTheirErrors) {
  const fs::path dir = temp_dir("hybrid");
  for (const char* f :
       {"maeri_256mses_64_bw.cfg", "magma_128mses_128_bw.cfg", "sigma_64mses_64_bw.cfg"})
    fs::copy_file(kConfigs + f, dir / f);
  auto load = [&](const std::string& text) {
    write_file_atomic(dir / "h.toml", text);
    return bs::load_target(dir / "h.toml");
  };
  auto error = [&](const std::string& text) {
    try {
      load(text);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const bs::SimTarget t = load(
      "[dense]\nconfig = \"maeri_256mses_64_bw.cfg\"\ntiles = \"auto:energy\"\n"
      "[sparse]\nconfig = \"magma_128mses_128_bw.cfg\"\nT_N = 4\nT_K = 32\n");
  ASSERT_TRUE(t.dense && t.sparse);
  EXPECT_FALSE(t.pruned);
  EXPECT_EQ(t.dense->objective, sim::MapObjective::Energy);
  EXPECT_EQ(t.sparse->sparse_tile, (sim::SparseDenseTile{4, 32}));
  EXPECT_NE(error("[dense]\nconfig = \"missing.cfg\"\n").find("missing.cfg' does not exist"),
            std::string::npos);
  EXPECT_NE(error("[dense]\nconfig = \"magma_128mses_128_bw.cfg\"\n").find("cannot run dense"),
            std::string::npos);
  EXPECT_NE(error("[sparse]\nconfig = \"sigma_64mses_64_bw.cfg\"\n").find("MAGMA_SPARSE_DENSE"),
            std::string::npos);
  EXPECT_NE(error("[gpu]\nconfig = \"x.cfg\"\n").find("unknown section [gpu]"), std::string::npos);
  EXPECT_NE(error("[dense]\nconfig = \"maeri_256mses_64_bw.cfg\"\nspeed = 2\n").find("unknown key"),
            std::string::npos);
  EXPECT_NE(error("[sparse]\nconfig = \"magma_128mses_128_bw.cfg\"\nT_N = 4\n").find("both T_N"),
            std::string::npos);
  EXPECT_NE(error("[dense\n").find("h.toml:"), std::string::npos);
  EXPECT_NE(error("# nothing\n").find("names no accelerator"), std::string::npos);
  EXPECT_NE(error("[tiles]\n\"fc\" = \"none.txt\"\n[dense]\nconfig = \"maeri_256mses_64_bw.cfg\"\n")
                .find("none.txt' does not exist"),
            std::string::npos);
  // Names longer than the file system allows (found by fuzz_toml): refused, not thrown past.
  const std::string too_long(300, 'a');
  EXPECT_NE(error("[dense]\nconfig = \"" + too_long + ".cfg\"\n").find("does not exist"),
            std::string::npos);
  EXPECT_NE(error("[tiles]\n\"fc\" = \"" + too_long + ".txt\"\n").find("does not exist"),
            std::string::npos);
  // A configuration with an unknown controller.
  write_file_atomic(dir / "bad.cfg", "[SDMemory]\ncontroller_type=\"SPARSE_MAGIC\"\n");
  EXPECT_THROW(bs::load_target(dir / "bad.cfg"), Error);
  fs::remove_all(dir);
}

}  // namespace
