// Hand-written CUDA kernels (see kernels.hpp). Written for clarity and for agreement with the
// reference kernels in src/ops, not for peak speed: the heavy ops go to cuBLAS and cuDNN.
#include <cstdint>

#include "backend/cuda/kernels.hpp"

namespace telar::backend::cuda::kernels {

namespace {

constexpr int kThreads = 256;

unsigned grid_for(std::int64_t n) {
  const std::int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > 65535 * 8 ? 65535 * 8 : blocks));
}

#define TELAR_GRID_LOOP(i, n)                                                                      \
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)

// Sum of one double per thread over the block (blockDim.x == kThreads); valid in thread 0.
__device__ double block_sum(double v) {
  __shared__ double partial[kThreads];
  partial[threadIdx.x] = v;
  __syncthreads();
  for (int stride = kThreads / 2; stride > 0; stride /= 2) {
    if (static_cast<int>(threadIdx.x) < stride)
      partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  return partial[0];
}

// ---- the reference Rng (core/rng.cpp), on the device: xoshiro256** seeded through splitmix64.
__device__ std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
__device__ std::uint64_t rotl(std::uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}

struct DeviceRng {
  std::uint64_t s[4];
  __device__ explicit DeviceRng(std::uint64_t seed) {
    std::uint64_t x = seed;
    for (auto& word : s) {
      x += 0x9e3779b97f4a7c15ULL;
      word = mix64(x);
    }
  }
  __device__ static DeviceRng derive(std::uint64_t seed, std::uint64_t stream) {
    return DeviceRng(mix64(seed) ^ mix64(stream * 0x2545f4914f6cdd1dULL + 1));
  }
  __device__ std::uint64_t next() {
    const std::uint64_t result = rotl(s[1] * 5, 7) * 9;
    const std::uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
  }
  __device__ double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
};

constexpr std::int64_t kDropoutBlock = 4096;  // ops/dropout.cpp's kBlock

__device__ double stable_sigmoid(double x) {
  if (x >= 0.0) return 1.0 / (1.0 + exp(-x));
  const double e = exp(x);
  return e / (1.0 + e);
}

// ---------------------------------------------------------------------------------------------
__global__ void accumulate_k(float* y, const float* x, std::int64_t n) {
  TELAR_GRID_LOOP(i, n) y[i] += x[i];
}
__global__ void copy_k(float* y, const float* x, std::int64_t n) {
  TELAR_GRID_LOOP(i, n) y[i] = x[i];
}

__global__ void activation_forward_k(int kind, const float* x, float* y, std::int64_t n) {
  TELAR_GRID_LOOP(i, n) {
    const float v = x[i];
    switch (kind) {
      case 0:
        y[i] = v < 0.0f ? 0.0f : v;
        break;
      case 1:
        y[i] = v < 0.0f ? 0.0f : (v > 6.0f ? 6.0f : v);
        break;
      case 2:
        y[i] = v >= 0.0f ? 1.0f / (1.0f + expf(-v)) : expf(v) / (1.0f + expf(v));
        break;
      default:
        y[i] = tanhf(v);
        break;
    }
  }
}

__global__ void activation_backward_k(int kind, const float* x, const float* y, const float* dy,
                                      float* dx, std::int64_t n) {
  TELAR_GRID_LOOP(i, n) {
    switch (kind) {
      case 0:
        dx[i] = x[i] > 0.0f ? dy[i] : 0.0f;
        break;
      case 1:
        dx[i] = (x[i] > 0.0f && x[i] < 6.0f) ? dy[i] : 0.0f;
        break;
      case 2:
        dx[i] = dy[i] * y[i] * (1.0f - y[i]);
        break;
      default:
        dx[i] = dy[i] * (1.0f - y[i] * y[i]);
        break;
    }
  }
}

__global__ void broadcast_rows_k(float* y, const float* bias, std::int64_t rows,
                                 std::int64_t cols) {
  TELAR_GRID_LOOP(i, rows * cols) y[i] = bias[i % cols];
}

__global__ void column_sums_k(const float* dy, float* db, std::int64_t rows, std::int64_t cols) {
  TELAR_GRID_LOOP(c, cols) {
    double sum = 0.0;
    for (std::int64_t r = 0; r < rows; ++r) sum += dy[r * cols + c];
    db[c] = static_cast<float>(sum);
  }
}

__global__ void add_k(const float* a, const float* b, float* y, std::int64_t n) {
  TELAR_GRID_LOOP(i, n) y[i] = a[i] + b[i];
}

__global__ void concat_part_k(const float* x, float* y, std::int64_t rows, std::int64_t width,
                              std::int64_t offset, std::int64_t total) {
  TELAR_GRID_LOOP(i, rows * width) {
    const std::int64_t b = i / width, k = i % width;
    y[b * total + offset + k] = x[i];
  }
}

__global__ void split_part_k(const float* y, float* x, std::int64_t rows, std::int64_t width,
                             std::int64_t offset, std::int64_t total) {
  TELAR_GRID_LOOP(i, rows * width) {
    const std::int64_t b = i / width, k = i % width;
    x[i] = y[b * total + offset + k];
  }
}

__global__ void maxpool_forward_k(PoolShape p, const float* x, float* y, std::int32_t* argmax) {
  const std::int64_t out_plane = p.oh * p.ow;
  TELAR_GRID_LOOP(i, p.planes * out_plane) {
    const std::int64_t pl = i / out_plane, o = i % out_plane;
    const std::int64_t oh = o / p.ow, ow = o % p.ow;
    // The window of ops/pooling.cpp: in-bounds part only, padding counts as -inf.
    const std::int64_t hs = oh * p.sh - p.ph, ws = ow * p.sw - p.pw;
    const std::int64_t he = min(hs + p.kh, p.h + p.ph), we = min(ws + p.kw, p.w + p.pw);
    const std::int64_t h0 = max(hs, std::int64_t{0}), w0 = max(ws, std::int64_t{0});
    const std::int64_t h1 = max(min(he, p.h), h0), w1 = max(min(we, p.w), w0);
    const float* xs = x + pl * p.h * p.w;
    float best = -INFINITY;
    std::int64_t best_index = -1;
    for (std::int64_t ih = h0; ih < h1; ++ih)
      for (std::int64_t iw = w0; iw < w1; ++iw) {
        const float v = xs[ih * p.w + iw];
        if (best_index < 0 || v > best || (isnan(v) && !isnan(best))) {
          best = v;
          best_index = ih * p.w + iw;
        }
      }
    y[i] = best;
    argmax[i] = static_cast<std::int32_t>(best_index);
  }
}

__global__ void maxpool_backward_k(PoolShape p, const std::int32_t* argmax, const float* dy,
                                   float* dx) {
  const std::int64_t out_plane = p.oh * p.ow, in_plane = p.h * p.w;
  TELAR_GRID_LOOP(i, p.planes * out_plane) {
    const std::int64_t src = argmax[i];
    if (src >= 0 && src < in_plane) atomicAdd(dx + (i / out_plane) * in_plane + src, dy[i]);
  }
}

__global__ void global_avgpool_forward_k(const float* x, float* y, std::int64_t planes,
                                         std::int64_t plane) {
  TELAR_GRID_LOOP(pl, planes) {
    double sum = 0.0;
    for (std::int64_t k = 0; k < plane; ++k) sum += x[pl * plane + k];
    y[pl] = static_cast<float>(sum / static_cast<double>(plane));
  }
}

__global__ void global_avgpool_backward_k(const float* dy, float* dx, std::int64_t planes,
                                          std::int64_t plane) {
  TELAR_GRID_LOOP(i, planes * plane) dx[i] = dy[i / plane] / static_cast<float>(plane);
}

// One thread per 4096-element block, drawing in element order like the CPU's loop.
__global__ void dropout_forward_k(std::uint64_t seed, float p, const float* x, float* y,
                                  std::uint8_t* mask, std::int64_t n) {
  const std::int64_t blocks = (n + kDropoutBlock - 1) / kDropoutBlock;
  const float scale = 1.0f / (1.0f - p);
  const double drop = p;
  TELAR_GRID_LOOP(blk, blocks) {
    DeviceRng rng = DeviceRng::derive(seed, static_cast<std::uint64_t>(blk));
    const std::int64_t end = min(n, (blk + 1) * kDropoutBlock);
    for (std::int64_t i = blk * kDropoutBlock; i < end; ++i) {
      const bool keep = rng.uniform() >= drop;
      mask[i] = keep ? 1 : 0;
      y[i] = keep ? x[i] * scale : 0.0f;
    }
  }
}

__global__ void dropout_backward_k(float p, const std::uint8_t* mask, const float* dy, float* dx,
                                   std::int64_t n) {
  const float scale = 1.0f / (1.0f - p);
  TELAR_GRID_LOOP(i, n) dx[i] = mask[i] ? dy[i] * scale : 0.0f;
}

__device__ std::int64_t bag_end(const std::int64_t* offsets, std::int64_t b, std::int64_t bags,
                                std::int64_t nnz) {
  return b + 1 < bags ? offsets[b + 1] : nnz;
}

__global__ void embedding_bag_forward_k(const std::int64_t* indices, const std::int64_t* offsets,
                                        const float* weight, const float* psw, float* y,
                                        std::int64_t bags, std::int64_t nnz, std::int64_t dim,
                                        bool mean) {
  TELAR_GRID_LOOP(i, bags * dim) {
    const std::int64_t b = i / dim, d = i % dim;
    const std::int64_t begin = offsets[b], end = bag_end(offsets, b, bags, nnz);
    float sum = 0.0f;
    for (std::int64_t k = begin; k < end; ++k)
      sum += (psw ? psw[k] : 1.0f) * weight[indices[k] * dim + d];
    if (mean && end > begin) sum /= static_cast<float>(end - begin);
    y[i] = sum;
  }
}

__global__ void embedding_bag_backward_k(const std::int64_t* indices, const std::int64_t* offsets,
                                         const float* psw, const float* dy, float* dweight,
                                         std::int64_t bags, std::int64_t nnz, std::int64_t dim,
                                         bool mean) {
  TELAR_GRID_LOOP(i, bags * dim) {
    const std::int64_t b = i / dim, d = i % dim;
    const std::int64_t begin = offsets[b], end = bag_end(offsets, b, bags, nnz);
    if (end == begin) continue;
    const float bag_scale = mean ? 1.0f / static_cast<float>(end - begin) : 1.0f;
    const float g = dy[i];
    for (std::int64_t k = begin; k < end; ++k)
      atomicAdd(dweight + indices[k] * dim + d, (psw ? psw[k] : 1.0f) * bag_scale * g);
  }
}

// Pairs (i, j), j < i (j <= i with self interaction), row by row: DLRM's order.
__global__ void dot_interaction_forward_k(const float* const* v, float* y, std::int64_t batch,
                                          std::int64_t count, std::int64_t dim, int diag,
                                          std::int64_t width) {
  TELAR_GRID_LOOP(t, batch * width) {
    const std::int64_t n = t / width, col = t % width;
    if (col < dim) {
      y[t] = v[0][n * dim + col];
      continue;
    }
    std::int64_t at = dim;
    for (std::int64_t i = 0; i < count; ++i) {
      const std::int64_t row = i + diag;  // pairs in row i
      if (col < at + row) {
        const std::int64_t j = col - at;
        const float* a = v[i] + n * dim;
        const float* b = v[j] + n * dim;
        float acc = 0.0f;
        for (std::int64_t k = 0; k < dim; ++k) acc += a[k] * b[k];
        y[t] = acc;
        break;
      }
      at += row;
    }
  }
}

__global__ void dot_interaction_backward_k(const float* const* v, float* const* dv, const float* dy,
                                           std::int64_t batch, std::int64_t count, std::int64_t dim,
                                           int diag, std::int64_t width) {
  TELAR_GRID_LOOP(t, batch * count * dim) {
    const std::int64_t n = t / (count * dim), w = (t / dim) % count, k = t % dim;
    if (!dv[w]) continue;
    const float* dout = dy + n * width;
    float g = w == 0 ? dout[k] : 0.0f;
    std::int64_t at = dim;
    for (std::int64_t i = 0; i < count; ++i)
      for (std::int64_t j = 0; j < i + diag; ++j, ++at) {
        const float dz = dout[at];
        if (i == w) g += dz * v[j][n * dim + k];
        if (j == w) g += dz * v[i][n * dim + k];
      }
    dv[w][n * dim + k] = g;
  }
}

__global__ void cross_entropy_forward_k(const float* x, const std::int64_t* labels, float* loss,
                                        std::int64_t batch, std::int64_t classes) {
  double sum = 0.0;
  for (std::int64_t n = threadIdx.x; n < batch; n += blockDim.x) {
    const float* row = x + n * classes;
    double mx = -INFINITY;
    for (std::int64_t c = 0; c < classes; ++c) mx = fmax(mx, static_cast<double>(row[c]));
    double s = 0.0;
    for (std::int64_t c = 0; c < classes; ++c) s += exp(row[c] - mx);
    sum += mx + log(s) - row[labels[n]];
  }
  const double total = block_sum(sum);
  if (threadIdx.x == 0) loss[0] = static_cast<float>(total / static_cast<double>(batch));
}

__global__ void cross_entropy_backward_k(const float* x, const std::int64_t* labels,
                                         const float* dloss, float* dx, std::int64_t batch,
                                         std::int64_t classes) {
  const double grad_scale = static_cast<double>(dloss[0]) / static_cast<double>(batch);
  TELAR_GRID_LOOP(n, batch) {
    const float* row = x + n * classes;
    double mx = -INFINITY;
    for (std::int64_t c = 0; c < classes; ++c) mx = fmax(mx, static_cast<double>(row[c]));
    double s = 0.0;
    for (std::int64_t c = 0; c < classes; ++c) s += exp(row[c] - mx);
    const double log_sum = mx + log(s);
    for (std::int64_t c = 0; c < classes; ++c)
      dx[n * classes + c] =
          static_cast<float>((exp(row[c] - log_sum) - (c == labels[n] ? 1.0 : 0.0)) * grad_scale);
  }
}

__global__ void bce_forward_k(const float* x, const float* t, float* loss, std::int64_t n) {
  double sum = 0.0;
  for (std::int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    const double xi = x[i], ti = t[i];
    sum += fmax(xi, 0.0) - xi * ti + log1p(exp(-fabs(xi)));
  }
  const double total = block_sum(sum);
  if (threadIdx.x == 0) loss[0] = static_cast<float>(total / static_cast<double>(n));
}

__global__ void bce_backward_k(const float* x, const float* t, const float* dloss, float* dx,
                               std::int64_t n) {
  const double grad_scale = static_cast<double>(dloss[0]) / static_cast<double>(n);
  TELAR_GRID_LOOP(i, n) dx[i] = static_cast<float>((stable_sigmoid(x[i]) - t[i]) * grad_scale);
}

__device__ double mse_target(const float* targets, const std::int64_t* labels, std::int64_t i,
                             std::int64_t classes) {
  if (targets) return targets[i];
  return i % classes == labels[i / classes] ? 1.0 : 0.0;
}

__global__ void mse_forward_k(const float* p, const float* targets, const std::int64_t* labels,
                              float* loss, std::int64_t n, std::int64_t classes) {
  double sum = 0.0;
  for (std::int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    const double diff = p[i] - mse_target(targets, labels, i, classes);
    sum += diff * diff;
  }
  const double total = block_sum(sum);
  if (threadIdx.x == 0) loss[0] = static_cast<float>(total / static_cast<double>(n));
}

__global__ void mse_backward_k(const float* p, const float* targets, const std::int64_t* labels,
                               const float* dloss, float* dp, std::int64_t n,
                               std::int64_t classes) {
  const double grad_scale = 2.0 * static_cast<double>(dloss[0]) / static_cast<double>(n);
  TELAR_GRID_LOOP(i, n)
  dp[i] = static_cast<float>((p[i] - mse_target(targets, labels, i, classes)) * grad_scale);
}

}  // namespace

cudaError_t last_launch_error() {
  return cudaGetLastError();
}

void accumulate(cudaStream_t s, float* y, const float* x, std::int64_t n) {
  if (n > 0) accumulate_k<<<grid_for(n), kThreads, 0, s>>>(y, x, n);
}
void copy(cudaStream_t s, float* y, const float* x, std::int64_t n) {
  if (n > 0) copy_k<<<grid_for(n), kThreads, 0, s>>>(y, x, n);
}
void activation_forward(cudaStream_t s, int kind, const float* x, float* y, std::int64_t n) {
  if (n > 0) activation_forward_k<<<grid_for(n), kThreads, 0, s>>>(kind, x, y, n);
}
void activation_backward(cudaStream_t s, int kind, const float* x, const float* y, const float* dy,
                         float* dx, std::int64_t n) {
  if (n > 0) activation_backward_k<<<grid_for(n), kThreads, 0, s>>>(kind, x, y, dy, dx, n);
}
void broadcast_rows(cudaStream_t s, float* y, const float* bias, std::int64_t rows,
                    std::int64_t cols) {
  if (rows * cols > 0)
    broadcast_rows_k<<<grid_for(rows * cols), kThreads, 0, s>>>(y, bias, rows, cols);
}
void column_sums(cudaStream_t s, const float* dy, float* db, std::int64_t rows, std::int64_t cols) {
  if (cols > 0) column_sums_k<<<grid_for(cols), kThreads, 0, s>>>(dy, db, rows, cols);
}
void add(cudaStream_t s, const float* a, const float* b, float* y, std::int64_t n) {
  if (n > 0) add_k<<<grid_for(n), kThreads, 0, s>>>(a, b, y, n);
}
void concat_part(cudaStream_t s, const float* x, float* y, std::int64_t rows, std::int64_t width,
                 std::int64_t offset, std::int64_t total) {
  if (rows * width > 0)
    concat_part_k<<<grid_for(rows * width), kThreads, 0, s>>>(x, y, rows, width, offset, total);
}
void split_part(cudaStream_t s, const float* y, float* x, std::int64_t rows, std::int64_t width,
                std::int64_t offset, std::int64_t total) {
  if (rows * width > 0)
    split_part_k<<<grid_for(rows * width), kThreads, 0, s>>>(y, x, rows, width, offset, total);
}
void maxpool_forward(cudaStream_t s, const PoolShape& p, const float* x, float* y,
                     std::int32_t* argmax) {
  const std::int64_t n = p.planes * p.oh * p.ow;
  if (n > 0) maxpool_forward_k<<<grid_for(n), kThreads, 0, s>>>(p, x, y, argmax);
}
void maxpool_backward(cudaStream_t s, const PoolShape& p, const std::int32_t* argmax,
                      const float* dy, float* dx) {
  cudaMemsetAsync(dx, 0, static_cast<std::size_t>(p.planes * p.h * p.w) * sizeof(float), s);
  const std::int64_t n = p.planes * p.oh * p.ow;
  if (n > 0) maxpool_backward_k<<<grid_for(n), kThreads, 0, s>>>(p, argmax, dy, dx);
}
void global_avgpool_forward(cudaStream_t s, const float* x, float* y, std::int64_t planes,
                            std::int64_t plane) {
  if (planes > 0)
    global_avgpool_forward_k<<<grid_for(planes), kThreads, 0, s>>>(x, y, planes, plane);
}
void global_avgpool_backward(cudaStream_t s, const float* dy, float* dx, std::int64_t planes,
                             std::int64_t plane) {
  if (planes * plane > 0)
    global_avgpool_backward_k<<<grid_for(planes * plane), kThreads, 0, s>>>(dy, dx, planes, plane);
}
void dropout_forward(cudaStream_t s, std::uint64_t seed, float p, const float* x, float* y,
                     std::uint8_t* mask, std::int64_t n) {
  const std::int64_t blocks = (n + kDropoutBlock - 1) / kDropoutBlock;
  if (n > 0) dropout_forward_k<<<grid_for(blocks), kThreads, 0, s>>>(seed, p, x, y, mask, n);
}
void dropout_backward(cudaStream_t s, float p, const std::uint8_t* mask, const float* dy, float* dx,
                      std::int64_t n) {
  if (n > 0) dropout_backward_k<<<grid_for(n), kThreads, 0, s>>>(p, mask, dy, dx, n);
}
void embedding_bag_forward(cudaStream_t s, const std::int64_t* indices, const std::int64_t* offsets,
                           const float* weight, const float* psw, float* y, std::int64_t bags,
                           std::int64_t nnz, std::int64_t dim, bool mean) {
  if (bags * dim > 0)
    embedding_bag_forward_k<<<grid_for(bags * dim), kThreads, 0, s>>>(indices, offsets, weight, psw,
                                                                      y, bags, nnz, dim, mean);
}
void embedding_bag_backward(cudaStream_t s, const std::int64_t* indices,
                            const std::int64_t* offsets, const float* psw, const float* dy,
                            float* dweight, std::int64_t rows, std::int64_t bags, std::int64_t nnz,
                            std::int64_t dim, bool mean) {
  cudaMemsetAsync(dweight, 0, static_cast<std::size_t>(rows * dim) * sizeof(float), s);
  if (bags * dim > 0)
    embedding_bag_backward_k<<<grid_for(bags * dim), kThreads, 0, s>>>(
        indices, offsets, psw, dy, dweight, bags, nnz, dim, mean);
}
void dot_interaction_forward(cudaStream_t s, const float* const* vectors, float* y,
                             std::int64_t batch, std::int64_t count, std::int64_t dim,
                             bool self_interaction) {
  const int diag = self_interaction ? 1 : 0;
  const std::int64_t pairs = self_interaction ? count * (count + 1) / 2 : count * (count - 1) / 2;
  const std::int64_t width = dim + pairs;
  if (batch * width > 0)
    dot_interaction_forward_k<<<grid_for(batch * width), kThreads, 0, s>>>(vectors, y, batch, count,
                                                                           dim, diag, width);
}
void dot_interaction_backward(cudaStream_t s, const float* const* vectors, float* const* dvectors,
                              const float* dy, std::int64_t batch, std::int64_t count,
                              std::int64_t dim, bool self_interaction) {
  const int diag = self_interaction ? 1 : 0;
  const std::int64_t pairs = self_interaction ? count * (count + 1) / 2 : count * (count - 1) / 2;
  const std::int64_t n = batch * count * dim;
  if (n > 0)
    dot_interaction_backward_k<<<grid_for(n), kThreads, 0, s>>>(vectors, dvectors, dy, batch, count,
                                                                dim, diag, dim + pairs);
}
void cross_entropy_forward(cudaStream_t s, const float* logits, const std::int64_t* labels,
                           float* loss, std::int64_t batch, std::int64_t classes) {
  cross_entropy_forward_k<<<1, kThreads, 0, s>>>(logits, labels, loss, batch, classes);
}
void cross_entropy_backward(cudaStream_t s, const float* logits, const std::int64_t* labels,
                            const float* dloss, float* dlogits, std::int64_t batch,
                            std::int64_t classes) {
  if (batch > 0)
    cross_entropy_backward_k<<<grid_for(batch), kThreads, 0, s>>>(logits, labels, dloss, dlogits,
                                                                  batch, classes);
}
void bce_forward(cudaStream_t s, const float* logits, const float* targets, float* loss,
                 std::int64_t n) {
  bce_forward_k<<<1, kThreads, 0, s>>>(logits, targets, loss, n);
}
void bce_backward(cudaStream_t s, const float* logits, const float* targets, const float* dloss,
                  float* dlogits, std::int64_t n) {
  if (n > 0) bce_backward_k<<<grid_for(n), kThreads, 0, s>>>(logits, targets, dloss, dlogits, n);
}
void mse_forward(cudaStream_t s, const float* prediction, const float* targets,
                 const std::int64_t* labels, float* loss, std::int64_t n, std::int64_t classes) {
  mse_forward_k<<<1, kThreads, 0, s>>>(prediction, targets, labels, loss, n, classes);
}
void mse_backward(cudaStream_t s, const float* prediction, const float* targets,
                  const std::int64_t* labels, const float* dloss, float* dprediction,
                  std::int64_t n, std::int64_t classes) {
  if (n > 0)
    mse_backward_k<<<grid_for(n), kThreads, 0, s>>>(prediction, targets, labels, dloss, dprediction,
                                                    n, classes);
}

}  // namespace telar::backend::cuda::kernels
