#pragma once
// Operand generation and the reference kernel the simulated outputs are checked against.
#include <cstdint>
#include <vector>

#include "sim/engine.hpp"

namespace telar::sim {

// Small integer values (0..9, as STONNE's driver draws them) from a seed: every partial sum is
// an exactly representable float, so the simulated output must equal the reference exactly.
DenseData make_operands(const DenseOp& op, std::uint64_t seed);

// Direct convolution (grouped, strided) in telar's layouts; for FC/DenseGEMM the M×N product.
std::vector<float> reference_output(const DenseOp& op, const DenseData& data);

}  // namespace telar::sim
