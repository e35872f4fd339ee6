#include "cli/sim_request.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "core/error.hpp"
#include "core/parse.hpp"
#include "sim/accelerator.hpp"
#include "sim/stonne_command.hpp"

namespace telar::cli {

namespace fs = std::filesystem;

namespace {

bool is_operation_flag(const std::string& a) {
  return a == "-CONV" || a == "-FC" || a == "-DenseGEMM" || a == "-SparseGEMM" ||
         a == "-SparseDense";
}

// The command's hardware, over a .cfg file's where --config is given.
sim::HardwareConfig hardware_of(const sim::StonneCommand& cmd, const std::string& config_path) {
  return config_path.empty() ? cmd.hw : sim::merge_hardware(sim::load_config(config_path), cmd);
}

// Writes the stats files if the command asks for them; returns the figures every summary line
// shows.
std::string write_and_describe(SimOutcome& o, const sim::StonneCommand& cmd, const fs::path& dir) {
  if (cmd.print_stats) {
    o.files = sim::write_operation_files(dir, o.record);
    o.wrote = true;
  }
  const sim::Stats& st = o.record.result.stats;
  return fmt::format("{} cycles, GB reads {}, writes {}, utilization {:.1f}%, energy {:.6g}",
                     st.cycles, st.gb.reads(), st.gb.writes(), 100.0 * st.utilization(),
                     o.record.energy.total());
}

SimOutcome simulate_sparse(const SimRequest& r, const sim::StonneCommand& cmd, const fs::path& dir,
                           const sim::EnergyTable& table) {
  const sim::HardwareConfig hw = hardware_of(cmd, r.config_path);
  const sim::Accelerator accelerator(hw);
  const bool magma = cmd.kind == sim::CommandKind::SparseDense;
  std::optional<std::string> auto_objective = cmd.generate_tile;
  if (!r.tile_arg.empty()) {
    require(magma, "--tile applies to -SparseDense (SIGMA needs no tile)");
    require(r.tile_arg == "auto" || r.tile_arg.rfind("auto:", 0) == 0,
            "-SparseDense takes its tile as -T_N and -T_K, or --tile auto[:objective]");
    require(!cmd.tile_given, "give the tile either as -T_N/-T_K or with --tile auto, not both");
    auto_objective = r.tile_arg == "auto" ? "performance" : r.tile_arg.substr(5);
  }
  SimOutcome o;
  o.record = sim::simulate_sparse_command(accelerator, cmd, {r.mk_path, r.kn_path, r.seed},
                                          auto_objective, r.exact, table);
  o.tile = magma ? sim::describe(o.record.sparse->tile) : std::string();
  const sim::OpResult& res = o.record.result;
  const std::string figures = write_and_describe(o, cmd, dir);
  o.summary =
      fmt::format("telar sim: {}{} on {} ({}): {}; {} configuration(s); output {}{}",
                  sim::describe(*o.record.sparse), magma ? " [" + o.tile + "]" : std::string(),
                  hw.name, sim::describe(hw), figures, res.reconfigurations,
                  res.output_checked ? (res.output_correct ? "matches the reference product"
                                                           : "DIFFERS from the reference product")
                                     : "not checked",
                  o.wrote ? fmt::format("; wrote {}", o.files.counters.string()) : "");
  if (res.output_checked && !res.output_correct) {
    o.status = 1;
    o.problem = fmt::format(
        "internal error: the simulated output differs from the reference product (max abs "
        "error {}); please report this with the command line",
        res.max_abs_error);
  }
  return o;
}

SimOutcome simulate_dense(const SimRequest& r, const sim::StonneCommand& cmd, const fs::path& dir,
                          const sim::EnergyTable& table) {
  require(r.mk_path.empty() && r.kn_path.empty(),
          "--mk and --kn give the operands of -SparseGEMM and -SparseDense");
  const sim::HardwareConfig hw = hardware_of(cmd, r.config_path);
  const sim::Accelerator accelerator(hw);
  const sim::DenseTileChoice choice = sim::choose_dense_tile(accelerator, cmd, r.tile_arg);
  SimOutcome o;
  o.record = sim::simulate_dense_command(accelerator, cmd, choice, r.exact, r.seed, table);
  o.tile = sim::describe(choice.tile, cmd.op.kind);
  const sim::OpResult& res = o.record.result;
  const std::string figures = write_and_describe(o, cmd, dir);
  o.summary = fmt::format(
      "telar sim: {} [{}] on {} ({}): {}; output {} ({} of {} values through the fabric){}",
      sim::describe(cmd.op), o.tile, hw.name, sim::describe(hw), figures,
      res.output_correct ? "matches the reference kernel" : "DIFFERS from the reference kernel",
      res.outputs_from_fabric, res.output.size(),
      o.wrote ? fmt::format("; wrote {}", o.files.counters.string()) : "");
  if (!res.output_correct) {
    o.status = 1;
    const std::string why = sim::wrong_result_reason(hw, cmd.op, choice.tile);
    o.problem = why.empty() ? fmt::format(
                                  "internal error: the simulated output differs from the "
                                  "reference kernel (max abs error {}); please report this with "
                                  "the command line",
                                  res.max_abs_error)
                            : fmt::format(
                                  "the simulated accelerator computes a wrong result with this "
                                  "tile, as STONNE does (its own output check fails on it): {}; "
                                  "the cycles and counts are STONNE's",
                                  why);
  }
  return o;
}

}  // namespace

sim::StonneCommand SimRequest::command() const {
  std::vector<std::string> flags = stonne;
  // The operation flag may come after hardware flags; STONNE wants it first.
  const auto op = std::find_if(flags.begin(), flags.end(), is_operation_flag);
  if (op != flags.end()) std::rotate(flags.begin(), op, op + 1);
  return sim::parse_stonne_args(flags);
}

SimRequest parse_sim_request(const Args& args, SweepFlags* sweep) {
  SimRequest r;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](const std::string& flag) {
      if (a.size() > flag.size() && a[flag.size()] == '=') return a.substr(flag.size() + 1);
      require(i + 1 < args.size(), "{} needs a value; see `telar sim --help`", flag);
      return args[++i];
    };
    auto is = [&](const std::string& flag) { return a == flag || (a.rfind(flag + "=", 0) == 0); };
    if (a == "--json") {
      r.json = true;
    } else if (a == "--exact-cycle-loop") {
      r.exact = true;
    } else if (is("--config")) {
      r.config_path = value("--config");
    } else if (is("--tile")) {
      r.tile_arg = value("--tile");
    } else if (is("--out")) {
      r.out_dir = value("--out");
    } else if (is("--energy-table")) {
      r.energy_path = value("--energy-table");
    } else if (is("--mk")) {
      r.mk_path = value("--mk");
    } else if (is("--kn")) {
      r.kn_path = value("--kn");
    } else if (is("--seed")) {
      const long long s = parse_int(value("--seed"), "--seed");
      require(s >= 0, "--seed must be non-negative");
      r.seed = static_cast<std::uint64_t>(s);
    } else if (sweep && is("--cases")) {
      sweep->cases_path = value("--cases");
    } else if (sweep && is("--sweep")) {
      sweep->sweeps.push_back(value("--sweep"));
    } else if (sweep && is("--jobs")) {
      const long long n = parse_int(value("--jobs"), "--jobs");
      require(n >= 0, "--jobs must be 0 (every core) or a number of threads, got {}", n);
      sweep->jobs = static_cast<int>(std::min<long long>(n, 1024));
    } else if (!sweep && (is("--cases") || is("--sweep") || is("--jobs"))) {
      fail("{} belongs on telar sim's own command line, not on a case's line", a);
    } else if (a.rfind("--", 0) == 0) {
      const std::string near = closest_match(
          a, {"--config", "--tile", "--out", "--json", "--exact-cycle-loop", "--seed",
              "--energy-table", "--mk", "--kn", "--cases", "--sweep", "--jobs", "--help"});
      fail("unknown option '{}'{}; see `telar sim --help`", a,
           near.empty() ? "" : fmt::format(" (did you mean {}?)", near));
    } else {
      r.stonne.push_back(a);
    }
  }
  return r;
}

nlohmann::json SimOutcome::json() const {
  const sim::Stats& st = record.result.stats;
  nlohmann::json j = {{"cycles", st.cycles},
                      {"gb_reads", st.gb.reads()},
                      {"gb_writes", st.gb.writes()},
                      {"utilization", st.utilization()},
                      {"energy", record.energy.total()},
                      {"output_correct", record.result.output_correct}};
  if (wrote) {
    j["stats_file"] = files.stats.string();
    j["counters_file"] = files.counters.string();
  }
  if (record.sparse) {
    const sim::OpResult& res = record.result;
    j.update({{"weight_reads", st.gb.weight_reads},
              {"input_reads", st.gb.input_reads},
              {"psum_reads", st.gb.psum_reads},
              {"configurations", res.reconfigurations},
              {"mk_nnz", record.sparse->mk_nnz},
              {"kn_nnz", record.sparse->kn_nnz}});
  }
  if (!tile.empty()) j["tile"] = tile;
  return j;
}

SimOutcome simulate_request(const SimRequest& request, const fs::path& dir,
                            const sim::EnergyTable& table) {
  const sim::StonneCommand cmd = request.command();
  return cmd.kind == sim::CommandKind::Dense ? simulate_dense(request, cmd, dir, table)
                                             : simulate_sparse(request, cmd, dir, table);
}

sim::EnergyTable energy_table(const std::string& path) {
  return path.empty() ? sim::default_energy_table() : sim::load_energy_table(path);
}

}  // namespace telar::cli
