#pragma once
#include <memory>

#include "backend/backend.hpp"

namespace telar::backend::cpu {

// "cpu" (oneDNN where it has a primitive, reference kernels elsewhere), "cpu:ref" (reference
// kernels only), options threads=N.
std::unique_ptr<Executable> compile(const BackendSpec& spec, const graph::Graph& graph,
                                    graph::ParameterSet& params, const CompileOptions& options);

}  // namespace telar::backend::cpu
