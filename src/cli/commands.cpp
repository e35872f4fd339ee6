#include "cli/command.hpp"

namespace telar::cli {

// One entry function per subcommand file.
int run_models(const Args& args);
int run_prof(const Args& args);

const std::vector<Command>& commands() {
  static const std::vector<Command> list = {
      {"models", "list the model zoo, or show one model's layers (models show NAME)", run_models},
      {"prof", "hardware-counter profiler: list events, run a command under counters, matmul", run_prof},
  };
  return list;
}

}  // namespace telar::cli
