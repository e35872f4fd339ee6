#pragma once
// Every subcommand is one file in src/cli/ with one entry function, listed in commands.cpp.
// An entry function receives the arguments after the subcommand name and returns the exit
// status; it throws telar::Error for bad input (main prints it on one line and exits 2).
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace telar::cli {

using Args = std::vector<std::string>;  // arguments after the subcommand name

struct Command {
  std::string name;
  std::string summary;
  std::function<int(const Args&)> run;
};

const std::vector<Command>& commands();

}  // namespace telar::cli
