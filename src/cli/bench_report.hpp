#pragma once
// What `telar bench` measured, as it prints, saves (CSV) and draws (report.html).
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "backend/measure.hpp"
#include "core/statistics.hpp"

namespace telar::cli {

// One target at one precision and batch size.
struct BenchPoint {
  std::string target;              // as given, e.g. "cpu", "sim:configs/x.cfg"
  std::string precision = "fp32";  // backend::precision_name
  std::int64_t batch = 1;
  // Each timed run (one simulated figure for sim targets), the thread choice's probes marked.
  backend::TimedRuns runs;
  SampleSummary latency;           // of the runs that were not probes
  double samples_per_s = 0.0;      // batch / median latency
  bool simulated = false;          // sim: cycles at --clock-ghz, not wall time
  std::uint64_t cycles = 0;        // sim: the simulated nodes' cycles
  int host_nodes = 0;              // sim: nodes the simulator left to the host (not in the time)
  std::optional<double> accuracy;  // --accuracy: the target's at this precision, on the test set
  // The bytes the target's plan for this batch held (Executable::planned_bytes), where it tells.
  std::optional<std::int64_t> planned_bytes;
  // --layers: each node's time (backend::node_times), over `layer_runs` runs; empty without.
  std::vector<backend::NodeTime> layers;
  int layer_runs = 0;
};

// The time of a point's nodes, summed (--layers; 0 without).
double layers_ms(const BenchPoint& point);
// The time of a point's nodes summed by op kind, largest first.
std::vector<std::pair<std::string, double>> time_by_op(const BenchPoint& point);
// A point's `count` nodes that take longest, longest first.
std::vector<backend::NodeTime> longest_nodes(const BenchPoint& point, std::size_t count);

// "cpu", or "cpu bf16" for another precision than fp32: how a point's target is labelled.
std::string bench_label(const BenchPoint& point);
// One row per point: target, precision, batch, the latency summary (ms), samples/s, the
// planned bytes and the probes left out of the summary.
std::string bench_summary_csv(const std::vector<BenchPoint>& points);
// One row per timed run: target, precision, batch, iteration, latency_ms, probe (1: a run on
// the threads the CPU's thread choice did not choose, left out of the summary).
std::string bench_latency_csv(const std::vector<BenchPoint>& points);
// One row per node of each point with --layers: target, precision, batch, node, op, detail, ms,
// share (of the nodes' sum).
std::string bench_layers_csv(const std::vector<BenchPoint>& points);
nlohmann::json bench_point_json(const BenchPoint& point);
// report.html: the summary table, latency and throughput against the batch size (one line per
// target), each point's runs in order (where noise shows), with --layers where the time goes
// (by op, and the longest nodes), and the environment.
void write_bench_report(const std::filesystem::path& path, const std::string& title,
                        const std::vector<BenchPoint>& points, const nlohmann::json& environment);

}  // namespace telar::cli
