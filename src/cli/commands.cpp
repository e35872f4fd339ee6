#include "cli/command.hpp"

namespace telar::cli {

// One entry function per subcommand file.
int run_models(const Args& args);
int run_infer(const Args& args);

const std::vector<Command>& commands() {
  static const std::vector<Command> list = {
      {"models", "list the model zoo, or show one model's layers (models show NAME)", run_models},
      {"infer", "inference latency and throughput of a model at a batch size", run_infer},
  };
  return list;
}

}  // namespace telar::cli
