// The simulator's step of `telar demo`: one CNN layer on a MAERI accelerator (tile chosen by
// the mapper) and, lowered to a GEMM, on a TPU-like 16×16 output-stationary mesh; both cycle
// by cycle in STONNE's model, side by side; then the GEMM over nine tiles as one sweep.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cli/command.hpp"
#include "core/files.hpp"
#include "core/parse.hpp"
#include "sim/accelerator.hpp"
#include "sim/mapper.hpp"
#include "sim/report.hpp"

namespace telar::cli {

namespace fs = std::filesystem;

int run_simulate(const Args& args);
int run_sim(const Args& args);

namespace {

sim::HardwareConfig demo_maeri() {  // configs/maeri_256mses_128_bw.cfg
  sim::HardwareConfig maeri;
  maeri.name = "maeri_256mses_128_bw";
  maeri.ms_size = 256;
  maeri.dn_bw = maeri.rn_bw = 128;
  maeri.accumulation_buffer = true;
  return maeri;
}

sim::HardwareConfig demo_tpu() {  // configs/tpu_16_16_pes.cfg
  sim::HardwareConfig tpu;
  tpu.name = "tpu_16_16_pes";
  tpu.mn = sim::MultiplierNetwork::OsMesh;
  tpu.ms_rows = tpu.ms_cols = 16;
  tpu.rn = sim::ReduceNetwork::Temporal;
  tpu.accumulation_buffer = true;
  tpu.dn_bw = 32;
  tpu.rn_bw = 256;
  tpu.controller = sim::Controller::TpuOsDense;
  return tpu;
}

// The layer's GEMM on MAERI over nine tiles, as a sweep (one process, every core): the cycles
// of each, rows T_N, columns T_K.
int run_tile_sweep(const sim::DenseOp& gemm, const fs::path& out) {
  const std::vector<std::string> t_n = {"2", "4", "8"}, t_k = {"8", "16", "32"};
  Args args = {"-DenseGEMM",
               fmt::format("-M={}", gemm.gemm_M),
               fmt::format("-N={}", gemm.gemm_N),
               fmt::format("-K={}", gemm.gemm_K),
               "-num_ms=256",
               "-dn_bw=128",
               "-rn_bw=128",
               "-accumulation_buffer=1",
               "-T_M=1",
               "-T_N=2",
               "-T_K=8",
               "--sweep",
               "T_N=" + fmt::format("{}", fmt::join(t_n, ",")),
               "--sweep",
               "T_K=" + fmt::format("{}", fmt::join(t_k, ",")),
               "--out",
               out.string()};
  std::cout << fmt::format(
      "\nThe same GEMM on MAERI over nine tiles, a sweep in one process:\ntelar sim {}\n",
      fmt::join(args, " "));
  std::cout.flush();
  fs::remove_all(out);  // an earlier demo's (the demo refuses it without --overwrite)
  if (const int rc = run_sim(args); rc != 0) return rc;
  // summary.csv: its source column names the swept values, e.g. "T_N=4 T_K=16".
  std::map<std::string, std::string> cycles;
  std::istringstream csv(read_file(out / "summary.csv"));
  std::string line;
  std::getline(csv, line);
  std::vector<std::string> header = split(line, ',');
  const auto column = [&](const std::string& name) {
    return static_cast<std::size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  const std::size_t source = column("source"), cycle = column("cycles");
  while (std::getline(csv, line)) {
    const std::vector<std::string> cells = split(line, ',');
    if (cells.size() == header.size()) cycles[cells[source]] = cells[cycle];
  }
  std::cout << fmt::format("{:>10}", "cycles");
  for (const std::string& k : t_k) std::cout << fmt::format("{:>10}", "T_K=" + k);
  std::cout << "\n";
  for (const std::string& n : t_n) {
    std::cout << fmt::format("{:>10}", "T_N=" + n);
    for (const std::string& k : t_k)
      std::cout << fmt::format("{:>10}", cycles["T_N=" + n + " T_K=" + k]);
    std::cout << "\n";
  }
  return 0;
}

}  // namespace

// The whole-model step: `telar simulate` on the CNN trained in step 1, on both accelerators
// (their .cfg files written beside the runs, so the demo runs from any directory).
int run_simulate_demo(const fs::path& root, bool overwrite) {
  const fs::path configs = root / "configs";
  ensure_writable_dir(configs);
  std::string backends;
  for (const sim::HardwareConfig& hw : {demo_maeri(), demo_tpu()}) {
    const fs::path cfg = configs / (hw.name + ".cfg");
    write_file_atomic(cfg, sim::format_config(hw));
    backends += (backends.empty() ? "sim:" : ",sim:") + cfg.string();
  }
  Args args = {"simulate",
                     "--model",
                     "mnist_cnn",
                     "--checkpoint",
                     (root / "train").string(),
                     "--backend",
                     backends,
                     "--batch",
                     "1",
                     "--out",
                     (root / "simulate").string(),
                     "--no-stonne-files"};
  std::cout << "telar simulate --model mnist_cnn --checkpoint " << (root / "train").string()
            << " --backend sim:configs/maeri_256mses_128_bw.cfg,sim:configs/tpu_16_16_pes.cfg "
               "--batch 1\n";
  if (overwrite) args.push_back("--overwrite");
  return run_simulate(Args(args.begin() + 1, args.end()));
}

int run_sim_demo(const fs::path& dir) {
  // A 3×3 convolution, 32 → 32 channels on a 16×16 feature map.
  sim::DenseOp conv = sim::make_conv(3, 3, 32, 32, 1, 1, 16, 16, 1);
  const sim::HardwareConfig maeri = demo_maeri(), tpu = demo_tpu();
  // The same layer as a GEMM (im2col): output pixels × filters, reduction over R·S·C.
  sim::DenseOp gemm = sim::make_gemm(sim::OpKind::DenseGemm, conv.out_x() * conv.out_y(), conv.K,
                                     conv.R * conv.S * conv.C);
  gemm.layer_name = conv.layer_name = "demo_conv3x3";

  std::cout << fmt::format("{} (= {} GEMM M={} N={} K={}), {} MACs\n", sim::describe(conv),
                           "im2col", gemm.gemm_M, gemm.gemm_N, gemm.gemm_K, conv.macs());
  struct Row {
    std::string name, tile;
    sim::OperationRecord record;
  };
  std::vector<Row> rows;
  const sim::Accelerator on_maeri(maeri), on_tpu(tpu);
  const sim::MapChoice choice = sim::map_tile(on_maeri, conv, sim::MapObjective::Performance);
  for (int which = 0; which < 2; ++which) {
    sim::OperationRecord r;
    r.hw = which == 0 ? maeri : tpu;
    r.op = which == 0 ? conv : gemm;
    r.tile = which == 0 ? choice.tile : sim::make_gemm_tile(16, 16, 1);
    r.tile_source = which == 0 ? "mapper (performance)" : "16x16 output tile";
    r.result = (which == 0 ? on_maeri : on_tpu).run(r.op, r.tile);
    r.energy = sim::compute_energy(sim::default_energy_table(), r.result.stats.counters);
    if (!r.result.output_correct) {
      std::cerr << "telar demo: the simulated output differs from the reference kernel\n";
      return 1;
    }
    sim::write_operation_files(dir, r);
    rows.push_back({which == 0 ? "MAERI, 256 multipliers (ART + accumulation buffer)"
                               : "TPU-like 16x16 output-stationary mesh",
                    sim::describe(r.tile, r.op.kind), std::move(r)});
  }
  std::cout << fmt::format("{:<52} {:>9} {:>10} {:>8} {:>7} {:>10}\n", "accelerator", "cycles",
                           "GB reads", "writes", "util.", "energy");
  for (const Row& row : rows) {
    const sim::Stats& s = row.record.result.stats;
    std::cout << fmt::format("{:<52} {:>9} {:>10} {:>8} {:>6.1f}% {:>10.4g}\n", row.name, s.cycles,
                             s.gb.reads(), s.gb.writes(), 100 * s.utilization(),
                             row.record.energy.total());
    std::cout << fmt::format(
        "  tile {}; {:.0f} ms to simulate, output equals the reference kernel\n", row.tile,
        1000 * row.record.result.seconds);
  }
  std::cout << fmt::format("Stats and .counters files (STONNE's formats) are in {}\n",
                           dir.string());
  return run_tile_sweep(gemm, dir / "sweep");
}

}  // namespace telar::cli
