// The sim: backend on the zoo's larger models (label slow: tens of seconds of tile mapping).
#include "sim_backend_helpers.hpp"

namespace {

using namespace telar::testing;

TEST(SimBackendZoo, ModelsMatchTheCpuBackend) {
  check_zoo_models({{"mnist_cnn", {1, 28, 28}},
                    {"mobilenet_v1:0.25", {3, 32, 32}},
                    {"resnet18", {3, 32, 32}},
                    {"alexnet", {3, 64, 64}}});
}

}  // namespace
