#include "core/error.hpp"
#include "graph/builder.hpp"
#include "graph/zoo/zoo.hpp"

namespace telar::graph::zoo {

namespace {
ValueId basic_block(GraphBuilder& b, ValueId x, std::int64_t out, std::int64_t stride,
                    const std::string& id) {
  const std::int64_t in = b.shape(x)[1];
  ValueId y = b.conv2d(x, out, 3, stride, 1, 1, false, id + ".conv1");
  y = b.relu(b.batchnorm2d(y, id + ".bn1"), id + ".relu1");
  y = b.conv2d(y, out, 3, 1, 1, 1, false, id + ".conv2");
  y = b.batchnorm2d(y, id + ".bn2");
  ValueId shortcut = x;
  if (stride != 1 || in != out) {
    shortcut = b.conv2d(x, out, 1, stride, 0, 1, false, id + ".downsample");
    shortcut = b.batchnorm2d(shortcut, id + ".downsample_bn");
  }
  return b.relu(b.add(y, shortcut, id + ".add"), id + ".relu2");
}
}  // namespace

Graph resnet(int depth, const Shape& input, std::int64_t classes) {
  require(input.size() == 3, "resnet{} needs an input C x H x W, got {}", depth, shape_str(input));
  const int blocks18[4] = {2, 2, 2, 2}, blocks34[4] = {3, 4, 6, 3};
  const int* blocks = depth == 18 ? blocks18 : blocks34;
  GraphBuilder b("resnet" + std::to_string(depth));
  ValueId x = b.input("x", input);
  x = b.conv2d(x, 64, 7, 2, 3, 1, false, "conv1");
  x = b.relu(b.batchnorm2d(x, "bn1"), "relu1");
  x = b.maxpool2d(x, 3, 2, 1, "maxpool");
  const std::int64_t widths[4] = {64, 128, 256, 512};
  for (int stage = 0; stage < 4; ++stage)
    for (int i = 0; i < blocks[stage]; ++i)
      x = basic_block(b, x, widths[stage], (stage > 0 && i == 0) ? 2 : 1,
                      "layer" + std::to_string(stage + 1) + "." + std::to_string(i));
  x = b.global_avgpool(x, "avgpool");
  x = b.linear(x, classes, "fc");
  b.output(x);
  return b.finish();
}

}  // namespace telar::graph::zoo
