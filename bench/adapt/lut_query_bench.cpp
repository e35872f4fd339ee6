// How long a query of a latency look-up table takes once the table is read (issue 22's goal:
// under 10 µs), on the table of the zoo's AlexNet at 64x64 (the workload of seed 003's 37x
// figure: its FC layers of 4096 give look-up grids of 64 x 64 points). The entries are a smooth
// made-up function of the channel counts (a query's cost does not depend on the values), written
// to a temporary file and read back as `telar adapt --lut` reads a table.
//   One layer's entry off the grid (fc2 at 4000 -> 4000, between grid points): bilinear,
//   rbf-prefit (the fit made once, kept), and rbf (NetAdapt's reference: a dense solve of the
//   layer's points at every miss; conv3's 1,152 points, as fc2's 4,096 take minutes a query).
//   A whole model's estimate (every layer of a pruned AlexNet, the rest added): what an
//   adaptation asks per candidate channel count.
//   build/release/bench/adapt/bench_lut_query
#include <benchmark/benchmark.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "adapt/channel_groups.hpp"
#include "adapt/lut.hpp"
#include "adapt/prune.hpp"
#include "graph/zoo/zoo.hpp"

using namespace telar;
using namespace telar::adapt;

namespace {

graph::Graph alexnet64() {
  graph::zoo::ModelOptions o;
  o.input = Shape{1, 64, 64};
  return graph::zoo::build("alexnet", o);
}

// The table of `g` with every grid point filled (the image's channels and the classes fixed).
const LatencyTable& table() {
  static const LatencyTable t = [] {
    const graph::Graph g = alexnet64();
    const std::vector<LutLayer> layers = lut_layers(g);
    std::map<std::string, std::string> keys;
    for (const LutLayer& l : layers) keys[l.node] = l.key;
    const std::filesystem::path file =
        std::filesystem::temp_directory_path() / "telar_bench_lut_query.lut";
    std::ofstream out(file);
    out << nlohmann::json{{"format", "telar-lut"}, {"version", 1},      {"target", "cpu"},
                          {"precision", "fp32"},   {"model", g.name()}, {"layers", keys}}
               .dump()
        << "\n";
    for (std::size_t k = 0; k < layers.size(); ++k) {
      const LutLayer& l = layers[k];
      const std::int64_t step = l.linear ? 64 : 8;
      for (std::int64_t i : lut_grid(l.in, step, k > 0))
        for (std::int64_t o : lut_grid(l.out, step, k + 1 < layers.size()))
          out << nlohmann::json{{"key", l.key},
                                {"in", i},
                                {"out", o},
                                {"ms", 0.01 + 1e-7 * static_cast<double>(i * o) +
                                           1e-4 * std::sqrt(static_cast<double>(i + o))}}
                     .dump()
              << "\n";
    }
    out << nlohmann::json{{"rest_ms", 0.05}}.dump() << "\n";
    out.close();
    LatencyTable read = LatencyTable::read(file);
    std::filesystem::remove(file);
    return read;
  }();
  return t;
}

std::string key_of(const std::string& node) {
  for (const LutLayer& l : lut_layers(alexnet64()))
    if (l.node == node) return l.key;
  return {};
}

void LayerQuery(benchmark::State& state, const std::string& node, LutInterpolation how) {
  const LatencyTable& t = table();
  const std::string key = key_of(node);
  const std::int64_t channels = node == "fc2" ? 4000 : 380;            // off the grid
  benchmark::DoNotOptimize(t.layer_ms(key, channels, channels, how));  // rbf-prefit: the fit
  for (auto _ : state) benchmark::DoNotOptimize(t.layer_ms(key, channels, channels, how));
  state.counters["grid points"] = static_cast<double>(node == "fc2" ? 64 * 64 : 24 * 48);
}

void ModelEstimate(benchmark::State& state, LutInterpolation how) {
  const LatencyTable& t = table();
  const graph::Graph g = alexnet64();
  // Every layer pruned off the grid: conv layers by 3 channels, FC layers by 30.
  const ChannelGroups groups(g);
  std::map<std::string, std::int64_t> channels;
  for (int k : groups.prunable()) {
    const std::int64_t c = groups.groups()[static_cast<std::size_t>(k)].channels;
    channels[g.node(groups.groups()[static_cast<std::size_t>(k)].sources.front()).name] =
        c - (c > 1000 ? 30 : 3);
  }
  const graph::Graph pruned = with_channel_counts(g, channels);
  benchmark::DoNotOptimize(t.estimate(pruned, how));
  for (auto _ : state) benchmark::DoNotOptimize(t.estimate(pruned, how));
}

BENCHMARK_CAPTURE(LayerQuery, fc2_bilinear, "fc2", LutInterpolation::Bilinear);
BENCHMARK_CAPTURE(LayerQuery, fc2_rbf_prefit, "fc2", LutInterpolation::RbfPrefit);
BENCHMARK_CAPTURE(LayerQuery, conv3_rbf_prefit, "conv3", LutInterpolation::RbfPrefit);
BENCHMARK_CAPTURE(LayerQuery, conv3_rbf_refit_per_miss, "conv3", LutInterpolation::Rbf)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(ModelEstimate, bilinear, LutInterpolation::Bilinear);
BENCHMARK_CAPTURE(ModelEstimate, rbf_prefit, LutInterpolation::RbfPrefit);

}  // namespace

BENCHMARK_MAIN();
