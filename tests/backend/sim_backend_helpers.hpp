#pragma once
// Shared by the sim: backend tests: running a graph on cpu and on a sim: target side by side.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "backend/sim/sim_backend.hpp"
#include "core/error.hpp"
#include "core/rng.hpp"
#include "graph/zoo/zoo.hpp"

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

struct ZooCase {
  std::string model;
  Shape input;
};

// Each model on MAERI and on the TPU-like mesh: outputs equal cpu's; the Linear and Conv2d
// nodes are simulated and write every output once (the accumulation buffer and the mesh keep
// partial sums on chip); the others run on the host.
inline void check_zoo_models(const std::vector<ZooCase>& cases) {
  for (const ZooCase& c : cases) {
    zoo::ModelOptions o;
    o.input = c.input;
    Graph g = zoo::build(c.model, o);
    ParameterSet params = ParameterSet::initialize(g, 1);
    Shape shape = c.input;
    shape.insert(shape.begin(), 2);
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
        std::uint64_t outputs = 2;
        for (std::size_t d = 1; d < out.size(); ++d) outputs *= static_cast<std::uint64_t>(out[d]);
        EXPECT_EQ(nodes[i].stats.gb.writes(), outputs) << nodes[i].node << " " << nodes[i].workload;
        EXPECT_GT(nodes[i].stats.cycles, 0u);
        EXPECT_GT(nodes[i].energy, 0.0);
        EXPECT_GT(nodes[i].utilization(), 0.0);
        EXPECT_LE(nodes[i].utilization(), 1.0);
      }
    }
  }
}

}  // namespace telar::testing
