#pragma once
// NumPy's .npy files (format versions 1 to 3): float32 arrays in C order, so that a user can hand
// telar the same input as their framework and compare the outputs (`telar infer --inputs
// x.npy --outputs y.npy`). float64 files are read and converted to float32.
#include <filesystem>

#include "core/tensor.hpp"

namespace telar {

// Throws telar::Error naming the file and what is wrong (not an .npy file, Fortran order, a
// dtype other than float32/float64, a size that disagrees with the shape).
Tensor read_npy(const std::filesystem::path& file);
// Writes `t` (float32) as a version-1 .npy file, atomically.
void write_npy(const std::filesystem::path& file, const Tensor& t);

}  // namespace telar
