#include "cli/command.hpp"

namespace telar::cli {

// One entry function per subcommand file.
int run_models(const Args& args);

const std::vector<Command>& commands() {
  static const std::vector<Command> list = {
      {"models", "list the model zoo, or show one model's layers (models show NAME)", run_models},
  };
  return list;
}

}  // namespace telar::cli
