#include "core/error.hpp"
#include "graph/builder.hpp"
#include "graph/zoo/zoo.hpp"

namespace telar::graph::zoo {

// The seed-001 network (TensorFlow's official MNIST model): 'same' 5x5 convolutions, 2x2 pools.
Graph mnist_cnn(const Shape& input, std::int64_t classes) {
  require(input.size() == 3, "mnist_cnn needs an input C x H x W, got {}", shape_str(input));
  GraphBuilder b("mnist_cnn");
  ValueId x = b.input("x", input);
  x = b.relu(b.conv2d(x, 32, 5, 1, 2, 1, true, "conv1"), "relu1");
  x = b.maxpool2d(x, 2, 2, 0, "pool1");
  x = b.relu(b.conv2d(x, 32, 5, 1, 2, 1, true, "conv2"), "relu2");
  x = b.maxpool2d(x, 2, 2, 0, "pool2");
  x = b.flatten(x, "flatten");
  x = b.relu(b.linear(x, 1024, "fc1"), "relu3");
  x = b.dropout(x, 0.4f, "dropout");
  x = b.linear(x, classes, "fc2");
  b.output(x);
  return b.finish();
}

}  // namespace telar::graph::zoo
