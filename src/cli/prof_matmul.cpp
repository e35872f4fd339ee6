// telar prof matmul: the seed's validation benchmark. n×n double products by the naive loop
// (sum = 0.0 accumulator) compiled at -O0 and -O3, and by BLAS dgemm; time and counts per size.
#include <fmt/format.h>

#include <iostream>

#include "cli/prof_options.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/log.hpp"
#include "core/parse.hpp"
#include "prof/derived_metrics.hpp"
#include "prof/html_report.hpp"
#include "prof/matmul/benchmark.hpp"
#include "prof/native_events.hpp"
#include "prof/table_writer.hpp"
#include "prof/writers.hpp"
#include "report/run_dir.hpp"
#include "report/svg_chart.hpp"

namespace telar::cli {

namespace {

// The seed's events_matmul.cfg, in perf/libpfm4 names (FP events only where libpfm4 can name them).
std::string default_matmul_events() {
  std::string events =
      "task-clock,cycles,instructions,branch-instructions,L1-dcache-loads,L1-dcache-stores";
  if (prof::native::available())
    events +=
        ",fp_arith_inst_retired.scalar_double,fp_arith_inst_retired.128b_packed_double,"
        "fp_arith_inst_retired.256b_packed_double,fp_arith_inst_retired.512b_packed_double";
  return events;
}

}  // namespace

int run_prof_matmul(const Args& args) {
  CLI::App app{
      "The seed's validation benchmark: n×n double matmul by a naive loop with a "
      "sum = 0.0 accumulator compiled at -O0 and at -O3, and by BLAS dgemm; time and "
      "counts per size. Where fp_arith events are counted, FP operations = 2n³.",
      "prof matmul"};
  ProfCountingCli cli;
  cli.events = default_matmul_events();
  std::string sizes_text = "32,64,128,256,512", variants_text = "naive-O0,naive-O3,blas";
  int repeat = 1;
  std::uint64_t seed = 1;
  add_prof_counting_options(app, cli, "events: comma-separated names or an events file");
  app.add_option("--sizes", sizes_text, "matrix sizes n, comma-separated (default 32,...,512)");
  app.add_option("--variants", variants_text, "naive-O0, naive-O3, blas (default: all built)");
  app.add_option("--repeat", repeat,
                 "products per size and variant; from 3 on, min and max are dropped from the mean")
      ->check(at_least(1));
  app.add_option("--seed", seed, "seed of the random matrices")->check(at_least(0));
  int code = 0;
  if (!parse(app, args, "prof matmul", &code)) return code;

  prof::matmul::Options m;
  m.sizes = parse_int_list(sizes_text, ',', "--sizes");
  m.variants = prof::matmul::parse_variants(variants_text);
  m.repeat = repeat;
  m.seed = seed;
  for (auto n : m.sizes)
    require(n >= 1 && n <= 16384, "--sizes: {} is out of range; use sizes from 1 to 16384", n);
  prof::SessionOptions options = prof_session_options(cli);
  options.scopes = prof::ScopeSet::parse("run,region");
  const auto dir = prof_output_dir(cli, "prof-matmul");

  prof::Session session(options);
  session.begin(prof::ScopeLabel::run());
  const auto points = prof::matmul::run(session, m, [](const prof::matmul::Point& p) {
    log::info("{:<9} n={:<5} {:>10.3f} ms  {:>7.3f} GFLOP/s", p.variant, p.n, p.seconds * 1e3,
              p.gflops);
  });
  session.end(prof::ScopeKind::Run);
  const prof::Profile profile = session.finish();

  const int task_clock = profile.find_canonical("task-clock");
  std::string table = fmt::format("{:<9} {:>6} {:>12} {:>14} {:>9} {:>16} {:>16} {:>7} {:>10}\n",
                                  "variant", "n", "ms/product", "task-clock ms", "GFLOP/s",
                                  "FP ops counted", "2n^3", "IPC", "rel.error");
  std::string csv = "variant,n,seconds,gflops,fp_ops_expected,fp_ops_counted,ipc,max_rel_error\n";
  nlohmann::json json_points = nlohmann::json::array();
  std::map<std::string, report::Series> time_series, gflops_series;
  for (const auto& p : points) {
    const auto& record = profile.records[static_cast<std::size_t>(p.record)];
    const auto totals = prof::totals_of(profile, record);
    // Counts cover all repetitions; per product they are divided by the repeat count.
    const double fp = prof::fp_operations(totals);
    const double fp_per_product = fp >= 0 ? fp / m.repeat : -1;
    double ipc = -1;
    for (const auto& metric : prof::derive_metrics(totals))
      if (metric.name == "ipc") ipc = metric.value;
    const std::string task_ms =
        task_clock >= 0 ? fmt::format("{:.3f}", static_cast<double>(profile.total(
                                                    record, static_cast<std::size_t>(task_clock))) *
                                                    1e-6 / m.repeat)
                        : "-";
    table += fmt::format(
        "{:<9} {:>6} {:>12.3f} {:>14} {:>9.3f} {:>16} {:>16} {:>7} {:>10.2e}\n", p.variant, p.n,
        p.seconds * 1e3, task_ms, p.gflops,
        fp >= 0 ? prof::group_digits(static_cast<std::int64_t>(fp_per_product)) : "-",
        prof::group_digits(static_cast<std::int64_t>(prof::matmul::expected_fp_ops(p.n))),
        ipc >= 0 ? fmt::format("{:.2f}", ipc) : "-", p.max_rel_error);
    csv += fmt::format("{},{},{},{},{},{},{},{}\n", p.variant, p.n, p.seconds, p.gflops,
                       prof::matmul::expected_fp_ops(p.n),
                       fp >= 0 ? fmt::format("{}", fp_per_product) : "",
                       ipc >= 0 ? fmt::format("{}", ipc) : "", p.max_rel_error);
    json_points.push_back(
        {{"variant", p.variant},
         {"n", p.n},
         {"seconds", p.seconds},
         {"gflops", p.gflops},
         {"fp_ops", fp >= 0 ? nlohmann::json(fp_per_product) : nlohmann::json(nullptr)},
         {"task_clock_ns", task_clock >= 0 ? nlohmann::json(profile.total(
                                                 record, static_cast<std::size_t>(task_clock)))
                                           : nlohmann::json(nullptr)}});
    auto& ts = time_series[p.variant];
    ts.name = p.variant;
    ts.x.push_back(static_cast<double>(p.n));
    ts.y.push_back(p.seconds * 1e3);
    auto& gs = gflops_series[p.variant];
    gs.name = p.variant;
    gs.x.push_back(static_cast<double>(p.n));
    gs.y.push_back(p.gflops);
  }
  std::cout << table;

  report::RunDirectory run(dir, cli.reuse());
  nlohmann::json config = prof_config_json(options);
  config["sizes"] = m.sizes;
  config["variants"] = m.variants;
  config["repeat"] = m.repeat;
  config["seed"] = m.seed;
  run.write_run_json("prof matmul", config);
  write_file_atomic(dir / "matmul.csv", csv);
  report::HtmlReport html("telar prof matmul");
  html.preformatted(table);
  std::vector<report::Series> times, rates;
  for (auto& [name, s] : time_series) times.push_back(s);
  for (auto& [name, s] : gflops_series) rates.push_back(s);
  html.svg(report::LineChart{"time per product", "n", "ms", times, true}.render());
  html.svg(report::LineChart{"GFLOP/s (2n³ per product)", "n", "GFLOP/s", rates, false}.render());
  prof::add_profile_sections(html, profile);
  write_file_atomic(dir / "counters.csv", prof::counters_csv(profile));
  write_file_atomic(dir / "metrics.csv", prof::metrics_csv(profile));
  html.write(dir / "report.html");
  if (!cli.colon.empty()) prof::append_colon_file(profile, cli.colon);
  log::info("wrote {}", dir.string());
  if (cli.json) print_json({{"points", json_points}, {"out", dir.string()}});
  return 0;
}

}  // namespace telar::cli
