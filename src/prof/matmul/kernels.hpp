#pragma once
// Square double-precision matrix products C = A·B (row-major, n×n), the seed's validation
// workload.
#include <cstdint>

namespace telar::prof::matmul {

void naive_o0(const double* a, const double* b, double* c, std::int64_t n);
void naive_o3(const double* a, const double* b, double* c, std::int64_t n);
void blas_dgemm(const double* a, const double* b, double* c, std::int64_t n);

}  // namespace telar::prof::matmul
