// The sim: backend on the zoo's larger models (label slow: seconds to tens of seconds each of
// tile mapping; one test per model so that ctest runs them side by side).
#include "sim_backend_helpers.hpp"

namespace {

using namespace telar::testing;

TEST(SimBackendZoo, MnistCnnMatchesTheCpuBackend) {
  check_zoo_models({{"mnist_cnn", {1, 28, 28}}});
}

TEST(SimBackendZoo, MobileNetMatchesTheCpuBackend) {
  check_zoo_models({{"mobilenet_v1:0.25", {3, 32, 32}}});
}

TEST(SimBackendZoo, ResNet18MatchesTheCpuBackend) {
  check_zoo_models({{"resnet18", {3, 32, 32}}});
}

// Batch 1: its 4096-wide Linear layers and 11x11 convolution cost the most to map; the other
// models cover batches of two.
TEST(SimBackendZoo, AlexNetMatchesTheCpuBackend) {
  check_zoo_models({{"alexnet", {3, 64, 64}, 1}});
}

}  // namespace
