// telar train --profile on this machine's software counters: nested scopes in one run, node
// scopes for the forward and backward of every node, children + gaps = parent exactly, and the
// epochs summing to the run.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "core/parse.hpp"
#include "graph/zoo/zoo.hpp"
#include "run_command.hpp"

using telar::testing::fresh_temp_dir;
using telar::testing::run_telar;

namespace {

struct Row {
  std::string scope, event;
  std::int64_t value = 0;
};

std::vector<Row> read_counters(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "scope,epoch,batch,node,cpu,event,value,time_enabled,time_running,wall_ns");
  std::vector<Row> rows;
  while (std::getline(in, line)) {
    auto f = telar::split(line, ',');
    if (f.size() != 10) continue;
    rows.push_back({f[0], f[5], telar::parse_int(f[6], "value")});
  }
  return rows;
}

std::string parent_of(const std::string& scope) {
  const auto slash = scope.rfind('/');
  return slash == std::string::npos ? "" : scope.substr(0, slash);
}

}  // namespace

TEST(TrainProfile, NestedScopesAddUpInOneRun) {
  const std::string out = fresh_temp_dir("profile") + "/run";
  auto r = run_telar({"train", "--model", "mnist_cnn", "--data", "synthetic:256:1x28x28:10",
                      "--epochs", "2", "--batch-size", "64", "--threads", "2", "--quiet",
                      "--profile", "task-clock,page-faults", "--profile-scopes",
                      "run,epoch,batch,eval,node", "--out", out});
  ASSERT_EQ(r.status, 0) << r.err;
  auto rows = read_counters(out + "/profile/counters.csv");
  ASSERT_FALSE(rows.empty());

  std::map<std::pair<std::string, std::string>, std::int64_t> value;
  for (const auto& row : rows) value[{row.scope, row.event}] = row.value;

  // Children (including the gap record) add up to their parent exactly, for every parent.
  std::map<std::pair<std::string, std::string>, std::int64_t> children_sum;
  for (const auto& row : rows)
    if (auto p = parent_of(row.scope); !p.empty()) children_sum[{p, row.event}] += row.value;
  int parents = 0;
  for (const auto& [key, sum] : children_sum) {
    ASSERT_TRUE(value.count(key)) << key.first;
    EXPECT_EQ(sum, value[key]) << key.first << " " << key.second;
    ++parents;
  }
  EXPECT_GT(parents, 10);

  // The epochs cover the whole run to within 1% of task-clock.
  const double run_clock = static_cast<double>(value[{"run", "task-clock"}]);
  const double epochs = static_cast<double>(value[{"run/epoch[0]", "task-clock"}] +
                                            value[{"run/epoch[1]", "task-clock"}]);
  EXPECT_GT(run_clock, 0);
  EXPECT_NEAR(epochs / run_clock, 1.0, 0.01);

  // Every node of the training graph has a forward and a backward scope in every batch.
  auto net = telar::graph::zoo::build("mnist_cnn");
  std::set<std::string> scopes;
  for (const auto& row : rows) scopes.insert(row.scope);
  for (const auto& node : net.nodes())
    for (const char* pass : {"fwd", "bwd"})
      EXPECT_TRUE(scopes.count("run/epoch[1]/batch[3]/node[" + node.name + "]." + pass))
          << node.name << "." << pass;
  // Evaluation nests in its epoch.
  EXPECT_TRUE(scopes.count("run/epoch[0]/eval"));
}

TEST(TrainProfile, UnknownEventIsOneLineError) {
  const std::string out = fresh_temp_dir("profile_bad") + "/run";
  auto r = run_telar({"train", "--model", "mlp:784-10", "--data", "synthetic:64:1x28x28:10",
                      "--profile", "task-clok", "--out", out});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("task-clock"), std::string::npos) << r.err;  // the suggestion
  EXPECT_FALSE(std::filesystem::exists(out));
}

// With thread workers the counters cover the whole process (every worker, its compute and
// collective threads), not only the worker whose hooks open the scopes. Worker 0 trains a
// quarter of each global batch: counting its threads alone would give about a quarter of the
// CPU time a lone worker takes on the same batches; counting every worker gives about all of
// it (CPU time, unlike wall time, does not depend on how loaded the machine is).
TEST(TrainProfile, WithThreadWorkersCountsEveryWorker) {
  const std::string dir = fresh_temp_dir("profile_workers");
  const std::vector<std::string> common = {"train", "--model", "mnist_cnn", "--data",
                                           "synthetic:1024:1x28x28:10", "--epochs", "1",
                                           "--batch-size", "128", "--quiet", "--profile",
                                           "task-clock", "--profile-scopes", "run,epoch,batch,eval"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = common;
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  auto solo = run_telar(with({"--backend", "cpu:threads=1", "--out", dir + "/solo"}));
  ASSERT_EQ(solo.status, 0) << solo.err;
  auto pair = run_telar(with({"--workers", "cpu:threads=1,cpu:threads=1", "--balance",
                              "weights:1/3", "--out", dir + "/pair"}));
  ASSERT_EQ(pair.status, 0) << pair.err;
  auto run_clock = [](const std::vector<Row>& rows) {
    for (const auto& row : rows)
      if (row.scope == "run" && row.event == "task-clock") return static_cast<double>(row.value);
    return 0.0;
  };
  const auto pair_rows = read_counters(dir + "/pair/profile/counters.csv");
  const double one = run_clock(read_counters(dir + "/solo/profile/counters.csv"));
  const double two = run_clock(pair_rows);
  ASSERT_GT(one, 0);
  EXPECT_GT(two, 0.7 * one) << "solo " << one << " ns, pair " << two << " ns";
  // The scopes are the group's steps: 8 global batches of 128.
  int batches = 0;
  for (const auto& row : pair_rows)
    batches += row.event == "task-clock" && row.scope.rfind("run/epoch[0]/batch[", 0) == 0;
  EXPECT_EQ(batches, 8);
}

TEST(TrainProfile, WithWorkersRefusesWhatItCannotCount) {
  const std::string dir = fresh_temp_dir("profile_workers_bad");
  for (const auto& [extra, words] :
       std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--workers", "cpu:threads=1,cpu:threads=1", "--profile-scopes", "run,node"},
            "--profile-scopes node"},
           {{"--workers", "mpi"}, "telar prof run"}}) {
    std::vector<std::string> args = {"train", "--model", "mlp:784-10", "--data",
                                     "synthetic:64:1x28x28:10", "--profile", "task-clock",
                                     "--out", dir + "/run"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = run_telar(args);
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_NE(r.err.find(words), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir + "/run"));
  }
}
