#pragma once
// Hand-written CUDA kernels for the ops cuBLAS and cuDNN do not cover (or cover with other
// semantics than the reference kernels in src/ops, e.g. max-pool tie breaking). Plain C++
// declarations so host code compiled by g++ can call them; each launches on `stream` and
// returns without waiting. Shapes follow src/ops/kernels.hpp; all tensors are dense row-major.
#include <cuda_runtime.h>

#include <cstdint>

namespace telar::backend::cuda::kernels {

// The last launch error (configuration, missing kernel image), for the caller to check.
cudaError_t last_launch_error();

// y[i] += x[i]
void accumulate(cudaStream_t s, float* y, const float* x, std::int64_t n);
void copy(cudaStream_t s, float* y, const float* x, std::int64_t n);

// ---- element-wise activations: 0 ReLU, 1 ReLU6, 2 Sigmoid, 3 Tanh (ops::Activation order)
void activation_forward(cudaStream_t s, int kind, const float* x, float* y, std::int64_t n);
void activation_backward(cudaStream_t s, int kind, const float* x, const float* y, const float* dy,
                         float* dx, std::int64_t n);

// ---- Linear helpers: y[rows, cols] = bias[cols] broadcast; db[cols] = sum over rows of dy
void broadcast_rows(cudaStream_t s, float* y, const float* bias, std::int64_t rows,
                    std::int64_t cols);
void column_sums(cudaStream_t s, const float* dy, float* db, std::int64_t rows, std::int64_t cols);

// ---- Add, Concat (along axis a: `rows` the product of the axes before it, each input's `width`
// its axis a times the axes after it)
void add(cudaStream_t s, const float* a, const float* b, float* y, std::int64_t n);
// Copies x[rows, width] into columns [offset, offset + width) of y[rows, total] (and back).
void concat_part(cudaStream_t s, const float* x, float* y, std::int64_t rows, std::int64_t width,
                 std::int64_t offset, std::int64_t total);
void split_part(cudaStream_t s, const float* y, float* x, std::int64_t rows, std::int64_t width,
                std::int64_t offset, std::int64_t total);

// ---- Pooling. MaxPool2d matches ops::maxpool2d_* (first maximum in window order, padding
// excluded, i32 argmax within the plane).
struct PoolShape {
  std::int64_t planes, h, w, oh, ow, kh, kw, sh, sw, ph, pw;
};
void maxpool_forward(cudaStream_t s, const PoolShape& p, const float* x, float* y,
                     std::int32_t* argmax);
void maxpool_backward(cudaStream_t s, const PoolShape& p, const std::int32_t* argmax,
                      const float* dy, float* dx);
void global_avgpool_forward(cudaStream_t s, const float* x, float* y, std::int64_t planes,
                            std::int64_t plane);
void global_avgpool_backward(cudaStream_t s, const float* dy, float* dx, std::int64_t planes,
                             std::int64_t plane);

// ---- Dropout with the reference mask: element i keeps iff the ((i / 4096)-th stream derived
// from `seed`)'s (i % 4096)-th uniform draw is >= p (see ops/dropout.cpp).
void dropout_forward(cudaStream_t s, std::uint64_t seed, float p, const float* x, float* y,
                     std::uint8_t* mask, std::int64_t n);
void dropout_backward(cudaStream_t s, float p, const std::uint8_t* mask, const float* dy, float* dx,
                      std::int64_t n);

// ---- EmbeddingBag over CSR (offsets: start of each bag; the last ends at nnz). Indices are
// validated on the host before upload. Backward zeroes dweight and scatters with atomics.
void embedding_bag_forward(cudaStream_t s, const std::int64_t* indices, const std::int64_t* offsets,
                           const float* weight, const float* psw, float* y, std::int64_t bags,
                           std::int64_t nnz, std::int64_t dim, bool mean);
void embedding_bag_backward(cudaStream_t s, const std::int64_t* indices,
                            const std::int64_t* offsets, const float* psw, const float* dy,
                            float* dweight, std::int64_t rows, std::int64_t bags, std::int64_t nnz,
                            std::int64_t dim, bool mean);

// ---- DLRM dot interaction: `vectors` holds the T+1 device pointers (dense first); `dvectors`
// the gradient targets (null where none). Both arrays live in device memory.
void dot_interaction_forward(cudaStream_t s, const float* const* vectors, float* y,
                             std::int64_t batch, std::int64_t count, std::int64_t dim,
                             bool self_interaction);
void dot_interaction_backward(cudaStream_t s, const float* const* vectors, float* const* dvectors,
                              const float* dy, std::int64_t batch, std::int64_t count,
                              std::int64_t dim, bool self_interaction);

// ---- Losses (mean). Forward writes the loss to loss[0]; backward reads the upstream gradient
// from dloss[0] on the device (no host round trip). Sums in double like ops/losses.cpp.
void cross_entropy_forward(cudaStream_t s, const float* logits, const std::int64_t* labels,
                           float* loss, std::int64_t batch, std::int64_t classes);
void cross_entropy_backward(cudaStream_t s, const float* logits, const std::int64_t* labels,
                            const float* dloss, float* dlogits, std::int64_t batch,
                            std::int64_t classes);
void bce_forward(cudaStream_t s, const float* logits, const float* targets, float* loss,
                 std::int64_t n);
void bce_backward(cudaStream_t s, const float* logits, const float* targets, const float* dloss,
                  float* dlogits, std::int64_t n);
// labels (i64 [B], one-hot over `classes`) or targets (f32, same shape) — exactly one non-null.
void mse_forward(cudaStream_t s, const float* prediction, const float* targets,
                 const std::int64_t* labels, float* loss, std::int64_t n, std::int64_t classes);
void mse_backward(cudaStream_t s, const float* prediction, const float* targets,
                  const std::int64_t* labels, const float* dloss, float* dprediction,
                  std::int64_t n, std::int64_t classes);

}  // namespace telar::backend::cuda::kernels
