// telar train --profile on this machine's software counters: nested scopes in one run, node
// scopes for the forward and backward of every node, children + gaps = parent exactly, and the
// epochs summing to the run.
#include <gtest/gtest.h>

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
