// The telar executable: `telar COMMAND [ARGS]`. Bad input: one line on stderr, exit status 2.
#include <fmt/format.h>

#include <cstring>
#include <exception>
#include <iostream>

#include "cli/command.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "core/module.hpp"
#include "core/parse.hpp"
#include "core/version.hpp"

namespace {

void print_usage() {
  std::cout << "telar " << telar::version()
            << ": run, simulate, profile, train and adapt neural networks\n\n"
               "usage: telar COMMAND [ARGS]   (telar COMMAND --help for its options)\n\n"
               "commands:\n";
  for (const auto& c : telar::cli::commands())
    std::cout << fmt::format("  {:<10} {}\n", c.name, c.summary);
  std::cout << "\n  --version  print the version, build options and optional modules\n"
               "             (--version --check-modules also loads each module)\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") ||
      !std::strcmp(argv[1], "help")) {
    print_usage();
    return argc < 2 ? 2 : 0;
  }
  if (!std::strcmp(argv[1], "--version")) {
    const bool check = argc > 2 && !std::strcmp(argv[2], "--check-modules");
    if (argc > 2 && (!check || argc > 3)) {
      std::cerr << "telar --version: unexpected '" << argv[check ? 3 : 2]
                << "'; the only option is --check-modules\n";
      return 2;
    }
    std::cout << telar::build_summary() << "\nmodules, loaded on first use:\n"
              << telar::modules::status_text(check);
    return 0;
  }
  const std::string name = argv[1];
  std::vector<std::string> names;
  for (const auto& c : telar::cli::commands()) {
    names.push_back(c.name);
    if (c.name != name) continue;
    try {
      return c.run(telar::cli::Args(argv + 2, argv + argc));
    } catch (const telar::Interrupted& e) {
      std::cout.flush();
      std::cerr << "telar " << name << ": " << e.what() << "\n";
      return 128 + e.signal;
    } catch (const telar::Error& e) {
      std::cout.flush();
      std::cerr << "telar " << name << ": error: " << e.what() << "\n";
      return 2;
    } catch (const std::bad_alloc&) {
      std::cerr << "telar " << name << ": error: out of memory; try a smaller batch or model\n";
      return 2;
    } catch (const std::exception& e) {
      std::cerr << "telar " << name << ": internal error: " << e.what() << "\n";
      return 1;
    }
  }
  const std::string near = telar::closest_match(name, names);
  std::cerr << "telar: unknown command '" << name << "'"
            << (near.empty() ? "" : "; did you mean '" + near + "'?")
            << " (telar --help lists the commands)\n";
  return 2;
}
