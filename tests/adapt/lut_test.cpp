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
  EXPECT_DOUBLE_EQ(t.rest_ms(), 0.5);
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

// The whole model against its layers' sum: the least-squares line by hand. Points on
// y = 0.2 x + 0.3 give it back; (1, 0.5), (3, 1.1), (2, 0.6), (4, 1.2): means 2.5 and 0.85,
// Sxy = (-1.5)(-0.35) + (0.5)(0.25) + (-0.5)(-0.25) + (1.5)(0.35) = 1.3, Sxx = 5, so the slope
// is 0.26 and the intercept 0.85 - 0.26 x 2.5 = 0.2. One point, or a falling line: scale 1 and
// the mean difference.
TEST(LatencyTable, WholeModelLineByHand) {
  WholeModelFit f = fit_whole_model({{1, 0.5}, {2, 0.7}, {3, 0.9}});
  EXPECT_NEAR(f.scale, 0.2, 1e-12);
  EXPECT_NEAR(f.rest_ms, 0.3, 1e-12);
  f = fit_whole_model({{1, 0.5}, {3, 1.1}, {2, 0.6}, {4, 1.2}});
  EXPECT_NEAR(f.scale, 0.26, 1e-12);
  EXPECT_NEAR(f.rest_ms, 0.2, 1e-12);
  f = fit_whole_model({{2, 1.5}});
  EXPECT_DOUBLE_EQ(f.scale, 1.0);
  EXPECT_DOUBLE_EQ(f.rest_ms, -0.5);
  f = fit_whole_model({{1, 1.0}, {2, 0.9}});
  EXPECT_DOUBLE_EQ(f.scale, 1.0);
  EXPECT_NEAR(f.rest_ms, -0.55, 1e-12);
  EXPECT_THROW(fit_whole_model({}), Error);
}

// A table's estimate of a model: scale x the sum of its layers' entries + rest. The model: a
// 1x1 convolution "a" from 8 to 16 channels; its entry at (8, 16) is 2 ms; scale 0.25 and rest
// 0.5 give 0.25 x 2 + 0.5 = 1 ms (version 1's tables, without scale: 2 + 0.5).
TEST(LatencyTable, EstimatesScaleTheLayersAndAddTheRest) {
  graph::GraphBuilder b("m");
  b.output(b.conv2d(b.input("x", {8, 4, 4}), 16, 1, 1, 0, 1, true, "a"));
  const graph::Graph g = b.finish();
  const std::string key = lut_layers(g).at(0).key;
  const std::string header =
      R"({"format":"telar-lut","version":3,"target":"cpu","precision":"fp32","model":"m","layers":{"a":")" +
      key + "\"}}\n";
  const std::string entry = R"({"key":")" + key +
                            R"(","in":8,"out":16,"ms":2})"
                            "\n";
  const fs::path scaled =
      write_table("scaled", header + entry +
                                R"({"rest_ms":0.5,"scale":0.25,"calibration":[]})"
                                "\n");
  EXPECT_DOUBLE_EQ(LatencyTable::read(scaled).estimate(g, LutInterpolation::Exact), 1.0);
  const fs::path unscaled = write_table("unscaled", header + entry +
                                                        R"({"rest_ms":0.5})"
                                                        "\n");
  EXPECT_DOUBLE_EQ(LatencyTable::read(unscaled).estimate(g, LutInterpolation::Exact), 2.5);
  const fs::path negative = write_table("negative", header + entry +
                                                        R"({"rest_ms":0.5,"scale":-1})"
                                                        "\n");
  EXPECT_THROW(LatencyTable::read(negative), Error);
  for (const auto& f : {scaled, unscaled, negative}) fs::remove(f);
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
  EXPECT_DOUBLE_EQ(LatencyTable::read(good).rest_ms(), 0.5);
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
