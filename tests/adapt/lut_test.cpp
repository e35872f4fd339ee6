// The latency look-up table: a table written by hand read back and queried (exact hits,
// bilinear between grid points and clamped outside, a depthwise layer along its diagonal, the
// rest added to a model's sum), the layers a model's table covers, and bad tables refused.
#include "adapt/lut.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "graph/builder.hpp"
#include "graph/zoo/zoo.hpp"

using namespace telar;
using namespace telar::adapt;
namespace fs = std::filesystem;

namespace {

fs::path write_table(const std::string& name, const std::string& body) {
  const fs::path file = fs::temp_directory_path() / ("telar_lut_test_" + name + ".lut");
  std::ofstream(file) << body;
  return file;
}

// A model of one 1x1 convolution "a" (8 -> `out` channels on a `size` x `size` input).
graph::Graph one_conv(const std::string& name = "m", std::int64_t out = 16, std::int64_t size = 4) {
  graph::GraphBuilder b(name);
  b.output(b.conv2d(b.input("x", {8, size, size}), out, 1, 1, 0, 1, true, "a"));
  return b.finish();
}

// A table of `g` (one_conv) in format `version` without its last line: the header and the
// entry of "a" at (8, 16) channels, 2 ms.
std::string one_conv_table(const graph::Graph& g, int version) {
  const std::string key = lut_layers(g).at(0).key;
  return R"({"format":"telar-lut","version":)" + std::to_string(version) +
         R"(,"target":"cpu","precision":"fp32","model":"m","layers":{"a":")" + key + "\"}}\n" +
         R"({"key":")" + key + R"(","in":8,"out":16,"ms":2})" + "\n";
}

const std::string kHeader =
    R"({"format":"telar-lut","version":1,"target":"cpu","precision":"fp32","model":"m","layers":{"a":"A","d":"D"}})"
    "\n";

TEST(LatencyTable, ExactBilinearClampedAndDiagonalQueries) {
  const fs::path file = write_table("grid", kHeader + R"({"key":"A","in":8,"out":8,"ms":1})"
                                                      "\n"
                                                      R"({"key":"A","in":8,"out":16,"ms":2})"
                                                      "\n"
                                                      R"({"key":"A","in":16,"out":8,"ms":3})"
                                                      "\n"
                                                      R"({"key":"A","in":16,"out":16,"ms":4})"
                                                      "\n"
                                                      R"({"key":"D","in":8,"out":8,"ms":10})"
                                                      "\n"
                                                      R"({"key":"D","in":16,"out":16,"ms":20})"
                                                      "\n"
                                                      R"({"rest_ms":0.5})"
                                                      "\n");
  const LatencyTable t = LatencyTable::read(file);
  EXPECT_EQ(t.entries(), 6u);
  EXPECT_DOUBLE_EQ(t.fit().rest_ms, 0.5);
  EXPECT_DOUBLE_EQ(t.layer_ms("A", 16, 8, LutInterpolation::Exact), 3.0);
  // (12, 12): the middle of the cell, the mean of its corners; (12, 8) halfway along one edge.
  EXPECT_DOUBLE_EQ(t.layer_ms("A", 12, 12, LutInterpolation::Bilinear), 2.5);
  EXPECT_DOUBLE_EQ(t.layer_ms("A", 12, 8, LutInterpolation::Bilinear), 2.0);
  EXPECT_DOUBLE_EQ(t.layer_ms("A", 10, 14, LutInterpolation::Bilinear),
                   0.75 * (0.25 * 1 + 0.75 * 2) + 0.25 * (0.25 * 3 + 0.75 * 4));
  EXPECT_DOUBLE_EQ(t.layer_ms("A", 40, 16, LutInterpolation::Bilinear), 4.0);  // clamped
  EXPECT_DOUBLE_EQ(t.layer_ms("A", 4, 4, LutInterpolation::Bilinear), 1.0);
  EXPECT_THROW(t.layer_ms("A", 12, 12, LutInterpolation::Exact), Error);
  EXPECT_DOUBLE_EQ(t.layer_ms("D", 12, 12, LutInterpolation::Bilinear), 15.0);
  EXPECT_THROW(t.layer_ms("B", 8, 8, LutInterpolation::Bilinear), Error);
  EXPECT_EQ(parse_interpolation("exact"), LutInterpolation::Exact);
  EXPECT_THROW(parse_interpolation("spline"), Error);
  fs::remove(file);
}

// scipy.interpolate.Rbf(in, out, ms, function='cubic') on two points of a diagonal, (8, 8) -> 0
// and (16, 16) -> 1, by hand: with d = |p1 - p0| = sqrt(128), the system [[0, d³], [d³, 0]] w =
// [0, 1] gives w = [1/d³, 0], so f(q) = (|q - p0| / d)³: 1/8 at (12, 12), the midpoint.
TEST(LatencyTable, CubicRadialBasisFunctionsAsScipysRbf) {
  const fs::path file = write_table("rbf", kHeader + R"({"key":"D","in":8,"out":8,"ms":0})"
                                                     "\n"
                                                     R"({"key":"D","in":16,"out":16,"ms":1})"
                                                     "\n"
                                                     R"({"rest_ms":0})"
                                                     "\n");
  const LatencyTable t = LatencyTable::read(file);
  for (LutInterpolation i : {LutInterpolation::Rbf, LutInterpolation::RbfPrefit}) {
    EXPECT_NEAR(t.layer_ms("D", 12, 12, i), 0.125, 1e-12);
    EXPECT_NEAR(t.layer_ms("D", 16, 16, i), 1.0, 1e-12);  // a point of the table: its entry
    EXPECT_NEAR(t.layer_ms("D", 10, 14, i), std::pow(std::hypot(2.0, 6.0) / std::sqrt(128.0), 3),
                1e-12);
  }
  EXPECT_EQ(parse_interpolation("rbf-prefit"), LutInterpolation::RbfPrefit);
  fs::remove(file);
}

// The whole model against its layers' sum, by hand. Points on y = 0.2 x + 0.3 give the line
// back. (1, 1), (2, 2), (3, 2), least squares of the relative error (weights 1/y²: 1, 1/4,
// 1/4): the normal equations 4.25 a + 2.25 b = 3.5 and 2.25 a + 1.5 b = 2 give a = 4/7 and
// b = 10/21 (absolute least squares: 1/2 and 2/3). Points on y = 0.5 x + 0.1 m + 0.2, m the
// weights past the cache, give the plane back; a negative memory factor is dropped (the line
// through the same points instead). One point, sums that do not vary or a falling line: scale 1
// and the mean difference. Latencies that do not follow the layers' sums: the sums alone.
TEST(LatencyTable, WholeModelFitByHand) {
  WholeModelFit f = fit_whole_model({{1, 0, 0.5}, {2, 0, 0.7}, {3, 0, 0.9}});
  EXPECT_NEAR(f.scale, 0.2, 1e-12);
  EXPECT_NEAR(f.rest_ms, 0.3, 1e-12);
  EXPECT_EQ(f.memory_ms_per_mb, 0.0);
  f = fit_whole_model({{1, 0, 1}, {2, 0, 2}, {3, 0, 2}});
  EXPECT_NEAR(f.scale, 4.0 / 7.0, 1e-12);
  EXPECT_NEAR(f.rest_ms, 10.0 / 21.0, 1e-12);
  f = fit_whole_model({{1, 0, 0.7}, {2, 0, 1.2}, {2, 4, 1.6}, {3, 2, 1.9}});
  EXPECT_NEAR(f.scale, 0.5, 1e-12);
  EXPECT_NEAR(f.memory_ms_per_mb, 0.1, 1e-12);
  EXPECT_NEAR(f.rest_ms, 0.2, 1e-12);
  // More weights past the cache, less time: noise, not memory.
  f = fit_whole_model({{1, 0, 1}, {2, 0, 2}, {3, 0, 3}, {3, 4, 2.9}});
  const WholeModelFit line = fit_whole_model({{1, 0, 1}, {2, 0, 2}, {3, 0, 3}, {3, 0, 2.9}});
  EXPECT_EQ(f.memory_ms_per_mb, 0.0);
  EXPECT_DOUBLE_EQ(f.scale, line.scale);
  EXPECT_DOUBLE_EQ(f.rest_ms, line.rest_ms);
  EXPECT_GT(f.scale, 0.9);
  EXPECT_TRUE(f.follows());
  // Latencies that do not follow the layers (a busy machine): (1, 1), (2, 0.5), (3, 1.1),
  // (4, 0.6) correlate at -0.3 / sqrt(5 x 0.26); no fit, the layers' sum alone.
  f = fit_whole_model({{1, 0, 1.0}, {2, 0, 0.5}, {3, 0, 1.1}, {4, 0, 0.6}});
  EXPECT_NEAR(f.correlation, -0.3 / std::sqrt(1.3), 1e-12);
  EXPECT_FALSE(f.follows());
  EXPECT_DOUBLE_EQ(f.scale, 1.0);
  EXPECT_DOUBLE_EQ(f.rest_ms, 0.0);
  EXPECT_DOUBLE_EQ(f.memory_ms_per_mb, 0.0);
  f = fit_whole_model({{2, 0, 1.5}});
  EXPECT_DOUBLE_EQ(f.scale, 1.0);
  EXPECT_DOUBLE_EQ(f.rest_ms, -0.5);
  f = fit_whole_model({{2, 0, 1.5}, {2, 0, 1.7}});
  EXPECT_DOUBLE_EQ(f.scale, 1.0);
  EXPECT_NEAR(f.rest_ms, -0.4, 1e-12);
  f = fit_whole_model({{1, 0, 1.0}, {2, 0, 0.9}});
  EXPECT_DOUBLE_EQ(f.scale, 1.0);
  EXPECT_NEAR(f.rest_ms, -0.55, 1e-12);
  EXPECT_THROW(fit_whole_model({}), Error);
}

// Weights past the cache, by hand: layers of 1 Mi and 3 Mi fp32 weights (4 and 12 MB) with an
// 8 MB cache: the model streams 16 - 8 = 8 MB, of which the second layer alone streamed 12 - 8
// = 4: 4 MB more. With a 32 MB cache, or none, nothing.
TEST(LatencyTable, WeightsPastTheCacheByHand) {
  std::vector<LutLayer> layers(2);
  layers[0].weights = 1 << 20;
  layers[1].weights = 3 << 20;
  const double mb = 1 << 20;
  EXPECT_DOUBLE_EQ(weights_past_cache_mb(layers, 4.0, 8 * mb), 4.0);
  EXPECT_DOUBLE_EQ(weights_past_cache_mb(layers, 4.0, 32 * mb), 0.0);
  EXPECT_DOUBLE_EQ(weights_past_cache_mb(layers, 4.0, 0.0), 0.0);
  // int8, 1 and 3 MB, a 2 MB cache: the model streams 2 MB, the second layer alone 1.
  EXPECT_DOUBLE_EQ(weights_past_cache_mb(layers, 1.0, 2 * mb), 1.0);
}

// A table's estimate of a model: scale x the sum of its layers' entries + rest. The model: a
// 1x1 convolution "a" from 8 to 16 channels; its entry at (8, 16) is 2 ms; scale 0.25 and rest
// 0.5 give 0.25 x 2 + 0.5 = 1 ms (version 1's tables, without scale: 2 + 0.5).
TEST(LatencyTable, EstimatesScaleTheLayersAndAddTheRest) {
  const graph::Graph g = one_conv();
  const std::string head = one_conv_table(g, 3);
  const fs::path scaled =
      write_table("scaled", head + R"({"rest_ms":0.5,"scale":0.25,"calibration":[]})"
                                   "\n");
  EXPECT_DOUBLE_EQ(LatencyTable::read(scaled).estimate(g, LutInterpolation::Exact), 1.0);
  const fs::path unscaled = write_table("unscaled", head + R"({"rest_ms":0.5})"
                                                           "\n");
  EXPECT_DOUBLE_EQ(LatencyTable::read(unscaled).estimate(g, LutInterpolation::Exact), 2.5);
  const fs::path negative = write_table("negative", head + R"({"rest_ms":0.5,"scale":-1})"
                                                           "\n");
  EXPECT_THROW(LatencyTable::read(negative), Error);
  for (const auto& f : {scaled, unscaled, negative}) fs::remove(f);
}

// The memory term: "a" (8 -> 16, 128 fp32 weights: 512 bytes) and "b" (16 -> 32, 2,048 bytes)
// with a 1 KiB cache stream 2,560 - 1,024 = 1,536 bytes, of which b alone streamed 1,024: 512
// bytes past the cache, 1/2048 MB; at 512 ms per MB that is 0.25 ms, added to 0.5 x (2 + 3) +
// 0.1.
TEST(LatencyTable, EstimatesAddTheWeightsPastTheCache) {
  graph::GraphBuilder b("m");
  const graph::ValueId a = b.conv2d(b.input("x", {8, 4, 4}), 16, 1, 1, 0, 1, true, "a");
  b.output(b.conv2d(a, 32, 1, 1, 0, 1, true, "b"));
  const graph::Graph g = b.finish();
  const std::vector<LutLayer> layers = lut_layers(g);
  ASSERT_EQ(layers.size(), 2u);
  EXPECT_EQ(layers[0].weights, 128);
  EXPECT_EQ(layers[1].weights, 512);
  const std::string header =
      R"({"format":"telar-lut","version":4,"target":"cpu","precision":"fp32","model":"m","layers":{"a":")" +
      layers[0].key + R"(","b":")" + layers[1].key + "\"}}\n";
  const std::string entries = R"({"key":")" + layers[0].key + R"(","in":8,"out":16,"ms":2})" +
                              "\n" + R"({"key":")" + layers[1].key +
                              R"(","in":16,"out":32,"ms":3})" + "\n";
  const fs::path file = write_table(
      "memory", header + entries +
                    R"({"rest_ms":0.1,"scale":0.5,"memory_ms_per_mb":512,"cache_mb":0.0009765625})"
                    "\n");
  const LatencyTable t = LatencyTable::read(file);
  EXPECT_DOUBLE_EQ(t.cache_bytes(), 1024.0);
  EXPECT_NEAR(t.estimate(g, LutInterpolation::Exact), 0.5 * 5 + 0.25 + 0.1, 1e-12);
  EXPECT_FALSE(t.fitted_original_ms().has_value());  // no calibration points kept
  fs::remove(file);
}

// The calibration's first point is the model as it is: its whole-model latency when the fit
// was made is what `lut check` compares its own measurement of the original with. Points that
// are not three numbers >= 0 are refused.
TEST(LatencyTable, KeepsTheOriginalsLatencyAtTheFit) {
  const std::string head = one_conv_table(one_conv(), 4);
  const fs::path file = write_table(
      "calibrated", head + R"({"rest_ms":0,"calibration":[[2,0,1.75],[1,0,0.9]]})" + "\n");
  ASSERT_TRUE(LatencyTable::read(file).fitted_original_ms().has_value());
  EXPECT_DOUBLE_EQ(*LatencyTable::read(file).fitted_original_ms(), 1.75);
  for (const std::string bad : {R"("x")", R"([[2,0]])", R"([[2,0,-1]])", R"([[2,0,"1"]])"}) {
    const fs::path damaged =
        write_table("damaged", head + R"({"rest_ms":0,"calibration":)" + bad + "}\n");
    try {
      LatencyTable::read(damaged);
      ADD_FAILURE() << bad << " accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("'calibration' must list points"), std::string::npos)
          << e.what();
    }
    fs::remove(damaged);
  }
  fs::remove(file);
}

// A table is for its model, maybe pruned: "a" as built (8 -> 16 on 4x4) and pruned (8 -> 8)
// pass; "a" on a 5x5 input, or a model of another name, is refused.
TEST(LatencyTable, ATableIsForItsModelPrunedOrNot) {
  const graph::Graph g = one_conv();
  const fs::path file = write_table("model", one_conv_table(g, 4) + R"({"rest_ms":0})" + "\n");
  const LatencyTable t = LatencyTable::read(file);
  EXPECT_NO_THROW(t.require_model(g, "x.lut"));
  EXPECT_NO_THROW(t.require_model(one_conv("m", 8, 4), "x.lut"));
  try {
    t.require_model(one_conv("m", 16, 5), "x.lut");
    ADD_FAILURE() << "a 5x5 input accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("its layer 'a' is"), std::string::npos) << e.what();
  }
  EXPECT_THROW(t.require_model(one_conv("n", 16, 4), "x.lut"), Error);
  // Wider than the table's grid (16 output channels): not a pruned model of its.
  try {
    t.require_model(one_conv("m", 24, 4), "x.lut");
    ADD_FAILURE() << "24 channels accepted by a table of 16";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("narrower"), std::string::npos) << e.what();
  }
  fs::remove(file);
  // A table of two layers is not the table of a model with one of them.
  graph::GraphBuilder b("m");
  b.output(b.conv2d(b.conv2d(b.input("x", {8, 4, 4}), 16, 1, 1, 0, 1, true, "a"), 16, 1, 1, 0, 1,
                    true, "b"));
  const graph::Graph two = b.finish();
  const std::string a = lut_layers(two).at(0).key, k = lut_layers(two).at(1).key;
  const std::string header = R"({"format":"telar-lut","version":4,"target":"cpu",)"
                             R"("precision":"fp32","model":"m","layers":{"a":")" +
                             a + R"(","b":")" + k + "\"}}\n";
  const fs::path both = write_table(
      "two", header + R"({"key":")" + a + R"(","in":8,"out":16,"ms":2})" + "\n" + R"({"key":")" +
                 k + R"(","in":16,"out":16,"ms":2})" + "\n" + R"({"rest_ms":0})" + "\n");
  const LatencyTable t2 = LatencyTable::read(both);
  EXPECT_NO_THROW(t2.require_model(two, "two.lut"));
  try {
    t2.require_model(one_conv("m", 16, 4), "two.lut");
    ADD_FAILURE() << "a model without layer 'b' accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'b' is not in this model"), std::string::npos)
        << e.what();
  }
  fs::remove(both);
}

TEST(LatencyTable, UnfinishedForeignAndDamagedFilesAreRefused) {
  const fs::path unfinished =
      write_table("unfinished", kHeader + R"({"key":"A","in":8,"out":8,"ms":1})"
                                          "\n");
  EXPECT_THROW(LatencyTable::read(unfinished), Error);
  const fs::path foreign = write_table("foreign", "not a table\n");
  EXPECT_THROW(LatencyTable::read(foreign), Error);
  EXPECT_THROW(LatencyTable::read(fs::temp_directory_path() / "telar_lut_none.lut"), Error);
  fs::remove(unfinished);
  fs::remove(foreign);
}

TEST(LatencyTable, EveryMalformedLineIsRefusedWithItsLineNumber) {
  const std::string entry = R"({"key":"A","in":8,"out":8,"ms":1})"
                            "\n";
  const std::string rest = R"({"rest_ms":0.5})"
                           "\n";
  // Each: a table with one thing wrong, and the line the refusal must name.
  const std::vector<std::pair<std::string, std::string>> bad = {
      {kHeader +
           R"({"key":"A","in":8,"ms":1})"
           "\n" +
           rest,
       ":2:"},  // no 'out'
      {kHeader +
           R"({"key":"A","in":8,"out":"8","ms":1})"
           "\n" +
           rest,
       ":2:"},  // a string
      {kHeader +
           R"({"key":"A","in":0,"out":8,"ms":1})"
           "\n" +
           rest,
       ":2:"},  // 0 channels
      {kHeader +
           R"({"key":"A","in":8,"out":8,"ms":-1})"
           "\n" +
           rest,
       ":2:"},  // negative
      {kHeader +
           R"({"key":"A","in":8,"out":8,"ms":1,"x":2})"
           "\n" +
           rest,
       ":2:"},  // unknown
      {kHeader +
           R"({"key":"Z","in":8,"out":8,"ms":1})"
           "\n" +
           rest,
       ":2:"},                                  // no such key
      {kHeader + entry + entry + rest, ":3:"},  // twice
      {kHeader + entry +
           R"({"rest_ms":"x"})"
           "\n",
       ":3:"},
      {kHeader + entry +
           R"({"rest_ms":0.5,"memory_ms_per_mb":-1})"
           "\n",
       ":3:"},
      {kHeader + entry + rest + entry, ":4:"},  // after the end
      {R"({"format":"telar-lut","version":9,"target":"cpu","precision":"fp32","model":"m","layers":{}})"
       "\n" +
           rest,
       ":1:"},
      {R"({"format":"telar-lut","version":1,"target":7,"precision":"fp32","model":"m","layers":{}})"
       "\n" +
           rest,
       ":1:"},
      {R"({"format":"telar-lut","version":1,"target":"cpu","precision":"fp32","model":"m","layers":{"a":1}})"
       "\n" +
           rest,
       ":1:"},
  };
  for (std::size_t k = 0; k < bad.size(); ++k) {
    const fs::path file = write_table("bad" + std::to_string(k), bad[k].first);
    try {
      LatencyTable::read(file);
      ADD_FAILURE() << "accepted: " << bad[k].first;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(file.string() + bad[k].second), std::string::npos)
          << e.what();
    }
    fs::remove(file);
  }
  // The same table without the fault is read.
  const fs::path good = write_table("good", kHeader + entry + rest);
  EXPECT_DOUBLE_EQ(LatencyTable::read(good).fit().rest_ms, 0.5);
  fs::remove(good);
}

TEST(LatencyTable, TheLayersOfAModelAndTheirOneNodeModels) {
  graph::zoo::ModelOptions o;
  o.input = Shape{3, 32, 32};
  const graph::Graph g = graph::zoo::build("mobilenet_v1:0.5", o);
  const std::vector<LutLayer> layers = lut_layers(g);
  // conv0, 13 depthwise and 13 pointwise convolutions, the classifier.
  ASSERT_EQ(layers.size(), 28u);
  int depthwise = 0;
  for (const LutLayer& l : layers) depthwise += l.depthwise;
  EXPECT_EQ(depthwise, 13);
  EXPECT_TRUE(layers.back().linear);
  // pw7 to pw11 are alike (256 -> 256 at 2x2): one key, measured once.
  const auto key_of = [&](const std::string& node) {
    for (const LutLayer& l : layers)
      if (l.node == node) return l.key;
    return std::string();
  };
  EXPECT_EQ(key_of("pw7"), key_of("pw11"));
  EXPECT_NE(key_of("pw6"), key_of("pw7"));
  // A one-node model of pw7 at 64 -> 40 channels.
  for (const LutLayer& l : layers)
    if (l.node == "pw7") {
      const graph::Graph m = layer_model(g, l, 64, 40);
      ASSERT_EQ(m.nodes().size(), 1u);
      EXPECT_EQ(m.value(m.outputs()[0]).shape[1], 40);
      EXPECT_EQ(m.value(m.inputs()[0]).shape[1], 64);
    }
}

}  // namespace
