// End-to-end tests of telar bench (docs/bench.md): the latency summary against its own per-run
// file, simulated targets' cycles turned into time, the batch sweep's memory bound, and bad
// input refused before anything is written.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_expect.hpp"
#include "run_command.hpp"

namespace fs = std::filesystem;
using telar::testing::fresh_temp_dir;
using telar::testing::expect_refused;
using telar::testing::last_json;
using telar::testing::run_telar;

namespace {

// latency.csv's rows of one (target, batch) point: each run's latency, and whether it was a
// probe of the thread choice.
struct Runs {
  std::vector<double> ms, chosen;  // every run; those that were not probes
  std::size_t probes = 0;
};
Runs runs_of(const fs::path& csv, const std::string& target, int batch) {
  std::ifstream in(csv);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "target,precision,batch,iteration,latency_ms,probe");
  Runs runs;
  while (std::getline(in, line)) {
    std::stringstream row(line);
    std::string t, precision, b, i, v, probe;
    std::getline(row, t, ',');
    std::getline(row, precision, ',');
    std::getline(row, b, ',');
    std::getline(row, i, ',');
    std::getline(row, v, ',');
    std::getline(row, probe, ',');
    if (t != target || std::stoi(b) != batch) continue;
    EXPECT_TRUE(probe == "0" || probe == "1") << line;
    runs.ms.push_back(std::stod(v));
    if (probe == "1")
      ++runs.probes;
    else
      runs.chosen.push_back(std::stod(v));
  }
  return runs;
}

double median_of(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  const std::size_t n = ms.size();
  return n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
}

}  // namespace

TEST(Bench, SummaryAgreesWithItsOwnRuns) {
  const std::string out = fresh_temp_dir("bench") + "/run";
  auto r = run_telar({"bench", "--model", "mnist_cnn", "--batch", "1,4", "--duration", "0.05",
                      "--warmup", "0.01", "--min-iterations", "7", "--threads", "1", "--out", out,
                      "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = last_json(r.out);
  ASSERT_EQ(j["points"].size(), 2u);
  for (const auto& p : j["points"]) {
    const int batch = p["batch"].get<int>();
    std::vector<double> ms = runs_of(fs::path(out) / "latency.csv", "cpu", batch).ms;
    ASSERT_GE(ms.size(), 7u);
    EXPECT_EQ(p["iterations"].get<std::size_t>(), ms.size());
    EXPECT_EQ(p["probe_runs"].get<std::size_t>(), 0u);  // one thread: nothing to choose
    std::sort(ms.begin(), ms.end());
    // The CSV keeps 6 decimals of a millisecond.
    EXPECT_NEAR(p["latency_ms_median"].get<double>(), median_of(ms), 2e-6);
    EXPECT_NEAR(p["latency_ms_min"].get<double>(), ms.front(), 2e-6);
    EXPECT_NEAR(p["latency_ms_max"].get<double>(), ms.back(), 2e-6);
    EXPECT_LE(p["latency_ms_p90"].get<double>(), p["latency_ms_p99"].get<double>());
    EXPECT_NEAR(p["samples_per_s"].get<double>() * p["latency_ms_median"].get<double>(),
                1000.0 * batch, 1e-6 * batch);
  }
  for (const char* f : {"run.json", "bench.csv", "latency.csv", "report.html"})
    EXPECT_TRUE(fs::exists(fs::path(out) / f)) << f;
  std::ifstream run_json(fs::path(out) / "run.json");
  const auto run = nlohmann::json::parse(run_json);
  const auto& env = run["result"]["environment"];
  EXPECT_TRUE(env.contains("isa"));
  EXPECT_TRUE(env.contains("load_average_before"));
  EXPECT_TRUE(env.contains("load_average_after"));
  std::ifstream html(fs::path(out) / "report.html");
  const std::string page((std::istreambuf_iterator<char>(html)), std::istreambuf_iterator<char>());
  EXPECT_NE(page.find("Throughput against the batch size"), std::string::npos);
}

// On two threads the CPU tries one thread now and then (cpu/thread_choice.hpp): the fifth
// evaluation forward of a batch size at the latest, counting the warm-up's one. Those probes stay
// in latency.csv, marked, and out of the summary, which is of the runs on the chosen threads.
TEST(Bench, TheThreadChoicesProbesAreMarkedAndLeftOutOfTheSummary) {
  const std::string out = fresh_temp_dir("bench_probes") + "/run";
  auto r =
      run_telar({"bench", "--model", "mnist_cnn", "--batch", "8", "--duration", "0", "--warmup",
                 "0", "--min-iterations", "12", "--threads", "2", "--out", out, "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = last_json(r.out);
  ASSERT_EQ(j["points"].size(), 1u);
  const auto& p = j["points"][0];
  const Runs runs = runs_of(fs::path(out) / "latency.csv", "cpu", 8);
  EXPECT_GE(runs.probes, 1u);
  EXPECT_EQ(p["probe_runs"].get<std::size_t>(), runs.probes);
  EXPECT_EQ(runs.chosen.size(), 12u);  // --min-iterations counts the chosen runs
  EXPECT_EQ(p["iterations"].get<std::size_t>(), runs.chosen.size());
  EXPECT_NEAR(p["latency_ms_median"].get<double>(), median_of(runs.chosen), 2e-6);
  EXPECT_NEAR(p["latency_ms_max"].get<double>(),
              *std::max_element(runs.chosen.begin(), runs.chosen.end()), 2e-6);
  std::ifstream csv(fs::path(out) / "bench.csv");
  std::string header, row;
  std::getline(csv, header);
  std::getline(csv, row);
  EXPECT_EQ(header.substr(header.rfind(',') + 1), "probe_runs");
  EXPECT_EQ(row.substr(row.rfind(',') + 1), std::to_string(runs.probes));
}

// --layers times each node of the graph as compiled for inference (mnist_cnn: two convolutions
// with their ReLUs fused, two pools, a flatten, two Linears), prints the longest first, and
// writes every node to layers.csv (shares summing to 1); a sim target is not timed node by node.
TEST(Bench, LayersTimeEachNodeOfTheCompiledGraph) {
  const std::string out = fresh_temp_dir("bench_layers") + "/run";
  auto r =
      run_telar({"bench", "--model", "mnist_cnn", "--target",
                 std::string("cpu,sim:") + TELAR_SOURCE_DIR + "/configs/maeri_128mses_128_bw.cfg",
                 "--duration", "0.05", "--warmup", "0.01", "--min-iterations", "5", "--threads",
                 "1", "--layers", "3", "--out", out, "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = last_json(r.out);
  ASSERT_EQ(j["points"].size(), 2u);
  const auto& cpu = j["points"][0];
  ASSERT_EQ(cpu["target"], "cpu");
  EXPECT_FALSE(j["points"][1].contains("layers"));
  EXPECT_NE(r.out.find("is not timed node by node"), std::string::npos) << r.out;
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"conv1", "Conv2d"},    {"pool1", "MaxPool2d"}, {"conv2", "Conv2d"}, {"pool2", "MaxPool2d"},
      {"flatten", "Flatten"}, {"fc1", "Linear"},      {"fc2", "Linear"}};
  ASSERT_EQ(cpu["layers"].size(), expected.size()) << cpu["layers"].dump();
  std::string longest;
  double most = -1.0;
  for (std::size_t k = 0; k < expected.size(); ++k) {
    const auto& layer = cpu["layers"][k];
    EXPECT_EQ(layer["node"], expected[k].first);
    EXPECT_EQ(layer["op"], expected[k].second);
    EXPECT_GT(layer["ms"].get<double>(), 0.0);
    if (layer["ms"].get<double>() > most) {
      most = layer["ms"].get<double>();
      longest = layer["node"].get<std::string>();
    }
  }
  EXPECT_GE(cpu["layer_runs"].get<int>(), 3);
  EXPECT_LE(cpu["layer_runs"].get<int>(), 30);
  // The table's first row is the longest node; three rows follow its header.
  const auto table = r.out.find("  by op: ");
  ASSERT_NE(table, std::string::npos) << r.out;
  std::istringstream lines(r.out.substr(table));
  std::string line;
  std::vector<std::string> rows;
  std::getline(lines, line);  // by op
  std::getline(lines, line);  // header
  while (std::getline(lines, line) && line.find('%') != std::string::npos) rows.push_back(line);
  ASSERT_GE(rows.size(), 3u) << r.out;
  EXPECT_NE(rows[0].find(" " + longest + " "), std::string::npos) << rows[0];
  std::ifstream csv(fs::path(out) / "layers.csv");
  std::getline(csv, line);
  EXPECT_EQ(line, "target,precision,batch,node,op,detail,ms,share");
  double shares = 0.0;
  int count = 0;
  while (std::getline(csv, line)) {
    shares += std::stod(line.substr(line.rfind(',') + 1));
    ++count;
  }
  EXPECT_EQ(count, static_cast<int>(expected.size()));
  EXPECT_NEAR(shares, 1.0, 1e-4);
  std::ifstream html(fs::path(out) / "report.html");
  const std::string page((std::istreambuf_iterator<char>(html)), std::istreambuf_iterator<char>());
  EXPECT_NE(page.find("Where the time goes"), std::string::npos);
}

// A sim: target's latency is its simulated cycles at --clock-ghz: half the time at twice the
// clock, the same cycles.
TEST(Bench, SimulatedCyclesBecomeTimeAtTheClock) {
  std::vector<nlohmann::json> points;
  for (const char* ghz : {"1", "2"}) {
    auto r =
        run_telar({"bench", "--model", "mlp:784-64-10", "--target",
                   std::string("sim:") + TELAR_SOURCE_DIR + "/configs/maeri_128mses_128_bw.cfg",
                   "--clock-ghz", ghz, "--json"});
    ASSERT_EQ(r.status, 0) << r.err;
    points.push_back(last_json(r.out)["points"][0]);
  }
  const auto cycles = points[0]["cycles"].get<double>();
  EXPECT_GT(cycles, 0.0);
  EXPECT_EQ(points[1]["cycles"], points[0]["cycles"]);
  EXPECT_DOUBLE_EQ(points[0]["latency_ms_median"].get<double>(), cycles / 1e6);
  EXPECT_DOUBLE_EQ(points[1]["latency_ms_median"].get<double>(), cycles / 2e6);
  EXPECT_TRUE(points[0]["simulated"].get<bool>());
}

// --batch-sweep doubles the batch while the next size's plan fits --max-memory, as predicted
// from what the last sizes' plans held.
TEST(Bench, BatchSweepDoublesUntilTheMemoryLimit) {
  auto r = run_telar({"bench", "--model", "mlp:784-64-10", "--batch-sweep", "--max-memory", "512K",
                      "--duration", "0.01", "--warmup", "0", "--min-iterations", "2", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto points = last_json(r.out)["points"];
  ASSERT_GE(points.size(), 2u);
  ASSERT_LE(points.size(), 17u);
  for (std::size_t i = 0; i < points.size(); ++i)
    EXPECT_EQ(points[i]["batch"].get<std::int64_t>(), std::int64_t{1} << i);
  // Each size's plan is reported, and the sweep went on only while it held less than the
  // limit, stopping with a line that says why (the largest size, 65,536, cannot fit 512 KB).
  for (std::size_t i = 0; i < points.size(); ++i) {
    ASSERT_TRUE(points[i].contains("planned_bytes")) << i;
    EXPECT_GT(points[i]["planned_bytes"].get<std::int64_t>(), 0);
    if (i + 1 < points.size()) {
      EXPECT_LE(points[i]["planned_bytes"].get<std::int64_t>(), 512 * 1024);
    }
  }
  EXPECT_NE(r.out.find("the sweep stops here"), std::string::npos) << r.out;
  // A larger limit sweeps further.
  auto more = run_telar({"bench", "--model", "mlp:784-64-10", "--batch-sweep", "--max-memory", "4M",
                         "--duration", "0.01", "--warmup", "0", "--min-iterations", "2", "--json"});
  ASSERT_EQ(more.status, 0) << more.err;
  EXPECT_GT(last_json(more.out)["points"].size(), points.size());
}

TEST(Bench, BadInputIsRefusedBeforeAnythingIsWritten) {
  const std::string out = fresh_temp_dir("bench_bad") + "/run";
  const std::vector<std::string> base = {"bench", "--model", "mlp:784-64-10", "--out", out};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return run_telar(args);
  };
  expect_refused(with({"--batch-sweep", "--max-memory", "1K"}), "raise --max-memory");
  expect_refused(with({"--batch-sweep", "--batch", "8"}), "not both");
  expect_refused(with({"--max-memory", "4G"}), "add --batch-sweep");
  expect_refused(with({"--target", "tpu"}), "tpu");
  expect_refused(with({"--batch", "0"}), "must be positive");
  // A batch whose plan cannot fit in this machine's memory (784 floats an image alone: 3 TB).
  expect_refused(with({"--batch", "1000000000"}), "give a smaller --batch");
  // Data is --accuracy's test set; without it, it would be read for nothing.
  expect_refused(with({"--data", "nosuch"}), "add --accuracy");
  expect_refused(with({"--batch-sweep", "--max-memory", "4Q"}), "K, M, G or T");
  expect_refused(with({"--layers", "-1"}), ">= 0");
  expect_refused(with({"--seed", "-1"}), ">= 0");  // a seed is a whole number >= 0
  expect_refused(with({"--target", "sim:" + out + "/none.cfg"}), "no hardware configuration");
  EXPECT_FALSE(fs::exists(out));
  // Sizes with a B or iB are sizes: a sweep under 4 GB starts.
  auto gb = with({"--batch-sweep", "--max-memory", "4GB", "--duration", "0.01", "--warmup", "0",
                  "--min-iterations", "2", "--json"});
  EXPECT_EQ(gb.status, 0) << gb.err;
}

TEST(Bench, EachTargetAtEachPrecision) {
  auto r = run_telar({"bench", "--model", "mnist_cnn", "--precision", "fp32,bf16", "--duration",
                      "0.02", "--warmup", "0", "--min-iterations", "3", "--json"});
  if (r.status == 2 && r.err.find("avx512_bf16") != std::string::npos)
    GTEST_SKIP() << "no bf16 kernels on this CPU: " << r.err;
  ASSERT_EQ(r.status, 0) << r.err;
  const auto points = last_json(r.out)["points"];
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[0]["precision"], "fp32");
  EXPECT_EQ(points[1]["precision"], "bf16");
  EXPECT_NE(r.out.find("cpu bf16"), std::string::npos) << r.out;
  expect_refused(run_telar({"bench", "--model", "mnist_cnn", "--precision", "int4"}), "int4");
}

// A trained model's accuracy next to its latency is telar eval's accuracy of the checkpoint.
TEST(Bench, AccuracyOfACheckpointIsEvalsAccuracy) {
  const std::string run = fresh_temp_dir("bench_acc") + "/run";
  auto t =
      run_telar({"train", "--model", "mnist_cnn", "--data", "synthetic:256:1x28x28:10", "--epochs",
                 "1", "--batch-size", "32", "--threads", "1", "--quiet", "--out", run});
  ASSERT_EQ(t.status, 0) << t.err;
  auto e = run_telar({"eval", "--checkpoint", run, "--data", "synthetic:256:1x28x28:10", "--json"});
  ASSERT_EQ(e.status, 0) << e.err;
  auto b =
      run_telar({"bench", "--checkpoint", run, "--accuracy", "--data", "synthetic:256:1x28x28:10",
                 "--duration", "0.01", "--warmup", "0", "--min-iterations", "2", "--json"});
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_DOUBLE_EQ(last_json(b.out)["points"][0]["accuracy"].get<double>(),
                   last_json(e.out)["accuracy"].get<double>());
  expect_refused(run_telar({"bench", "--model", "mnist_cnn", "--accuracy"}), "--checkpoint");
  expect_refused(run_telar({"bench"}), "--model");
  // The checkpoint's model is as it was trained; data of more classes than it has outputs is
  // refused before the run directory is made.
  const std::string out = fs::path(run).parent_path() / "bench";
  expect_refused(run_telar({"bench", "--checkpoint", run, "--input", "3x32x32", "--out", out}),
                 "leave them out");
  expect_refused(run_telar({"bench", "--checkpoint", run, "--model", "mnist_cnn", "--out", out}),
                 "not both");
  expect_refused(run_telar({"bench", "--checkpoint", run, "--accuracy", "--data",
                            "synthetic:256:1x28x28:20", "--out", out}),
                 "20 classes");
  EXPECT_FALSE(fs::exists(out));
}
