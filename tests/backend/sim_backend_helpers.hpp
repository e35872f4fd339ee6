#pragma once
// Shared by the sim: backend tests: running a graph on cpu and on a sim: target side by side.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "backend/sim/sim_backend.hpp"
#include "core/error.hpp"
#include "core/rng.hpp"
#include "graph/zoo/zoo.hpp"
#include "sim/accelerator.hpp"

namespace telar::testing {

using namespace telar::graph;
namespace bs = telar::backend::sim;
namespace fs = std::filesystem;

inline const std::string kConfigs = std::string(TELAR_SOURCE_DIR) + "/configs/";

inline fs::path temp_dir(const std::string& name) {
  const fs::path d =
      fs::temp_directory_path() / ("telar_sim_backend_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

inline Tensor uniform(const Shape& shape, std::uint64_t seed) {
  Tensor t(shape);
  Rng rng(seed);
  for (float& v : t.span<float>()) v = rng.uniform(-1.0f, 1.0f);
  return t;
}

// Runs `g` on cpu and on `backend` with the same inputs; returns the sim executable.
inline std::unique_ptr<backend::Executable> compare_with_cpu(const Graph& g, ParameterSet& params,
                                                             const std::vector<Tensor>& inputs,
                                                             const std::string& backend,
                                                             const bs::SimOptions& options = {}) {
  auto cpu = backend::compile(backend::parse_backend_spec("cpu"), g, params);
  cpu->forward(inputs, backend::Mode::Eval);
  auto sim = bs::compile(backend::parse_backend_spec(backend), g, params, {}, options);
  sim->forward(inputs, backend::Mode::Eval);
  for (std::size_t i = 0; i < g.outputs().size(); ++i) {
    const Tensor& a = sim->output(i);
    const Tensor& b = cpu->output(i);
    EXPECT_EQ(a.shape(), b.shape());
    for (std::int64_t k = 0; k < a.numel(); ++k)
      EXPECT_NEAR(a.f32()[k], b.f32()[k], 1e-5f * (1.0f + std::fabs(b.f32()[k])))
          << backend << " output " << i << " element " << k;
  }
  return sim;
}

inline const bs::NodeSimulation& node(const backend::Executable& exe, const std::string& name) {
  for (const bs::NodeSimulation& n : bs::simulated(exe)->node_simulations())
    if (n.node == name) return n;
  throw Error("no node " + name);
}

// A tile back from its description in NodeSimulation::tile ("T_R=3 ... T_Y'=1 (mapper ...)"
// for a convolution, "T_M=2 T_N=1 T_K=64 (...)" for a GEMM).
inline sim::Tile tile_from_description(const std::string& text, sim::OpKind kind) {
  std::string lines;
  std::map<std::string, int> v;
  std::istringstream in(text.substr(0, text.find(" (")));
  for (std::string word; in >> word;) {
    const auto eq = word.find('=');
    v[word.substr(0, eq)] = std::stoi(word.substr(eq + 1));
    lines += word + "\n";
  }
  if (kind == sim::OpKind::Conv) return sim::parse_tile(lines, "node tile", kind);
  return sim::make_gemm_tile(v.at("T_M"), v.at("T_N"), v.at("T_K"));
}

// The simulator operation a dense node should have become, derived here from the graph (not
// from the lowering): STONNE's CONV over the zero-padded input on MAERI, one im2col GEMM per
// group on the mesh, FC for a Linear. `calls`: how many times it runs.
inline sim::DenseOp expected_operation(const Graph& g, const Node& n, std::int64_t batch, bool mesh,
                                       int& calls) {
  calls = 1;
  const int B = static_cast<int>(batch);
  if (n.kind == OpKind::Linear) {
    const auto& a = n.attr<LinearAttrs>();
    return sim::make_gemm(sim::OpKind::Fc, B, static_cast<int>(a.out_features),
                          static_cast<int>(a.in_features));
  }
  const auto& a = n.attr<Conv2dAttrs>();
  const Shape& in = g.value(n.inputs[0]).shape;
  const Shape& out = g.value(n.outputs[0]).shape;
  const int G = static_cast<int>(a.groups);
  if (mesh) {
    calls = G;
    return sim::make_gemm(sim::OpKind::DenseGemm, static_cast<int>(B * out[2] * out[3]),
                          static_cast<int>(a.out_channels) / G,
                          static_cast<int>(a.kernel_h * a.kernel_w * a.in_channels) / G);
  }
  return sim::make_conv(static_cast<int>(a.kernel_h), static_cast<int>(a.kernel_w),
                        static_cast<int>(a.in_channels), static_cast<int>(a.out_channels), G, B,
                        static_cast<int>(in[2] + 2 * a.pad_h),
                        static_cast<int>(in[3] + 2 * a.pad_w), static_cast<int>(a.stride_h));
}

// A node's figures equal a single-operation simulation of the same layer and tile.
inline void expect_single_op_counts(const Graph& g, const Node& n, const bs::NodeSimulation& s,
                                    const sim::HardwareConfig& hw, std::int64_t batch) {
  int calls = 0;
  const bool mesh = hw.controller == sim::Controller::TpuOsDense;
  const sim::DenseOp op = expected_operation(g, n, batch, mesh, calls);
  sim::RunOptions timing;
  timing.compute_values = false;
  const sim::OpResult r =
      sim::Accelerator(hw).run(op, tile_from_description(s.tile, op.kind), timing);
  const auto c = static_cast<std::uint64_t>(calls);
  EXPECT_EQ(s.calls, calls) << s.node;
  EXPECT_EQ(s.stats.cycles, c * r.stats.cycles) << s.node << " " << s.workload << " " << s.tile;
  EXPECT_EQ(s.stats.gb.reads(), c * r.stats.gb.reads()) << s.node;
  EXPECT_EQ(s.stats.gb.writes(), c * r.stats.gb.writes()) << s.node;
  EXPECT_EQ(s.stats.multiplications, c * r.stats.multiplications) << s.node;
}

struct ZooCase {
  std::string model;
  Shape input;
  std::int64_t batch = 2;
};

// Each model on MAERI and on the TPU-like mesh: outputs equal cpu's; the Linear and Conv2d
// nodes are simulated, their figures are those of the same layer simulated alone, and they
// write every output once (the accumulation buffer and the mesh keep partial sums on chip); the
// others run on the host.
inline void check_zoo_models(const std::vector<ZooCase>& cases) {
  for (const ZooCase& c : cases) {
    zoo::ModelOptions o;
    o.input = c.input;
    Graph g = zoo::build(c.model, o);
    ParameterSet params = ParameterSet::initialize(g, 1);
    Shape shape = c.input;
    shape.insert(shape.begin(), c.batch);
    const std::vector<Tensor> inputs = {uniform(shape, 2)};
    for (const char* target : {"maeri_256mses_64_bw.cfg", "tpu_16_16_pes.cfg"}) {
      SCOPED_TRACE(c.model + " on " + target);
      auto exe = compare_with_cpu(g, params, inputs, "sim:" + kConfigs + target);
      const auto& nodes = bs::simulated(*exe)->node_simulations();
      ASSERT_EQ(nodes.size(), g.nodes().size());
      for (std::size_t i = 0; i < nodes.size(); ++i) {
        EXPECT_EQ(nodes[i].node, g.nodes()[i].name);
        const OpKind k = g.nodes()[i].kind;
        EXPECT_EQ(nodes[i].simulated(), k == OpKind::Linear || k == OpKind::Conv2d)
            << nodes[i].node << ": " << nodes[i].note;
        if (!nodes[i].simulated()) continue;
        // Every output is written once (the accumulation buffer keeps the folds on chip).
        const Shape& out = g.value(g.nodes()[i].outputs[0]).shape;
        std::uint64_t outputs = static_cast<std::uint64_t>(c.batch);
        for (std::size_t d = 1; d < out.size(); ++d) outputs *= static_cast<std::uint64_t>(out[d]);
        EXPECT_EQ(nodes[i].stats.gb.writes(), outputs) << nodes[i].node << " " << nodes[i].workload;
        EXPECT_GT(nodes[i].stats.cycles, 0u);
        expect_single_op_counts(g, g.nodes()[i], nodes[i], bs::simulated(*exe)->target().dense->hw,
                                c.batch);
        EXPECT_GT(nodes[i].energy, 0.0);
        EXPECT_GT(nodes[i].utilization(), 0.0);
        EXPECT_LE(nodes[i].utilization(), 1.0);
      }
    }
  }
}

}  // namespace telar::testing
