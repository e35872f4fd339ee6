#include "core/error.hpp"
#include "graph/builder.hpp"
#include "graph/zoo/zoo.hpp"

namespace telar::graph::zoo {

Graph mlp(const std::vector<std::int64_t>& widths, const Shape& input) {
  GraphBuilder b("mlp");
  ValueId x = b.input("x", input);
  if (input.size() > 1) x = b.flatten(x, "flatten");
  for (std::size_t i = 1; i < widths.size(); ++i) {
    x = b.linear(x, widths[i], "fc" + std::to_string(i), true, widths[i - 1]);
    if (i + 1 < widths.size()) x = b.relu(x, "relu" + std::to_string(i));
  }
  b.output(x);
  return b.finish();
}

}  // namespace telar::graph::zoo
