// telar sim: the accelerator simulator (src/sim/). Accepts STONNE's command-line syntax
// (`-DenseGEMM -M=20 -N=20 -K=256 -num_ms=256 -dn_bw=64 ...`) plus telar options, and
// `telar sim energy` (sim_energy.cpp) for STONNE `.counters` files.

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "cli/common.hpp"
#include "cli/sim_request.hpp"
#include "cli/sim_sweep.hpp"
#include "core/files.hpp"
#include "sim/energy.hpp"
#include "sim/report.hpp"
#include "sim/stonne_args.hpp"

namespace telar::cli {

namespace fs = std::filesystem;

int run_sim_energy(const Args& args);  // sim_energy.cpp

namespace {

constexpr const char* kUsage =
    "usage: telar sim [OPTIONS] -CONV|-FC|-DenseGEMM|-SparseGEMM|-SparseDense -NAME=VALUE...\n"
    "       telar sim --cases FILE --out DIR [OPTIONS]\n"
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
    "\nMany cases in one process, on every core (docs/sim.md, \"Sweeps\"):\n"
    "  --cases FILE        one STONNE command line per line (# comments; a leading\n"
    "                      `stonne` or `telar sim` is skipped); options given here apply\n"
    "                      to every line, a line's own win\n"
    "  --sweep NAME=V1,V2  run the command once per value of its flag -NAME (repeat for\n"
    "                      every combination; also over the lines of --cases)\n"
    "  --jobs N            threads (default: every core)\n"
    "                      Each case writes into --out DIR/case-NNNN; DIR/summary.csv has a\n"
    "                      row per case (cycles, traffic, utilization, energy, tile, time)\n"
    "  --help              this text\n\n"
    "See docs/sim.md.\n";

fs::path output_dir(const std::string& out_dir) {
  if (!out_dir.empty()) return out_dir;
  const char* env = std::getenv("OUTPUT_DIR");
  return env && *env ? fs::path(env) : fs::path(".");
}

}  // namespace

int run_sim(const Args& args) {
  if (!args.empty() && args[0] == "energy")
    return run_sim_energy(Args(args.begin() + 1, args.end()));
  for (const std::string& a : args)
    if (a == "--help" || a == "-h" || a == "help") {
      std::cout << kUsage;
      return 0;
    }
  SweepFlags sweep;
  const SimRequest request = parse_sim_request(args, &sweep);
  if (sweep.any()) return run_sim_sweep(request, sweep);
  if (request.stonne.empty()) {
    std::cerr << kUsage;
    return 2;
  }
  const sim::StonneCommand cmd = request.command();  // bad flags fail before any directory
  const sim::EnergyTable table = energy_table(request.energy_path);
  // Made (when stats are asked for) before simulating, and removed if the simulation fails on
  // bad input (a tile file, an operand file).
  const OutputDirectory out(output_dir(request.out_dir), cmd.print_stats,
                            request.out_dir.empty() ? "OUTPUT_DIR or --out" : "--out");
  const SimOutcome o = simulate_request(request, out.path(), table);
  std::cout << o.summary << "\n";
  if (o.status != 0) {
    std::cerr << "telar sim: " << o.problem << "\n";
    return o.status;
  }
  if (request.json) print_json(o.json());
  return 0;
}

}  // namespace telar::cli
