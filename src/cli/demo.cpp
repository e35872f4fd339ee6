// telar demo: the front door. Runs one short piece of every pillar and says where the results
// are.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>

#include "backend/cpu/cpu_backend.hpp"
#include "cli/common.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "dist/energy/sampler.hpp"
#include "report/run_dir.hpp"

namespace telar::cli {

int run_train(const Args& args);
int run_export(const Args& args);
int run_bench(const Args& args);
int run_quantize(const Args& args);
int run_adapt(const Args& args);
int run_sim_demo(const std::filesystem::path& dir);
int run_simulate_demo(const std::filesystem::path& root, bool overwrite);
int run_dlrm(const Args& args);

namespace fs = std::filesystem;

namespace {

void banner(const std::string& title) {
  std::cout << "\n== " << title << " " << std::string(title.size() < 70 ? 70 - title.size() : 0, '=')
            << "\n";
  std::cout.flush();
}

}  // namespace

int run_demo(const Args& args) {
  CLI::App app{
      "A tour of telar in a few minutes: trains the seed-001 CNN on Fashion-MNIST for "
      "one epoch with counters, exports it to ONNX and runs the file, quantizes it to int8, "
      "adapts it to this "
      "CPU's latency by NetAdapt, simulates a layer "
      "on MAERI and a TPU-like mesh (and sweeps its tiles), then trains data-parallel on two "
      "workers with "
      "energy accounting, and runs DLRM on the simulated hybrid accelerator.",
      "demo"};
  std::string out;
  int threads = 0;
  bool overwrite = false;
  app.add_option("--out", out, "directory for the demo's runs (default: runs/demo-DATE-TIME)");
  app.add_flag("--overwrite", overwrite, "replace the runs of an earlier demo in --out");
  add_threads_option(app, &threads);
  int code = 0;
  if (!parse(app, args, "demo", &code)) return code;
  fs::path root = out.empty() ? report::default_run_path("demo") : fs::path(out);
  // A run of another command there is refused (the demo's runs go into sub-directories of its
  // own, beside that run's files); an earlier demo's runs are refused before anything runs (or
  // replaced: --overwrite).
  require(!report::holds_run(root),
          "'{}' holds a run of its own; give --out a new directory for the demo's runs",
          root.string());
  for (const char* stage :
       {"train", "bench", "int8", "bench-int8", "adapt", "simulate", "data-parallel", "dlrm"})
    report::check_run_path(root / stage,
                           report::reuse_for(overwrite));
  require(overwrite || !fs::exists(root / "sim" / "sweep"),
          "{} exists from an earlier demo; give another --out or add --overwrite",
          (root / "sim" / "sweep").string());
  const fs::path onnx_file = root / "mnist_cnn.onnx";
  require(overwrite || !fs::exists(onnx_file),
          "{} exists from an earlier demo; give another --out or add --overwrite",
          onnx_file.string());
  ensure_writable_dir(root);
  const Args replace = overwrite ? Args{"--overwrite"} : Args{};
  Stopwatch total;

  banner("1. Training, profiled: the seed-001 CNN on Fashion-MNIST, one epoch (oneDNN on the "
         "CPU), with performance counters read at every batch");
  std::cout << "telar train --model mnist_cnn --data fashion-mnist --epochs 1 --batch-size 128 "
               "--optimizer sgd --momentum 0.9 --lr 0.05 --profile "
               "task-clock,page-faults,context-switches,cycles,instructions --profile-scopes "
               "run,epoch,batch,eval\n";
  Args train_args = {"--model", "mnist_cnn", "--data", "fashion-mnist", "--epochs", "1",
                     "--batch-size", "128", "--optimizer", "sgd", "--momentum", "0.9",
                     "--lr", "0.05", "--profile",
                     "task-clock,page-faults,context-switches,cycles,instructions",
                     "--profile-scopes", "run,epoch,batch,eval", "--out",
                     (root / "train").string()};
  if (threads > 0) train_args.insert(train_args.end(), {"--threads", std::to_string(threads)});
  train_args.insert(train_args.end(), replace.begin(), replace.end());
  if (int rc = run_train(train_args); rc != 0) return rc;

  banner(
      "2. ONNX and deployment speed: the CNN just trained, written as an ONNX file (which ONNX "
      "Runtime, TensorRT or OpenVINO run), then benched from that file, compiled for "
      "inference (BatchNorm folded, activations fused): latency at batch 1, throughput at 64, "
      "and where the time goes, node by node");
  std::cout << "telar export --checkpoint " << (root / "train").string() << " --out "
            << onnx_file.string() << "\ntelar bench --model " << onnx_file.string()
            << " --batch 1,64 --duration 0.5 --layers 5 --out " << (root / "bench").string()
            << "\n";
  std::cout.flush();
  Args export_args = {"--checkpoint", (root / "train").string(), "--out", onnx_file.string()};
  if (overwrite) export_args.push_back("--overwrite");
  if (int rc = run_export(export_args); rc != 0) return rc;
  Args bench_args = {"--model", onnx_file.string(), "--batch", "1,64",  "--duration",
                     "0.5",     "--layers",         "5",       "--out", (root / "bench").string()};
  if (threads > 0) bench_args.insert(bench_args.end(), {"--threads", std::to_string(threads)});
  bench_args.insert(bench_args.end(), replace.begin(), replace.end());
  if (int rc = run_bench(bench_args); rc != 0) return rc;

  banner(
      "2b. int8: the CNN quantized after training (activation ranges calibrated on 8 batches "
      "of training images), its accuracy next to fp32's, and both benched side by side");
  if (!backend::cpu::has_int8()) {
    std::cout << "skipped: this CPU has no VNNI for oneDNN's int8 kernels (it dispatches to "
              << backend::cpu::dispatched_isa() << ")\n";
  } else {
    std::cout << "telar quantize --checkpoint " << (root / "train").string()
              << " --calibration-batches 8 --out " << (root / "int8").string()
              << "\ntelar bench --checkpoint " << (root / "int8").string()
              << " --batch 1,64 --duration 0.5 --out " << (root / "bench-int8").string() << "\n";
    std::cout.flush();
    Args quantize_args = {"--checkpoint", (root / "train").string(), "--calibration-batches", "8",
                          "--out",        (root / "int8").string()};
    quantize_args.insert(quantize_args.end(), replace.begin(), replace.end());
    if (int rc = run_quantize(quantize_args); rc != 0) return rc;
    Args int8_bench = {
        "--checkpoint", (root / "int8").string(),      "--batch", "1,64", "--duration", "0.5",
        "--out",        (root / "bench-int8").string()};
    if (threads > 0) int8_bench.insert(int8_bench.end(), {"--threads", std::to_string(threads)});
    int8_bench.insert(int8_bench.end(), replace.begin(), replace.end());
    if (int rc = run_bench(int8_bench); rc != 0) return rc;
  }

  banner("3. Adaptation to this CPU: NetAdapt prunes the trained CNN's filters, group by group, "
         "until its measured batch-1 latency here is 60% of the original's, fine-tuning each "
         "candidate briefly and keeping the one that loses the least accuracy per latency "
         "removed");
  const std::string adapt_line =
      "telar adapt --checkpoint " + (root / "train").string() +
      " --budget 0.6 --delta 0.1 --max-iterations 6 --short-term-iterations 30 "
      "--measure-seconds 0.05 --out " + (root / "adapt").string();
  std::cout << adapt_line << "\n";
  std::cout.flush();
  Args adapt_args = {"--checkpoint", (root / "train").string(), "--budget", "0.6", "--delta",
                     "0.1", "--max-iterations", "6", "--short-term-iterations", "30",
                     "--measure-seconds", "0.05", "--out", (root / "adapt").string()};
  if (threads > 0) adapt_args.insert(adapt_args.end(), {"--threads", std::to_string(threads)});
  adapt_args.insert(adapt_args.end(), replace.begin(), replace.end());
  if (int rc = run_adapt(adapt_args); rc != 0) return rc;

  banner(
      "4. Simulation: one CNN layer on a MAERI accelerator and on a TPU-like mesh, cycle by "
      "cycle (STONNE's model), then its GEMM over nine tiles as one sweep on every core");
  std::cout << "telar sim --config configs/maeri_256mses_128_bw.cfg --tile auto -CONV -R=3 -S=3 "
               "-C=32 -K=32 -X=16 -Y=16\n"
               "telar sim --config configs/tpu_16_16_pes.cfg -DenseGEMM -M=196 -N=32 -K=288 "
               "-T_M=16 -T_N=16 -T_K=1\n";
  if (int rc = run_sim_demo(root / "sim"); rc != 0) return rc;

  banner("5. Whole-model simulation: the CNN just trained, on MAERI and on the TPU-like mesh, "
         "layer by layer (values from the CPU, time from the accelerator model)");
  if (int rc = run_simulate_demo(root, overwrite); rc != 0) return rc;

  banner("6. Data-parallel training: two workers of one thread each share every global batch "
         "(sample-weighted gradient all-reduce, overlapped with the backward pass), with the "
         "energy summary");
  std::cout << "telar train --model mnist_cnn --data fashion-mnist --epochs 1 --batch-size 128 "
               "--limit-batches 40 --workers cpu:threads=1,cpu:threads=1 --balance auto\n";
  std::cout.flush();
  Args dist_args = {"--model", "mnist_cnn", "--data", "fashion-mnist", "--epochs", "1",
                    "--batch-size", "128", "--limit-batches", "40", "--workers",
                    "cpu:threads=1,cpu:threads=1", "--balance", "auto", "--out",
                    (root / "data-parallel").string()};
  dist_args.insert(dist_args.end(), replace.begin(), replace.end());
  if (int rc = run_train(dist_args); rc != 0) return rc;
  {
    const auto run = nlohmann::json::parse(read_file(root / "data-parallel" / "run.json"));
    const auto& r = run["result"];
    std::cout << fmt::format("workers' shares {} (measured {} samples/s)\n",
                             r["data_parallel"]["shares"].dump(),
                             r["data_parallel"]
                                 .value("measured_samples_per_s", nlohmann::json::array())
                                 .dump())
              << energy::EnergySummary::from_json(r["energy"]).format();
  }

  banner("7. DLRM on the simulated hybrid accelerator: the seed thesis' workload DLRM(1), MLPs "
         "on MAERI, EmbeddingBags as CSR sparse x dense on MAGMA, per component");
  std::cout << "telar dlrm\n";
  std::cout.flush();
  Args dlrm_args = {"--out", (root / "dlrm").string()};
  if (threads > 0) dlrm_args.insert(dlrm_args.end(), {"--threads", std::to_string(threads)});
  dlrm_args.insert(dlrm_args.end(), replace.begin(), replace.end());
  if (int rc = run_dlrm(dlrm_args); rc != 0) return rc;

  banner("Done");
  std::cout << fmt::format("telar demo finished in {0:.0f} s. Open {1}/train/report.html for the "
                           "training curves, {1}/train/profile/report.html for the counters "
                           "per batch, {1}/adapt/report.html for the adaptation and {1}/simulate/report.html for the simulated layers; "
                           "{1}/data-parallel/run.json has the workers' shares and the energy "
                           "(telar compare RUN... puts runs side by side); {1}/dlrm/report.html "
                           "has DLRM's components on the hybrid accelerator; {1}/mnist_cnn.onnx is the "
                           "trained CNN as ONNX.\n",
                           total.seconds(), root.string());
  return 0;
}

}  // namespace telar::cli
