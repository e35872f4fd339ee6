#include "graph/zoo/zoo.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

using namespace telar;
using namespace telar::graph;

TEST(Zoo, AlexNetTenClassesMatchesPublishedCount) {
  // NetAdapt's AlexNet for 10 classes: 57,044,810 parameters (217.6 MiB), seed-003 Table 4.5.
  Graph g = zoo::build("alexnet", {Shape{3, 224, 224}, 10});
  EXPECT_EQ(g.parameter_count(), 57044810);
}

TEST(Zoo, ResNet34OneChannelNineClasses) {
  // The seed-002 network: torchvision ResNet-34 (21,797,672) with a 1-channel stem and 9 classes.
  Graph g = zoo::build("resnet34", {Shape{1, 148, 197}, 9});
  EXPECT_EQ(g.parameter_count(), 21283017);
}

TEST(Zoo, ResNet18ImageNetCount) {
  // torchvision resnet18 with 1000 classes has 11,689,512 parameters.
  Graph g = zoo::build("resnet18", {Shape{3, 224, 224}, 1000});
  EXPECT_EQ(g.parameter_count(), 11689512);
}

TEST(Zoo, MnistCnnCount) {
  // conv1 5*5*1*32+32, conv2 5*5*32*32+32, fc1 7*7*32*1024+1024, fc2 1024*10+10
  Graph g = zoo::build("mnist_cnn");
  EXPECT_EQ(g.parameter_count(), 832 + 25632 + 1606656 + 10250);
}

TEST(Zoo, MobileNetV1Count) {
  // NetAdapt's MobileNetV1 with 10 classes: about 3.22 M parameters (seed-003 digest).
  Graph g = zoo::build("mobilenet_v1");
  EXPECT_EQ(g.parameter_count(), 3217226);
}

TEST(Zoo, MlpFromSpec) {
  Graph g = zoo::build("mlp:784-256-128-10", {Shape{1, 28, 28}, std::nullopt});
  EXPECT_EQ(g.parameter_count(), 784 * 256 + 256 + 256 * 128 + 128 + 128 * 10 + 10);
}

TEST(Zoo, BadSpecsAreErrors) {
  EXPECT_THROW(zoo::build("mlp"), Error);
  EXPECT_THROW(zoo::build("mlp:784-x"), Error);
  EXPECT_THROW(zoo::build("mnist_cnn:3"), Error);
  EXPECT_THROW(zoo::build("resnet50"), Error);
  // An MLP whose first width does not match the data it is given.
  EXPECT_THROW(zoo::build("mlp:100-10", {Shape{1, 28, 28}, std::nullopt}), Error);
}
