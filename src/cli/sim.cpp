// telar sim: the accelerator simulator (src/sim/). Accepts STONNE's command-line syntax
// (`-DenseGEMM -M=20 -N=20 -K=256 -num_ms=256 -dn_bw=64 ...`) plus telar options, and
// `telar sim energy` (sim_energy.cpp) for STONNE `.counters` files.
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>

#include "cli/common.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/parse.hpp"
#include "sim/accelerator.hpp"
#include "sim/energy.hpp"
#include "sim/report.hpp"
#include "sim/stonne_command.hpp"
#include "sim/stonne_args.hpp"

namespace telar::cli {

namespace fs = std::filesystem;

int run_sim_energy(const Args& args);  // sim_energy.cpp

namespace {

constexpr const char* kUsage =
    "usage: telar sim [OPTIONS] -CONV|-FC|-DenseGEMM|-SparseGEMM|-SparseDense -NAME=VALUE...\n"
    "       telar sim energy --table FILE COUNTERS...\n\n"
    "Simulates one operation on a flexible DNN accelerator (STONNE's model: MAERI with an ART\n"
    "or FEN reduction network, a TPU-like output-stationary mesh, SIGMA's bitmap sparse GEMM or\n"
    "MAGMA's CSR sparse x dense), cycle by cycle, and reports its cycles, Global Buffer reads\n"
    "and writes, utilization and energy. The operation and the hardware are given in STONNE's\n"
    "syntax, e.g.\n"
    "  telar sim -DenseGEMM -M=20 -N=20 -K=256 -num_ms=256 -dn_bw=64 -rn_bw=64 -T_K=64 -T_M=2 "
    "-T_N=1\n"
    "  telar sim --config configs/maeri_256mses_64_bw.cfg --tile auto -CONV -R=3 -S=3 -C=16 "
    "-K=8 -X=12 -Y=12\n\n"
    "  telar sim -SparseDense -M=20 -N=20 -K=256 -MK_sparsity=80 -T_N=4 -T_K=32 -num_ms=128 "
    "-dn_bw=64 -rn_bw=64\n"
    "  telar sim --config configs/sigma_128mses_128_bw.cfg --mk A.mtx --kn B.mtx -SparseGEMM\n\n"
    "Operations: -CONV (-R -S -C -K -G -N -X -Y -strides, tile -T_R -T_S -T_C -T_K -T_G -T_N\n"
    "-T_X_ -T_Y_), -FC and -DenseGEMM (-M -N -K, tile -T_M -T_N -T_K), -SparseGEMM (-M -N -K\n"
    "-MK_sparsity -KN_sparsity in percent, -dataflow=MK_STA_KN_STR|MK_STR_KN_STA) and\n"
    "-SparseDense (-M -N -K -MK_sparsity, tile -T_N -T_K). Sparse operands are STONNE's random\n"
    "matrices (glibc rand(), seed 1) unless given as Matrix Market files.\n"
    "Hardware: -num_ms -dn_bw -rn_bw -rn_type=ASNETWORK|FENETWORK|TEMPORALRN\n"
    "-mn_type=LINEAR|OS_MESH -ms_rows -ms_cols -mem_ctrl=MAERI_DENSE_WORKLOAD|TPU_OS_DENSE|\n"
    "SIGMA_SPARSE_GEMM|MAGMA_SPARSE_DENSE\n"
    "-accumulation_buffer=0|1; also -layer_name, -print_stats=0|1, -generate_tile=performance.\n\n"
    "Options:\n"
    "  --config FILE       hardware from a STONNE .cfg file (hardware flags override it)\n"
    "  --tile FILE|auto[:performance|energy|edp]\n"
    "                      tile from a STONNE tile file, or chosen by the mapper\n"
    "  --out DIR           where the stats (.txt, JSON) and .counters files go\n"
    "                      (default: $OUTPUT_DIR, else the current directory)\n"
    "  --energy-table FILE energy/area table (default: the built-in copy of\n"
    "                      configs/energy_model.txt)\n"
    "  --exact-cycle-loop  step every cycle (the oracle) instead of skipping repeated states\n"
    "  --seed N            operand values (default 1; for the sparse operations the seed of\n"
    "                      STONNE's rand(), so 1 reproduces STONNE's matrices)\n"
    "  --mk FILE.mtx       the MK operand of -SparseGEMM/-SparseDense (Matrix Market)\n"
    "  --kn FILE.mtx       the KN operand (dense for -SparseDense: every element is used)\n"
    "  --json              print "
    "{\"cycles\",\"gb_reads\",\"gb_writes\",\"utilization\",\"energy\"}\n"
    "                      as the last line\n"
    "  --help              this text\n\n"
    "See docs/sim.md.\n";

struct SparseCli {
  std::string config_path, tile_arg, out_dir, energy_path;
  sim::SparseOperandSources operands;
  bool json = false, exact = false;
};

// The command's hardware, over a .cfg file's where --config is given.
sim::HardwareConfig hardware_of(const sim::StonneCommand& cmd, const std::string& config_path) {
  return config_path.empty() ? cmd.hw : sim::merge_hardware(sim::load_config(config_path), cmd);
}

sim::EnergyTable energy_table(const std::string& path) {
  return path.empty() ? sim::default_energy_table() : sim::load_energy_table(path);
}

fs::path output_dir(const std::string& out_dir) {
  if (!out_dir.empty()) return out_dir;
  const char* env = std::getenv("OUTPUT_DIR");
  return env && *env ? fs::path(env) : fs::path(".");
}

// What --json prints of every operation (and the files written, if any).
nlohmann::json result_json(const sim::OperationRecord& record, const sim::OperationFiles* files) {
  const sim::Stats& st = record.result.stats;
  nlohmann::json j = {{"cycles", st.cycles},
                      {"gb_reads", st.gb.reads()},
                      {"gb_writes", st.gb.writes()},
                      {"utilization", st.utilization()},
                      {"energy", record.energy.total()},
                      {"output_correct", record.result.output_correct}};
  if (files) {
    j["stats_file"] = files->stats.string();
    j["counters_file"] = files->counters.string();
  }
  return j;
}

int run_sparse(const sim::StonneCommand& cmd, const SparseCli& o) {
  const sim::HardwareConfig hw = hardware_of(cmd, o.config_path);
  const sim::Accelerator accelerator(hw);
  const sim::EnergyTable table = energy_table(o.energy_path);
  const bool magma = cmd.kind == sim::CommandKind::SparseDense;
  std::optional<std::string> auto_objective = cmd.generate_tile;
  if (!o.tile_arg.empty()) {
    require(magma, "--tile applies to -SparseDense (SIGMA needs no tile)");
    require(o.tile_arg == "auto" || o.tile_arg.rfind("auto:", 0) == 0,
            "-SparseDense takes its tile as -T_N and -T_K, or --tile auto[:objective]");
    require(!cmd.tile_given, "give the tile either as -T_N/-T_K or with --tile auto, not both");
    auto_objective = o.tile_arg == "auto" ? "performance" : o.tile_arg.substr(5);
  }
  const OutputDirectory out(output_dir(o.out_dir), cmd.print_stats,
                            o.out_dir.empty() ? "OUTPUT_DIR or --out" : "--out");
  const fs::path& dir = out.path();

  const sim::OperationRecord record = sim::simulate_sparse_command(
      accelerator, cmd, o.operands, auto_objective, o.exact, table);
  const std::string tile_text =
      magma ? " [" + sim::describe(record.sparse->tile) + "]" : std::string();

  const sim::Stats& st = record.result.stats;
  const sim::OpResult& res = record.result;
  sim::OperationFiles files;
  if (cmd.print_stats) files = sim::write_operation_files(dir, record);
  std::cout << fmt::format(
      "telar sim: {}{} on {} ({}): {} cycles, GB reads {}, writes {}, utilization {:.1f}%, "
      "energy {:.6g}; {} configuration(s); output {}{}\n",
      sim::describe(*record.sparse), tile_text, hw.name, sim::describe(hw), st.cycles,
      st.gb.reads(), st.gb.writes(), 100.0 * st.utilization(), record.energy.total(),
      res.reconfigurations,
      res.output_checked ? (res.output_correct ? "matches the reference product"
                                               : "DIFFERS from the reference product")
                         : "not checked",
      cmd.print_stats ? fmt::format("; wrote {}", files.counters.string()) : "");
  if (res.output_checked && !res.output_correct) {
    std::cerr << fmt::format(
        "telar sim: internal error: the simulated output differs from the reference product "
        "(max abs error {}); please report this with the command line\n",
        res.max_abs_error);
    return 1;
  }
  if (o.json) {
    nlohmann::json j = result_json(record, cmd.print_stats ? &files : nullptr);
    j.update({{"weight_reads", st.gb.weight_reads},
              {"input_reads", st.gb.input_reads},
              {"psum_reads", st.gb.psum_reads},
              {"configurations", res.reconfigurations},
              {"mk_nnz", record.sparse->mk_nnz},
              {"kn_nnz", record.sparse->kn_nnz}});
    if (magma) j["tile"] = sim::describe(record.sparse->tile);
    print_json(j);
  }
  return 0;
}

}  // namespace

int run_sim(const Args& args) {
  if (!args.empty() && args[0] == "energy")
    return run_sim_energy(Args(args.begin() + 1, args.end()));
  std::string config_path, tile_arg, out_dir, energy_path, mk_path, kn_path;
  bool json = false, exact = false;
  std::uint64_t seed = 1;
  std::vector<std::string> stonne;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](const std::string& flag) {
      if (a.size() > flag.size() && a[flag.size()] == '=') return a.substr(flag.size() + 1);
      require(i + 1 < args.size(), "{} needs a value; see `telar sim --help`", flag);
      return args[++i];
    };
    auto is = [&](const std::string& flag) { return a == flag || (a.rfind(flag + "=", 0) == 0); };
    if (a == "--help" || a == "-h" || a == "help") {
      std::cout << kUsage;
      return 0;
    } else if (a == "--json") {
      json = true;
    } else if (a == "--exact-cycle-loop") {
      exact = true;
    } else if (is("--config")) {
      config_path = value("--config");
    } else if (is("--tile")) {
      tile_arg = value("--tile");
    } else if (is("--out")) {
      out_dir = value("--out");
    } else if (is("--energy-table")) {
      energy_path = value("--energy-table");
    } else if (is("--mk")) {
      mk_path = value("--mk");
    } else if (is("--kn")) {
      kn_path = value("--kn");
    } else if (is("--seed")) {
      const long long s = parse_int(value("--seed"), "--seed");
      require(s >= 0, "--seed must be non-negative");
      seed = static_cast<std::uint64_t>(s);
    } else if (a.rfind("--", 0) == 0) {
      const std::string near =
          closest_match(a, {"--config", "--tile", "--out", "--json", "--exact-cycle-loop", "--seed",
                            "--energy-table", "--mk", "--kn", "--help"});
      fail("unknown option '{}'{}; see `telar sim --help`", a,
           near.empty() ? "" : fmt::format(" (did you mean {}?)", near));
    } else {
      stonne.push_back(a);
    }
  }
  if (stonne.empty()) {
    std::cerr << kUsage;
    return 2;
  }
  // The operation flag may come after hardware flags; STONNE wants it first.
  for (std::size_t i = 0; i < stonne.size(); ++i)
    if (stonne[i] == "-CONV" || stonne[i] == "-FC" || stonne[i] == "-DenseGEMM" ||
        stonne[i] == "-SparseGEMM" || stonne[i] == "-SparseDense") {
      std::rotate(stonne.begin(), stonne.begin() + static_cast<std::ptrdiff_t>(i),
                  stonne.begin() + static_cast<std::ptrdiff_t>(i) + 1);
      break;
    }
  const sim::StonneCommand cmd = sim::parse_stonne_args(stonne);
  if (cmd.kind != sim::CommandKind::Dense)
    return run_sparse(cmd, SparseCli{config_path, tile_arg, out_dir, energy_path,
                                     {mk_path, kn_path, seed}, json, exact});
  require(mk_path.empty() && kn_path.empty(),
          "--mk and --kn give the operands of -SparseGEMM and -SparseDense");
  const sim::HardwareConfig hw = hardware_of(cmd, config_path);
  const sim::Accelerator accelerator(hw);
  const sim::EnergyTable table = energy_table(energy_path);

  const sim::DenseTileChoice choice = sim::choose_dense_tile(accelerator, cmd, tile_arg);
  const sim::Tile& tile = choice.tile;

  // Where the files go: checked before simulating, so a bad path costs nothing.
  const OutputDirectory out(output_dir(out_dir), cmd.print_stats,
                            out_dir.empty() ? "OUTPUT_DIR or --out" : "--out");
  const fs::path& dir = out.path();

  const sim::OperationRecord record =
      sim::simulate_dense_command(accelerator, cmd, choice, exact, seed, table);

  const sim::Stats& st = record.result.stats;
  const sim::OpResult& res = record.result;
  sim::OperationFiles files;
  if (cmd.print_stats) files = sim::write_operation_files(dir, record);
  std::cout << fmt::format(
      "telar sim: {} [{}] on {} ({}): {} cycles, GB reads {}, writes {}, utilization {:.1f}%, "
      "energy {:.6g}; output {} ({} of {} values through the fabric){}\n",
      sim::describe(cmd.op), sim::describe(tile, cmd.op.kind), hw.name, sim::describe(hw),
      st.cycles, st.gb.reads(), st.gb.writes(), 100.0 * st.utilization(), record.energy.total(),
      res.output_correct ? "matches the reference kernel" : "DIFFERS from the reference kernel",
      res.outputs_from_fabric, res.output.size(),
      cmd.print_stats ? fmt::format("; wrote {}", files.counters.string()) : "");
  if (!res.output_correct) {
    const std::string why = sim::wrong_result_reason(hw, cmd.op, tile);
    if (!why.empty())
      std::cerr << fmt::format(
          "telar sim: the simulated accelerator computes a wrong result with this tile, as STONNE "
          "does (its own output check fails on it): {}; the cycles and counts above are "
          "STONNE's\n",
          why);
    else
      std::cerr << fmt::format(
          "telar sim: internal error: the simulated output differs from the reference kernel "
          "(max abs error {}); please report this with the command line\n",
          res.max_abs_error);
    return 1;
  }
  if (json) {
    nlohmann::json j = result_json(record, cmd.print_stats ? &files : nullptr);
    j["tile"] = sim::describe(tile, cmd.op.kind);
    print_json(j);
  }
  return 0;
}

}  // namespace telar::cli
