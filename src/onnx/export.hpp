#pragma once
// ONNX export: a telar Graph with its weights becomes an ONNX model file (Debian's libonnx
// protobuf classes), so that a model telar trained or adapted runs in any ONNX runtime. Each
// telar op becomes the standard ONNX op(s) of the same meaning; the batch dimension is a
// dynamic "batch" dimension. The model is exported for inference: BatchNorm with its running
// statistics, Dropout left out.
//
// A graph compiled for inference (optimize/inference.hpp) exports too: a Conv2d's or Linear's
// fused post-ops become the Add and activation they stand for. Given int8 encodings (a model
// quantized by telar quantize, by value name in that graph), it is written in ONNX's QDQ form:
// each encoded value followed by QuantizeLinear and DequantizeLinear with its scale (u8 or s8,
// zero point 0), each Conv's and Gemm's weights as int8 with one scale per output channel and
// its bias as int32 (scale input x weight), behind DequantizeLinear: what ONNX Runtime and other
// runtimes run as int8 convolutions.
//
// An op ONNX has no counterpart for here (EmbeddingBag, DLRM's interaction, the losses) is one
// telar::Error naming the node; nothing is written then.
#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "graph/graph.hpp"
#include "graph/int8_encoding.hpp"
#include "graph/parameters.hpp"

namespace telar::onnx {

inline constexpr int kDefaultExportOpset = 13;
// The opsets export writes: 13 (Softmax over the last axis, Split/Squeeze axes as inputs) to 18.
inline constexpr int kMinExportOpset = 13;

struct ExportOptions {
  int opset = kDefaultExportOpset;
  std::string producer_version;  // written as producer "telar" with this version
  // Empty: a float model. Else the int8 encodings of the graph's values by name (QDQ above),
  // and the nodes kept in fp32 (they read float values and keep float weights).
  std::map<std::string, graph::Int8Encoding> int8;
  std::set<std::string> fp32_nodes;
};

// Writes `graph` (without a loss) with `weights` to `file` (through a temporary file, renamed
// when complete). Throws telar::Error for an op that cannot be exported or an opset outside
// kMinExportOpset..kMaxOpset.
void export_model(const graph::Graph& graph, const graph::ParameterSet& weights,
                  const std::filesystem::path& file, const ExportOptions& options = {});

}  // namespace telar::onnx
