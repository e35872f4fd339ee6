// End-to-end tests of telar adapt (docs/adapt.md): a trained run adapted to half its MACs and
// to a measured latency budget writes a run directory whose checkpoint eval, bench and export
// take, with the test accuracy adapt reported; history.csv lists every candidate; bad input is
// refused before anything is written.
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_expect.hpp"
#include "run_command.hpp"

namespace fs = std::filesystem;
using telar::testing::expect_refused;
using telar::testing::fresh_temp_dir;
using telar::testing::last_json;
using telar::testing::run_telar;
using telar::testing::run_telar_and_signal;

namespace {

const std::string kData = "synthetic:1200:1x16x16:10";

// A CNN trained for one epoch on synthetic data: what the tests adapt.
const std::string& trained_run() {
  static const std::string run = [] {
    const std::string dir = fresh_temp_dir("adapt-src") + "/run";
    auto r = run_telar({"train", "--model", "mnist_cnn", "--data", kData, "--epochs", "1",
                        "--batch-size", "32", "--quiet", "--out", dir});
    EXPECT_EQ(r.status, 0) << r.err;
    return dir;
  }();
  return run;
}

TEST(AdaptCli, HalvesTheMacsAndWritesACheckpointEvalBenchAndExportTake) {
  const std::string out = fresh_temp_dir("adapt") + "/run";
  auto r = run_telar({"adapt", "--checkpoint", trained_run(), "--data", kData, "--resource", "macs",
                      "--budget", "0.5", "--delta", "0.1", "--short-term-iterations", "5",
                      "--batch-size", "32", "--out", out, "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = last_json(r.out);
  EXPECT_TRUE(j["budget_met"].get<bool>()) << j.dump();
  EXPECT_LE(j["adapted_resource"].get<double>(), 0.5 * j["original_resource"].get<double>());
  EXPECT_LT(j["adapted_parameters"].get<std::int64_t>(),
            j["original_parameters"].get<std::int64_t>());
  for (const char* f :
       {"run.json", "history.csv", "report.html", "checkpoint.telar", "adapted.onnx"})
    EXPECT_TRUE(fs::exists(fs::path(out) / f)) << f;
  // history.csv: a header and one row per candidate, one chosen per iteration.
  std::ifstream csv(fs::path(out) / "history.csv");
  std::string line;
  std::getline(csv, line);
  EXPECT_EQ(line.rfind("iteration,chosen_by,constraint,group,layers,channels_before", 0), 0u);
  int rows = 0, chosen = 0;
  while (std::getline(csv, line)) {
    ++rows;
    std::vector<std::string> fields;
    std::stringstream row(line);
    for (std::string f; std::getline(row, f, ',');) fields.push_back(f);
    ASSERT_GE(fields.size(), 16u) << line;
    chosen += fields[15] == "1";  // the column "chosen"
  }
  EXPECT_GT(rows, j["iterations"].get<int>());  // several candidates per iteration
  EXPECT_EQ(chosen, j["iterations"].get<int>());
  // The adapted checkpoint: eval gives adapt's test accuracy; bench and export take it.
  auto e = run_telar({"eval", "--checkpoint", out, "--data", kData, "--json"});
  ASSERT_EQ(e.status, 0) << e.err;
  EXPECT_DOUBLE_EQ(last_json(e.out)["accuracy"].get<double>(), j["test_accuracy"].get<double>());
  auto b = run_telar({"bench", "--checkpoint", out, "--duration", "0.05"});
  EXPECT_EQ(b.status, 0) << b.err;
  const std::string onnx = fresh_temp_dir("adapt-onnx") + "/adapted.onnx";
  auto x = run_telar({"export", "--checkpoint", out, "--out", onnx});
  EXPECT_EQ(x.status, 0) << x.err;
  for (const std::string& file : {onnx, out + "/adapted.onnx"}) {
    auto show = run_telar({"models", "show", file, "--json"});
    ASSERT_EQ(show.status, 0) << show.err;
    EXPECT_EQ(last_json(show.out)["parameters"], j["adapted_parameters"]) << file;
  }
  // simulate takes it alone (its model, input and channel counts from the run): the simulated
  // network computes what the CPU computes, with fewer cycles than the original's.
  const std::string tpu = std::string("sim:") + TELAR_SOURCE_DIR + "/configs/tpu_16_16_pes.cfg";
  const auto cycles = [&](const std::string& checkpoint) {
    auto s =
        run_telar({"simulate", "--checkpoint", checkpoint, "--backend", tpu, "--no-stonne-files",
                   "--out", fresh_temp_dir("adapt-sim") + "/run", "--json"});
    EXPECT_EQ(s.status, 0) << s.err;
    EXPECT_NE(s.out.find("outputs equal the cpu backend's"), std::string::npos) << s.out;
    return last_json(s.out)["cycles"].get<std::int64_t>();
  };
  EXPECT_LT(cycles(out), cycles(trained_run()));
}

TEST(AdaptCli, AMeasuredLatencyBudgetOnTheCpu) {
  const std::string out = fresh_temp_dir("adapt-latency") + "/run";
  auto r = run_telar({"adapt",       "--checkpoint",
                      trained_run(), "--data",
                      kData,         "--budget",
                      "0.7",         "--delta",
                      "0.2",         "--max-iterations",
                      "3",           "--short-term-iterations",
                      "2",           "--batch-size",
                      "32",          "--measure-seconds",
                      "0.05",        "--threads",
                      "1",           "--out",
                      out,           "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = last_json(r.out);
  EXPECT_EQ(j["resource"], "latency");
  EXPECT_EQ(j["unit"], "ms");
  EXPECT_GT(j["original_resource"].get<double>(), 0.0);
  EXPECT_GE(j["iterations"].get<int>(), 1);
  EXPECT_LT(j["adapted_parameters"].get<std::int64_t>(),
            j["original_parameters"].get<std::int64_t>());
}

// Two networks adapted from one run, for MACs and for this CPU's latency, each run on the CPU
// and on a simulated TPU-like mesh: the simulated cycles fall with the MACs, so the network
// adapted for MACs is faster there; sizes follow the parameter counts.
TEST(AdaptCli, CrossEvaluationOfNetworksAdaptedForDifferentTargets) {
  const std::string root = fresh_temp_dir("crosseval");
  const auto adapt = [&](const std::string& name, std::vector<std::string> extra) {
    std::vector<std::string> args = {"adapt",
                                     "--checkpoint",
                                     trained_run(),
                                     "--data",
                                     kData,
                                     "--budget",
                                     "0.6",
                                     "--delta",
                                     "0.2",
                                     "--max-iterations",
                                     "2",
                                     "--short-term-iterations",
                                     "2",
                                     "--batch-size",
                                     "32",
                                     "--out",
                                     root + "/" + name,
                                     "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = run_telar(args);
    EXPECT_EQ(r.status, 0) << r.err;
    return last_json(r.out);
  };
  const auto macs = adapt("macs", {"--resource", "macs"});
  adapt("cpu", {"--measure-seconds", "0.05"});
  const std::string runs = root + "/macs," + root + "/cpu";
  const std::string tpu = std::string("sim:") + TELAR_SOURCE_DIR + "/configs/tpu_16_16_pes.cfg";
  // int8 too where the CPU has the kernels (ranges from the random input: speed only).
  std::string targets = "cpu," + tpu + ",cpu:precision=int8";
  auto r = run_telar({"crosseval", "--runs", runs, "--targets", targets, "--duration", "0.1",
                      "--out", root + "/x", "--json"});
  if (r.status == 2 && r.err.find("VNNI") != std::string::npos) {
    targets = "cpu," + tpu;
    r = run_telar({"crosseval", "--runs", runs, "--targets", targets, "--duration", "0.1", "--out",
                   root + "/x", "--json"});
  }
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = last_json(r.out);
  ASSERT_EQ(j["cells"].size(), std::count(targets.begin(), targets.end(), ',') * 2u + 2u);
  int simulated = 0;
  for (const auto& cell : j["cells"]) {
    if (cell["target"] != "sim:tpu_16_16_pes" || cell["network"] != "adapted for macs") continue;
    ++simulated;
    EXPECT_GT(cell["latency_reduction_pct"].get<double>(), 0.0) << cell.dump();
  }
  EXPECT_EQ(simulated, 1);
  ASSERT_EQ(j["sizes"].size(), 2u);
  EXPECT_EQ(j["sizes"][0]["parameters"], macs["adapted_parameters"]);
  EXPECT_NEAR(j["sizes"][0]["size_reduction_pct"].get<double>(),
              100.0 * (1.0 - macs["adapted_parameters"].get<double>() /
                                 macs["original_parameters"].get<double>()),
              1.0);  // the buffers (BatchNorm statistics) count in the size too
  for (const char* f : {"run.json", "crosseval.csv", "report.html"})
    EXPECT_TRUE(fs::exists(fs::path(root) / "x" / f)) << f;
  expect_refused(run_telar({"crosseval", "--runs", trained_run()}), "not a network adapted");
  expect_refused(run_telar({"crosseval", "--runs", runs, "--targets", "tpu:0"}), "tpu");
  EXPECT_FALSE(fs::exists(fs::path(root) / "y"));
}

// A run stopped after 2 iterations and resumed ends where an uninterrupted run does: the same
// channels and the same test accuracy (MACs are exact; one thread keeps fine-tuning exact).
TEST(AdaptCli, AResumedRunEndsWhereAnUninterruptedOneDoes) {
  const std::string root = fresh_temp_dir("adapt-resume");
  const auto args = [&](const std::string& out, const std::string& iterations) {
    return std::vector<std::string>{
        "adapt",    "--checkpoint", trained_run(), "--data",    kData, "--resource",
        "macs",     "--budget",     "0.5",         "--delta",   "0.1", "--short-term-iterations",
        "8",        "--batch-size", "32",          "--threads", "1",   "--max-iterations",
        iterations, "--out",        out,           "--json"};
  };
  auto whole = run_telar(args(root + "/whole", "8"));
  ASSERT_EQ(whole.status, 0) << whole.err;
  auto part = run_telar(args(root + "/part", "2"));
  ASSERT_EQ(part.status, 0) << part.err;
  ASSERT_EQ(last_json(part.out)["iterations"], 2);
  expect_refused(run_telar({"adapt", "--resume", root + "/part"}), "has finished");
  expect_refused(run_telar({"adapt", "--resume", root + "/part", "--budget", "0.4"}),
                 "give only --resume");
  expect_refused(run_telar({"adapt", "--resume", trained_run()}), "adapt_state.json");
  expect_refused(run_telar({"adapt", "--resume", root + "/part", "--max-iterations", "2"}),
                 "larger than its 2");
  // The new --max-iterations replaces the saved one only, not the saved options of the same
  // value (--short-term-iterations 8).
  auto resumed =
      run_telar({"adapt", "--resume", root + "/part", "--max-iterations", "8", "--json"});
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  EXPECT_NE(resumed.out.find("resuming"), std::string::npos);
  const auto a = last_json(whole.out), b = last_json(resumed.out);
  EXPECT_GT(a["iterations"].get<int>(), 2);  // the resumed run had iterations left to do
  EXPECT_EQ(a["channels"], b["channels"]);
  EXPECT_EQ(a["iterations"], b["iterations"]);
  EXPECT_DOUBLE_EQ(a["test_accuracy"].get<double>(), b["test_accuracy"].get<double>());
  EXPECT_DOUBLE_EQ(a["adapted_resource"].get<double>(), b["adapted_resource"].get<double>());
}

// Issue 23, item 3, for adaptation: Ctrl-C stops it between candidates or at a fine-tune's next
// batch, run.json says "interrupted", the exit status is 130 and the message names --resume;
// resumed, the run ends where an uninterrupted one does.
TEST(AdaptCli, SigintStopsItAndTheResumedRunEndsWhereAnUninterruptedOneDoes) {
  const std::string root = fresh_temp_dir("adapt-sigint");
  const auto args = [&](const std::string& out) {
    return std::vector<std::string>{
        "adapt", "--checkpoint", trained_run(), "--data",    kData, "--resource",
        "macs",  "--budget",     "0.5",         "--delta",   "0.1", "--short-term-iterations",
        "40",    "--batch-size", "32",          "--threads", "1",   "--max-iterations",
        "4",     "--out",        out,           "--json"};
  };
  const std::string out = root + "/interrupted";
  // Once the first iteration is saved, and a little more: Ctrl-C.
  const int status = run_telar_and_signal(
      args(out),
      [&] {
        std::ifstream in(fs::path(out) / "adapt_state.json");
        const auto state = nlohmann::json::parse(in, nullptr, false);
        return state.is_object() && state.contains("iterations") && !state["iterations"].empty();
      },
      SIGINT, 300, 120.0);
  ASSERT_NE(status, -2) << "no iteration was saved";
  ASSERT_NE(status, -1) << "killed instead of stopping cleanly";
  if (status == 0) GTEST_SKIP() << "the adaptation finished before the signal arrived";
  ASSERT_EQ(status, 130);
  std::ifstream run_json(fs::path(out) / "run.json");
  const auto stopped = nlohmann::json::parse(run_json);
  EXPECT_EQ(stopped["status"], "interrupted");
  EXPECT_EQ(stopped["interrupted"]["signal"], "SIGINT");
  EXPECT_GE(stopped["interrupted"]["iterations_done"].get<int>(), 1);

  auto resumed = run_telar({"adapt", "--resume", out, "--json"});
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  auto whole = run_telar(args(root + "/whole"));
  ASSERT_EQ(whole.status, 0) << whole.err;
  const auto a = last_json(whole.out), b = last_json(resumed.out);
  EXPECT_EQ(a["channels"], b["channels"]);
  EXPECT_EQ(a["iterations"], b["iterations"]);
  EXPECT_DOUBLE_EQ(a["test_accuracy"].get<double>(), b["test_accuracy"].get<double>());
  fs::remove_all(root);
}

std::vector<std::string> lines_of(const fs::path& file) {
  std::ifstream in(file);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// telar lut: a table built for the trained CNN, a build killed part-way completed by running it
// again, its predictions checked against measurements; adaptations reading their latencies from
// a table (one of the simulator's); tables for another target, resource or model refused.
TEST(AdaptCli, ALatencyTableIsBuiltResumedCheckedAndAdaptedWith) {
  const std::string root = fresh_temp_dir("lut");
  const std::string lut = root + "/cnn.lut";
  const std::vector<std::string> build = {"lut",   "build", "--checkpoint",      trained_run(),
                                          "--out", lut,     "--measure-seconds", "0.005"};
  auto b = run_telar(build);
  ASSERT_EQ(b.status, 0) << b.err;
  const std::vector<std::string> whole = lines_of(lut);
  ASSERT_GT(whole.size(), 20u);
  // The last line: the fit to the whole model at four widths and 12 random channel counts,
  // each point its layers' sum, weights past the cache and measured latency.
  const auto last = nlohmann::json::parse(whole.back());
  EXPECT_TRUE(last.contains("rest_ms"));
  EXPECT_GT(last["scale"].get<double>(), 0.0);
  EXPECT_GE(last["memory_ms_per_mb"].get<double>(), 0.0);
  EXPECT_GE(last["cache_mb"].get<double>(), 0.0);
  ASSERT_EQ(last["calibration"].size(), 16u);
  for (const auto& point : last["calibration"]) {
    ASSERT_EQ(point.size(), 3u);
    EXPECT_GT(point[2].get<double>(), 0.0);
  }
  // Killed after 5 entries (and half a line): the next build measures only the rest.
  {
    std::ofstream cut(lut, std::ios::trunc);
    for (std::size_t i = 0; i < 6; ++i) cut << whole[i] << "\n";
    cut << whole[6].substr(0, whole[6].size() / 2);
  }
  b = run_telar(build);
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_EQ(lines_of(lut).size(), whole.size());
  auto c = run_telar({"lut", "check", "--checkpoint", trained_run(), "--lut", lut, "--variants",
                      "3", "--json", "--out", root + "/check"});
  ASSERT_EQ(c.status, 0) << c.err;
  const auto check = last_json(c.out);
  ASSERT_EQ(check["variants"].size(), 3u);
  EXPECT_GE(check["median_abs_error"].get<double>(), 0.0);
  // The original measured again at the end, and the drift between its two measurements.
  const double first = check["variants"][0]["measured_ms"].get<double>();
  const double again = check["original_again_ms"].get<double>();
  EXPECT_GT(again, 0.0);
  EXPECT_NEAR(check["drift"].get<double>(), (again - first) / first, 1e-9);
  EXPECT_NE(c.out.find("original again at the end"), std::string::npos);
  // ... and against the original's latency when the table was fitted (the first calibration
  // point of the resumed build's last line).
  const auto fitted = nlohmann::json::parse(lines_of(lut).back());
  EXPECT_DOUBLE_EQ(check["fitted_original_ms"].get<double>(),
                   fitted["calibration"][0][2].get<double>());
  EXPECT_NEAR(check["since_fit"].get<double>(),
              (first - fitted["calibration"][0][2].get<double>()) /
                  fitted["calibration"][0][2].get<double>(),
              1e-9);
  // --out: the variants as CSV (as printed), the report with its two charts, run.json.
  const std::vector<std::string> csv = lines_of(root + "/check/check.csv");
  ASSERT_EQ(csv.size(), 4u);
  EXPECT_EQ(csv[0], "variant,predicted_ms,measured_ms,error");
  EXPECT_EQ(csv[1].rfind("original,", 0), 0u);
  std::string html;
  for (const std::string& line : lines_of(root + "/check/report.html")) html += line + "\n";
  std::size_t charts = 0;
  for (auto at = html.find("<svg"); at != std::string::npos; at = html.find("<svg", at + 1))
    ++charts;
  EXPECT_EQ(charts, 2u);
  EXPECT_NE(html.find("within ±10%"), std::string::npos);
  EXPECT_TRUE(fs::exists(root + "/check/run.json"));
  // A second check into the same directory is refused (one line, exit 2) without --overwrite.
  expect_refused(run_telar({"lut", "check", "--checkpoint", trained_run(), "--lut", lut,
                            "--variants", "1", "--out", root + "/check"}),
                 "--overwrite");
  // The adaptations read a table of the simulator, whose latencies are exact: one measured on
  // this CPU while other work shares it can hold no candidate below the constraint (seen once
  // beside a compile), and what these runs test is that the loop reads the table.
  const std::string tpu = std::string("sim:") + TELAR_SOURCE_DIR + "/configs/tpu_16_16_pes.cfg";
  const std::string sim_lut = root + "/cnn-tpu.lut";
  b = run_telar({"lut", "build", "--checkpoint", trained_run(), "--target", tpu, "--out", sim_lut});
  ASSERT_EQ(b.status, 0) << b.err;
  auto a = run_telar({"adapt",
                      "--checkpoint",
                      trained_run(),
                      "--data",
                      kData,
                      "--target",
                      tpu,
                      "--lut",
                      sim_lut,
                      "--budget",
                      "0.8",
                      "--delta",
                      "0.2",
                      "--max-iterations",
                      "2",
                      "--short-term-iterations",
                      "2",
                      "--batch-size",
                      "32",
                      "--out",
                      root + "/adapted",
                      "--json"});
  ASSERT_EQ(a.status, 0) << a.err;
  const auto j = last_json(a.out);
  EXPECT_EQ(j["unit"], "ms");
  EXPECT_LT(j["adapted_resource"].get<double>(), j["original_resource"].get<double>());
  // The original algorithm: linear search, every candidate fine-tuned, RBF refitted per miss.
  auto ref = run_telar({"adapt",
                        "--checkpoint",
                        trained_run(),
                        "--data",
                        kData,
                        "--target",
                        tpu,
                        "--lut",
                        sim_lut,
                        "--reference",
                        "--budget",
                        "0.8",
                        "--delta",
                        "0.2",
                        "--max-iterations",
                        "1",
                        "--short-term-iterations",
                        "2",
                        "--batch-size",
                        "32",
                        "--out",
                        root + "/reference",
                        "--json"});
  ASSERT_EQ(ref.status, 0) << ref.err;
  EXPECT_LT(last_json(ref.out)["adapted_resource"].get<double>(),
            last_json(ref.out)["original_resource"].get<double>());
  expect_refused(run_telar({"adapt", "--checkpoint", trained_run(), "--data", kData, "--lut", lut,
                            "--reference", "--search", "bisection", "--out", root + "/no"}),
                 "--reference sets --search");
  expect_refused(run_telar({"adapt", "--checkpoint", trained_run(), "--data", kData, "--lut", lut,
                            "--target", tpu, "--out", root + "/no"}),
                 "built on cpu");
  expect_refused(run_telar({"adapt", "--checkpoint", trained_run(), "--data", kData, "--lut", lut,
                            "--resource", "macs", "--out", root + "/no"}),
                 "--lut gives latencies");
  expect_refused(run_telar({"lut", "build", "--model", "mobilenet_v1:0.5", "--input", "1x32x32",
                            "--out", lut}),
                 "holds the table of mnist_cnn");
  // The same model's name at another input size is another model: its table is not continued.
  expect_refused(
      run_telar({"lut", "build", "--model", "mnist_cnn", "--input", "1x20x20", "--out", lut}),
      "holds the table of another mnist_cnn");
  // --refit makes a finished table's fit again: none there, nothing to refit; a target that
  // cannot run the layers leaves no file begun.
  expect_refused(
      run_telar({"lut", "build", "--model", "mnist_cnn", "--refit", "--out", root + "/none.lut"}),
      "build it without --refit");
  expect_refused(run_telar({"lut", "build", "--model", "mnist_cnn", "--target", "cpu:ref",
                            "--precision", "int8", "--out", root + "/none.lut"}),
                 "cpu:ref");
  EXPECT_FALSE(fs::exists(root + "/none.lut"));
  // A table of another model, or of the same model at another input size (the fingerprint: each
  // layer's shape apart from its channel counts), is refused by check and adapt alike.
  expect_refused(run_telar({"lut", "check", "--model", "mobilenet_v1:0.5", "--input", "1x32x32",
                            "--lut", lut}),
                 "was built for mnist_cnn, not mobilenet_v1");
  expect_refused(run_telar({"lut", "check", "--model", "mnist_cnn", "--input", "1x20x20", "--lut",
                            lut, "--out", root + "/no"}),
                 "built for another mnist_cnn");
  expect_refused(run_telar({"adapt", "--model", "mnist_cnn", "--input", "1x20x20", "--data",
                            "synthetic:1200:1x20x20:10", "--lut", lut, "--out", root + "/no"}),
                 "built for another mnist_cnn");
  // --refit: the finished table keeps its entries and gets its fit made again (rewritten).
  const std::vector<std::string> before = lines_of(lut);
  const auto written = fs::last_write_time(lut);
  std::vector<std::string> refit = build;
  refit.push_back("--refit");
  b = run_telar(refit);
  ASSERT_EQ(b.status, 0) << b.err;
  const std::vector<std::string> after = lines_of(lut);
  ASSERT_EQ(after.size(), before.size());
  for (std::size_t i = 0; i + 1 < after.size(); ++i) EXPECT_EQ(after[i], before[i]) << i;
  EXPECT_EQ(nlohmann::json::parse(after.back())["calibration"].size(), 16u);
  EXPECT_GT(fs::last_write_time(lut), written);
  EXPECT_FALSE(fs::exists(root + "/no"));
}

// An adapted run records the data it was fine-tuned on (here: given to adapt, not to a training
// run), so that eval of its checkpoint reads that data without being told.
TEST(AdaptCli, AnAdaptedRunRecordsTheDataItWasTunedOn) {
  const std::string out = fresh_temp_dir("adapt-data") + "/run";
  auto a = run_telar({"adapt", "--model", "mnist_cnn", "--input", "1x16x16", "--data", kData,
                      "--resource", "macs", "--budget", "0.7", "--delta", "0.2",
                      "--short-term-iterations", "2", "--max-iterations", "1", "--out", out});
  ASSERT_EQ(a.status, 0) << a.err;
  auto own = run_telar({"eval", "--checkpoint", out, "--json"});
  auto told = run_telar({"eval", "--checkpoint", out, "--data", kData, "--json"});
  ASSERT_EQ(own.status, 0) << own.err;
  ASSERT_EQ(told.status, 0) << told.err;
  EXPECT_EQ(last_json(own.out)["samples"], last_json(told.out)["samples"]);
  EXPECT_EQ(last_json(own.out)["accuracy"], last_json(told.out)["accuracy"]);
  EXPECT_NE(own.out.find("synthetic/test"), std::string::npos) << own.out;
}

TEST(AdaptCli, BadInputIsOneLineAndWritesNothing) {
  const std::string out = fresh_temp_dir("adapt-bad") + "/run";
  const std::vector<std::string> base = {
      "adapt", "--checkpoint", trained_run(), "--data", kData, "--out", out};
  const auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return run_telar(args);
  };
  expect_refused(with({"--budget", "0"}), "--budget");
  expect_refused(with({"--budget", "1"}), "--budget");
  expect_refused(with({"--delta", "0"}), "--delta");
  expect_refused(with({"--resource", "energy"}), "latency, macs or params");
  expect_refused(with({"--search", "binary"}), "linear or bisection");
  expect_refused(with({"--parallel", "0"}), "--parallel 0");
  expect_refused(with({"--target", "tpu:0"}), "tpu");
  // What the target itself refuses, found by compiling the model there before the run starts.
  expect_refused(with({"--target", "sim:no-such.cfg"}), "no-such.cfg");
  expect_refused(
      with({"--target", std::string("sim:") + TELAR_SOURCE_DIR + "/configs/tpu_16_16_pes.cfg",
            "--precision", "bf16"}),
      "run bf16 on cpu");
  expect_refused(with({"--target", "cpu:ref", "--precision", "int8"}), "not cpu:ref");
  expect_refused(run_telar({"adapt", "--model", "mlp:256-10", "--data", kData, "--resource", "macs",
                            "--out", out}),
                 "no channel group that can be pruned");
  expect_refused(run_telar({"adapt", "--data", kData, "--out", out}), "--checkpoint");
  // Options that only a measured latency or a table reads, with MACs or without a table.
  expect_refused(with({"--resource", "macs", "--target", "cpu"}), "for --resource latency");
  expect_refused(with({"--lut-interpolation", "rbf"}), "give --lut");
  // Groups of at most --round-to channels cannot be cut to a multiple of it.
  expect_refused(run_telar({"adapt", "--model", "mlp:256-8-10", "--data", kData, "--resource",
                            "macs", "--out", out}),
                 "at most 8 channels");
  expect_refused(with({"--resource", "macs", "--round-to", "4096"}), "nothing to prune");
  expect_refused(with({"--validation", "abc"}), "neither a fraction");
  expect_refused(run_telar({"adapt", "--checkpoint", fs::path(out).parent_path().string(), "--data",
                            kData, "--out", out}),
                 "not a run");
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
