#include "cli/command.hpp"

namespace telar::cli {

// One entry function per subcommand file.
int run_models(const Args& args);
int run_infer(const Args& args);
int run_bench(const Args& args);
int run_train(const Args& args);
int run_eval(const Args& args);
int run_demo(const Args& args);
int run_prof(const Args& args);
int run_sim(const Args& args);
int run_simulate(const Args& args);
int run_dlrm(const Args& args);
int run_energy(const Args& args);
int run_compare(const Args& args);
int run_export(const Args& args);
int run_adapt(const Args& args);
int run_crosseval(const Args& args);
int run_lut(const Args& args);
int run_quantize(const Args& args);

const std::vector<Command>& commands() {
  static const std::vector<Command> list = {
      {"demo", "a tour of telar in a few minutes (start here)", run_demo},
      {"train", "train a model on a data set; writes a run directory", run_train},
      {"eval", "evaluate a checkpoint on a data set", run_eval},
      {"models", "list the model zoo, or show one model's layers (models show NAME)", run_models},
      {"infer", "inference latency and throughput of a model at a batch size", run_infer},
      {"bench",
       "latency distribution and throughput of a model on targets (cpu, cuda, sim); report.html",
       run_bench},
      {"adapt", "adapt a trained network to a latency/MACs/parameter budget by NetAdapt",
       run_adapt},
      {"lut", "NetAdapt's per-layer latency look-up table of a model on a target: build, check",
       run_lut},
      {"crosseval",
       "run networks adapted for different targets on every target: latency and size reductions",
       run_crosseval},
      {"quantize",
       "int8 post-training quantization of a trained model: calibrate on real data, save",
       run_quantize},
      {"export", "write a model (zoo, ONNX or trained by telar train) as an ONNX file", run_export},
      {"prof", "hardware-counter profiler: list events, run a command under counters, matmul",
       run_prof},
      {"sim",
       "simulate one operation on a DNN accelerator (MAERI, SIGMA, MAGMA, TPU mesh; STONNE syntax)",
       run_sim},
      {"simulate", "simulate a whole model on DNN accelerators (sim: backend); report.html",
       run_simulate},
      {"dlrm", "DLRM recommendation model: train, infer, benchmark (dlrm_s_pytorch.py's flags)",
       run_dlrm},
      {"energy", "run a command while sampling energy meters (RAPL, NVML): telar energy -- CMD",
       run_energy},
      {"compare", "compare runs: speed-up, parallel efficiency, energy, EDP vs a baseline",
       run_compare},
  };
  return list;
}

}  // namespace telar::cli
