#include "core/error.hpp"
#include "graph/builder.hpp"
#include "graph/zoo/zoo.hpp"

namespace telar::graph::zoo {

Graph alexnet(const Shape& input, std::int64_t classes) {
  require(input.size() == 3, "alexnet needs an input C x H x W, got {}", shape_str(input));
  GraphBuilder b("alexnet");
  ValueId x = b.input("x", input);
  x = b.relu(b.conv2d(x, 64, 11, 4, 2, 1, true, "conv1"), "relu1");
  x = b.maxpool2d(x, 3, 2, 0, "pool1");
  x = b.relu(b.conv2d(x, 192, 5, 1, 2, 1, true, "conv2"), "relu2");
  x = b.maxpool2d(x, 3, 2, 0, "pool2");
  x = b.relu(b.conv2d(x, 384, 3, 1, 1, 1, true, "conv3"), "relu3");
  x = b.relu(b.conv2d(x, 256, 3, 1, 1, 1, true, "conv4"), "relu4");
  x = b.relu(b.conv2d(x, 256, 3, 1, 1, 1, true, "conv5"), "relu5");
  x = b.maxpool2d(x, 3, 2, 0, "pool5");
  // torchvision's AdaptiveAvgPool2d(6): identity at 224x224; an exact-window average pool
  // where the feature map is a multiple of 6; otherwise the classifier takes the map as it is.
  const auto h = b.shape(x)[2], w = b.shape(x)[3];
  if (h > 6 && h % 6 == 0 && w == h) x = b.avgpool2d(x, h / 6, h / 6, 0, "avgpool");
  x = b.flatten(x, "flatten");
  x = b.dropout(x, 0.5f, "dropout1");
  x = b.relu(b.linear(x, 4096, "fc1"), "relu6");
  x = b.dropout(x, 0.5f, "dropout2");
  x = b.relu(b.linear(x, 4096, "fc2"), "relu7");
  x = b.linear(x, classes, "fc3");
  b.output(x);
  return b.finish();
}

}  // namespace telar::graph::zoo
