#include <cmath>

#include "core/error.hpp"
#include "graph/builder.hpp"
#include "graph/zoo/zoo.hpp"

namespace telar::graph::zoo {

// NetAdapt's MobileNetV1: conv_bn(3->32, s2), 13 depthwise-separable blocks, global average
// pool, one fully connected layer. Channel counts scale by the width multiplier.
Graph mobilenet_v1(const Shape& input, std::int64_t classes, double width) {
  require(input.size() == 3, "mobilenet_v1 needs an input C x H x W, got {}", shape_str(input));
  auto ch = [&](int c) {
    return std::max<std::int64_t>(8, static_cast<std::int64_t>(std::lround(c * width)));
  };
  GraphBuilder b("mobilenet_v1");
  ValueId x = b.input("x", input);
  x = b.conv2d(x, ch(32), 3, 2, 1, 1, false, "conv0");
  x = b.relu(b.batchnorm2d(x, "bn0"), "relu0");
  const int blocks[13][2] = {{64, 1},  {128, 2}, {128, 1}, {256, 2}, {256, 1},
                             {512, 2}, {512, 1}, {512, 1}, {512, 1}, {512, 1},
                             {512, 1}, {1024, 2}, {1024, 1}};
  for (int i = 0; i < 13; ++i) {
    const std::string id = std::to_string(i + 1);
    const std::int64_t in = b.shape(x)[1];
    x = b.conv2d(x, in, 3, blocks[i][1], 1, in, false, "dw" + id);
    x = b.relu(b.batchnorm2d(x, "dw" + id + "_bn"), "dw" + id + "_relu");
    x = b.conv2d(x, ch(blocks[i][0]), 1, 1, 0, 1, false, "pw" + id);
    x = b.relu(b.batchnorm2d(x, "pw" + id + "_bn"), "pw" + id + "_relu");
  }
  x = b.global_avgpool(x, "avgpool");
  x = b.linear(x, classes, "fc");
  b.output(x);
  return b.finish();
}

}  // namespace telar::graph::zoo
