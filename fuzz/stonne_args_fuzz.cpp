// STONNE command lines (`telar sim -DenseGEMM -M=16 ...`): the input split at white space into
// arguments.
#include <sstream>
#include <vector>

#include "fuzz/harness.hpp"
#include "sim/stonne_args.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in{std::string(telar::fuzz::text(data, size))};
  std::vector<std::string> args;
  for (std::string a; in >> a;) args.push_back(a);
  return telar::fuzz::refused_only_by_errors([&] { telar::sim::parse_stonne_args(args); });
}
