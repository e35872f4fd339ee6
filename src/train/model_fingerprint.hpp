#pragma once
// A 64-bit fingerprint of a model's structure, stored in checkpoints so that a checkpoint is
// never loaded into a different network. It covers every value (kind, name, dtype, shape),
// every node (op, name, attributes, wiring) and the graph's inputs and outputs; it leaves out
// the graph name and the initializers, which do not change what the weights mean.
//
// The hash (FNV-1a over a fixed little-endian encoding) is implemented here rather than taken
// from std::hash, so the same model gives the same fingerprint on every build and platform.
#include <cstdint>
#include <string>

#include "graph/graph.hpp"

namespace telar::train {

std::uint64_t model_fingerprint(const graph::Graph& graph);

// "0x" followed by 16 hex digits, as messages print fingerprints.
std::string fingerprint_str(std::uint64_t fingerprint);

}  // namespace telar::train
