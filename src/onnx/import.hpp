#pragma once
// ONNX import: a model file written by PyTorch's exporter (or any other) becomes a telar Graph
// with its weights, parsed with Debian's ONNX protobuf classes (libonnx-dev). Opsets 9 to 18.
// Everything is checked before anything runs: an op, attribute or input telar cannot represent
// is one telar::Error naming the node, its op type and what is wrong.
//
// The first dimension of the model's input is the batch (whatever size it was exported with);
// the others must be fixed in the file or given with ImportOptions::input. Constant subgraphs
// (Constant, Shape of a known shape, Gather, Unsqueeze, Squeeze, Concat, Cast over constants)
// are folded while importing. docs/onnx.md lists the supported ops.
//
// Every parameter also gets the initializer PyTorch would give its layer (uniform within
// 1/sqrt(fan-in) for convolution and linear weights and biases, ones and zeros for batch norm,
// the identity for a constant operand of Add/Sub/Mul/Div), which ParameterSet::initialize uses
// to train the architecture from scratch (--init random).
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/shape.hpp"
#include "graph/graph.hpp"
#include "graph/parameters.hpp"

namespace telar::onnx {

struct ImportOptions {
  std::optional<Shape> input;  // C x H x W (without the batch) for a file whose shape is dynamic
  // The shape of the samples the model will be fed (a data set's), when it differs from its
  // input: the graph then takes `feed` and fits it to the input first (see check_feed).
  std::optional<Shape> feed;
  // Where `input` is not given: the sizes of the dimensions the file leaves dynamic (those of
  // the samples a command was handed, e.g. infer's --inputs); the file's fixed ones stay.
  std::optional<Shape> dynamic_size;
};

// Samples of `feed` (C x H x W) fitted to a model input of `input`: channels replicated (from
// one channel) and the image centred with zero padding (docs/onnx.md). Throws telar::Error when
// they cannot be fitted (more channels or a larger image than the model takes).
void check_feed(const Shape& feed, const Shape& input);

struct ImportedModel {
  graph::Graph graph;
  graph::ParameterSet weights;  // every parameter and buffer, from the file's initializers
  int opset = 0;
  std::string producer;  // e.g. "pytorch 1.13.1"
  // Buffers holding constants of the computation (a Constant node's value as an operand, a
  // layer norm's epsilon): not trained, and kept when the weights are initialised afresh.
  std::vector<graph::ValueId> constants;
};

inline constexpr int kMinOpset = 9;
inline constexpr int kMaxOpset = 18;

// True for a model argument that names an ONNX file rather than a zoo model ("x.onnx").
bool is_onnx_file(std::string_view model);

ImportedModel import_model(const std::filesystem::path& file, const ImportOptions& options = {});

}  // namespace telar::onnx
