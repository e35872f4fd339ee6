#include "cli/sim_sweep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "cli/common.hpp"
#include "core/clock.hpp"
#include "core/csv.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/progress.hpp"
#include "core/threads.hpp"
#include "sim/accelerator.hpp"
#include "sim/config.hpp"
#include "sim/stonne_command.hpp"

namespace telar::cli {

namespace fs = std::filesystem;

namespace {

struct Case {
  std::string source;  // "cases.txt:12" or "T_K=4 num_ms=64"
  SimRequest request;
};

struct CaseResult {
  bool ran = false;
  SimOutcome outcome;
  std::string error;  // telar::Error's message, when the case could not run
  double seconds = 0.0;
};

// The command line's options as a case's arguments: each line starts from them.
Args base_options(const SimRequest& b) {
  Args a;
  auto add = [&](const char* flag, const std::string& value) {
    if (!value.empty()) a.push_back(std::string(flag) + "=" + value);
  };
  add("--config", b.config_path);
  add("--tile", b.tile_arg);
  add("--energy-table", b.energy_path);
  add("--mk", b.mk_path);
  add("--kn", b.kn_path);
  a.push_back("--seed=" + std::to_string(b.seed));
  if (b.exact) a.push_back("--exact-cycle-loop");
  return a;
}

// A case's line: words separated by blanks, `#` to the end of the line a comment; a leading
// program name (`stonne`, `./stonne`, `telar sim`) is skipped, so STONNE's scripts' lines can
// be pasted as they are.
std::vector<std::string> line_words(const std::string& line) {
  std::istringstream in(line.substr(0, line.find('#')));
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  if (words.size() >= 2 && words[0] == "telar" && words[1] == "sim")
    words.erase(words.begin(), words.begin() + 2);
  else if (!words.empty() && words[0][0] != '-')
    words.erase(words.begin());
  return words;
}

std::vector<Case> cases_from_file(const SimRequest& base, const std::string& path) {
  require(base.stonne.empty(),
          "--cases {}: the operations are on the file's lines; drop the STONNE flags from the "
          "command line (or use --sweep to vary one command)",
          path);
  const std::string text = read_file(path);
  std::vector<Case> cases;
  std::istringstream in(text);
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    const std::vector<std::string> words = line_words(line);
    if (words.empty()) continue;
    const std::string where = fmt::format("{}:{}", path, number);
    Args args = base_options(base);
    args.insert(args.end(), words.begin(), words.end());
    try {
      SimRequest r = parse_sim_request(args);
      require(!r.stonne.empty(), "no STONNE operation on this line");
      cases.push_back({where, std::move(r)});
    } catch (const Error& e) {
      fail("{}: {}", where, e.what());
    }
  }
  require(!cases.empty(),
          "--cases {}: no command lines in it (blank lines and # comments are "
          "skipped)",
          path);
  return cases;
}

// --sweep NAME=V1,V2,...: the STONNE flag -NAME (the dash optional) over the values given.
struct Sweep {
  std::string flag;
  std::vector<std::string> values;
};

Sweep parse_sweep(const std::string& text) {
  const auto eq = text.find('=');
  require(eq != std::string::npos && eq > 0 && eq + 1 < text.size(),
          "--sweep {}: give a STONNE flag and its values, e.g. --sweep T_K=1,2,4,8", text);
  Sweep s;
  s.flag = text.substr(0, eq);
  if (s.flag[0] != '-') s.flag = "-" + s.flag;
  std::istringstream in(text.substr(eq + 1));
  for (std::string v; std::getline(in, v, ',');) {
    require(!v.empty(), "--sweep {}: an empty value", text);
    s.values.push_back(v);
  }
  return s;
}

std::vector<Case> expand_sweeps(const std::vector<Case>& cases, const std::vector<Sweep>& sweeps) {
  std::vector<Case> out = cases;
  for (const Sweep& s : sweeps) {
    std::vector<Case> next;
    for (const Case& c : out)
      for (const std::string& v : s.values) {
        Case k = c;
        auto& flags = k.request.stonne;
        // The swept flag replaces the command's own.
        flags.erase(std::remove_if(flags.begin(), flags.end(),
                                   [&](const std::string& f) {
                                     return f == s.flag || f.rfind(s.flag + "=", 0) == 0;
                                   }),
                    flags.end());
        flags.push_back(s.flag + "=" + v);
        const std::string setting = s.flag.substr(1) + "=" + v;
        k.source = k.source.empty() ? setting : k.source + " " + setting;
        next.push_back(std::move(k));
      }
    out = std::move(next);
  }
  return out;
}

// Everything that can be wrong with a case's input, found before any case runs: its flags, its
// hardware (the .cfg file read once per path), a dense tile given (the mapper's are chosen when
// the case runs).
void check_case(const SimRequest& r, std::map<std::string, sim::HardwareConfig>& configs) {
  const sim::StonneCommand cmd = r.command();
  sim::HardwareConfig hw = cmd.hw;
  if (!r.config_path.empty()) {
    auto it = configs.find(r.config_path);
    if (it == configs.end())
      it = configs.emplace(r.config_path, sim::load_config(r.config_path)).first;
    hw = sim::merge_hardware(it->second, cmd);
  }
  sim::validate(hw);
  const bool mapped = r.tile_arg.rfind("auto", 0) == 0 || cmd.generate_tile;
  if (cmd.kind == sim::CommandKind::Dense && !mapped)
    sim::choose_dense_tile(sim::Accelerator(hw), cmd, r.tile_arg);
}

void check_cases(const std::vector<Case>& cases) {
  std::map<std::string, sim::HardwareConfig> configs;
  for (const Case& c : cases) {
    try {
      check_case(c.request, configs);
    } catch (const Error& e) {
      fail("{}: {}", c.source.empty() ? "the command" : c.source, e.what());
    }
  }
}

std::string case_name(std::size_t index, std::size_t count) {
  const int width = std::max(4, static_cast<int>(std::to_string(count).size()));
  return fmt::format("case-{:0{}}", index + 1, width);
}

std::string summary_csv(const std::vector<Case>& cases, const std::vector<CaseResult>& results) {
  std::string csv =
      "case,source,command,hardware,tile,cycles,gb_reads,gb_writes,utilization,energy,output,"
      "seconds,stats_file,error\n";
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const CaseResult& r = results[i];
    std::string command;
    for (const std::string& f : cases[i].request.stonne)
      command += (command.empty() ? "" : " ") + f;
    if (!r.ran) {
      csv += fmt::format("{},{},{},,,,,,,,error,{:.6f},,{}\n", i + 1, csv_field(cases[i].source),
                         csv_field(command), r.seconds, csv_field(r.error));
      continue;
    }
    const sim::OperationRecord& rec = r.outcome.record;
    const sim::Stats& st = rec.result.stats;
    csv += fmt::format("{},{},{},{},{},{},{},{},{:.6f},{:.9g},{},{:.6f},{},{}\n", i + 1,
                       csv_field(cases[i].source), csv_field(command), csv_field(rec.hw.name),
                       csv_field(r.outcome.tile), st.cycles, st.gb.reads(), st.gb.writes(),
                       st.utilization(), rec.energy.total(),
                       r.outcome.status == 0 ? "correct" : "wrong", r.seconds,
                       r.outcome.wrote ? csv_field(r.outcome.files.stats.string()) : "",
                       csv_field(r.outcome.problem));
  }
  return csv;
}

}  // namespace

int run_sim_sweep(const SimRequest& base, const SweepFlags& flags) {
  std::vector<Sweep> sweeps;
  for (const std::string& s : flags.sweeps) sweeps.push_back(parse_sweep(s));
  std::vector<Case> cases;
  if (!flags.cases_path.empty()) {
    cases = cases_from_file(base, flags.cases_path);
  } else {
    require(!base.stonne.empty(),
            "--sweep varies a command: give its STONNE flags too, e.g. telar sim -DenseGEMM "
            "-M=64 -N=64 -K=64 -num_ms=64 --sweep T_K=1,2,4,8 --out DIR");
    cases.push_back({"", base});
  }
  cases = expand_sweeps(cases, sweeps);
  check_cases(cases);

  const char* env = std::getenv("OUTPUT_DIR");
  const fs::path out_dir = !base.out_dir.empty() ? fs::path(base.out_dir)
                           : env && *env         ? fs::path(env)
                                                 : fs::path();
  require(!out_dir.empty(),
          "a sweep writes a directory per case and summary.csv: give --out DIR (or OUTPUT_DIR)");
  require(!fs::exists(out_dir / "summary.csv"),
          "{} already holds a sweep (summary.csv); choose another --out", out_dir.string());
  const sim::EnergyTable table = energy_table(base.energy_path);
  const OutputDirectory out(out_dir, true, base.out_dir.empty() ? "OUTPUT_DIR" : "--out");

  const int jobs = std::max(1, std::min(flags.jobs > 0 ? flags.jobs : hardware_threads(),
                                        static_cast<int>(cases.size())));
  std::vector<CaseResult> results(cases.size());
  std::atomic<std::size_t> next{0};
  std::atomic<std::int64_t> done{0};
  std::mutex progress_mutex;
  ProgressBar bar(fmt::format("telar sim: {} cases on {} threads", cases.size(), jobs),
                  static_cast<std::int64_t>(cases.size()));
  Stopwatch clock;
  auto work = [&] {
    for (std::size_t i = next++; i < cases.size(); i = next++) {
      Stopwatch sw;
      CaseResult& r = results[i];
      try {
        const fs::path dir = out.path() / case_name(i, cases.size());
        fs::create_directories(dir);
        r.outcome = simulate_request(cases[i].request, dir, table);
        r.ran = true;
      } catch (const std::exception& e) {
        r.error = e.what();
      }
      r.seconds = sw.seconds();
      const std::int64_t finished = ++done;
      std::lock_guard lock(progress_mutex);
      bar.update(finished);
    }
  };
  std::vector<std::thread> threads;
  for (int t = 1; t < jobs; ++t) threads.emplace_back(work);
  work();
  for (auto& t : threads) t.join();
  const double seconds = clock.seconds();
  bar.finish();

  write_file_atomic(out.path() / "summary.csv", summary_csv(cases, results));
  std::size_t errors = 0, wrong = 0;
  std::uint64_t cycles = 0;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const CaseResult& r = results[i];
    if (!r.ran) {
      if (errors++ == 0) std::cerr << fmt::format("telar sim: {}: {}\n", cases[i].source, r.error);
      continue;
    }
    if (r.outcome.status != 0 && wrong++ == 0)
      std::cerr << fmt::format("telar sim: {}: {}\n", cases[i].source, r.outcome.problem);
    cycles += r.outcome.record.result.stats.cycles;
  }
  std::cout << fmt::format(
      "telar sim: {} cases in {:.2f} s on {} threads ({:.0f} cases/s), {} simulated cycles in "
      "all; {} failed, {} with a wrong result; summary in {}\n",
      cases.size(), seconds, jobs, static_cast<double>(cases.size()) / std::max(seconds, 1e-9),
      cycles, errors, wrong, (out.path() / "summary.csv").string());
  if (base.json)
    print_json({{"cases", cases.size()},
                {"seconds", seconds},
                {"jobs", jobs},
                {"failed", errors},
                {"wrong", wrong},
                {"cycles", cycles},
                {"summary", (out.path() / "summary.csv").string()}});
  return errors + wrong > 0 ? 1 : 0;
}

}  // namespace telar::cli
