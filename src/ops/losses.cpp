// Losses, reduced to a mean. Sums are accumulated in double over fixed blocks and the block
// sums added in order, so the loss does not depend on the number of threads. Labels come from
// data files, so a label outside the class range is a telar::Error naming the sample, checked
// before any gradient is written.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/parallel.hpp"
#include "ops/detail.hpp"
#include "ops/kernels.hpp"

namespace telar::ops {

namespace {

constexpr std::int64_t kBlockElements = 16384;

void check_labels(std::string_view loss, const std::int64_t* labels, std::int64_t batch,
                  std::int64_t classes) {
  for (std::int64_t n = 0; n < batch; ++n)
    if (labels[n] < 0 || labels[n] >= classes)
      fail("{}: label {} of sample {} is out of range for {} classes; labels must be in [0, {})",
           loss, labels[n], n, classes, classes);
}

// Sum over [0, count) of partial(begin, end) over blocks of `block` items.
template <typename Partial>
double blocked_sum(std::int64_t count, std::int64_t block, const Partial& partial) {
  block = std::max<std::int64_t>(block, 1);
  const std::int64_t blocks = (count + block - 1) / block;
  // Reused across calls (grows only): the training step allocates nothing. The workers
  // write through `out`, the calling thread's buffer, not their own thread_local copies.
  thread_local std::vector<double> buffer;
  buffer.assign(static_cast<std::size_t>(blocks), 0.0);
  std::vector<double>& sums = buffer;
  double* out = sums.data();
  parallel_for(0, blocks, blocks > 1, [&](std::int64_t b) {
    out[b] = partial(b * block, std::min(count, (b + 1) * block));
  });
  double total = 0.0;
  for (double s : sums) total += s;
  return total;
}

double stable_sigmoid(double x) {
  if (x >= 0.0) return 1.0 / (1.0 + std::exp(-x));
  const double e = std::exp(x);
  return e / (1.0 + e);
}

}  // namespace

float cross_entropy_with_logits(const Tensor& logits, const Tensor& labels, Tensor* dlogits,
                                float scale) {
  constexpr std::string_view kName = "cross_entropy_with_logits";
  detail::expect_rank(kName, "logits", logits, 2);
  const std::int64_t batch = logits.dim(0), classes = logits.dim(1);
  detail::expect_shape(kName, "labels", labels, {batch});
  if (dlogits) detail::expect_shape(kName, "dlogits", *dlogits, logits.shape());
  const std::int64_t* lp = labels.data<std::int64_t>();
  check_labels("CrossEntropy", lp, batch, classes);
  if (batch == 0) return std::numeric_limits<float>::quiet_NaN();  // mean of nothing (PyTorch)
  const float* xp = logits.f32();
  float* dp = dlogits ? dlogits->f32() : nullptr;
  const double grad_scale = static_cast<double>(scale) / static_cast<double>(batch);

  const double total =
      blocked_sum(batch, kBlockElements / std::max<std::int64_t>(classes, 1),
                  [&](std::int64_t begin, std::int64_t end) {
                    double sum_loss = 0.0;
                    for (std::int64_t n = begin; n < end; ++n) {
                      const float* x = xp + n * classes;
                      // log sum exp x = max + log sum exp (x - max): no overflow for large logits.
                      double max = -std::numeric_limits<double>::infinity();
                      for (std::int64_t c = 0; c < classes; ++c) max = std::max(max, double{x[c]});
                      double sum = 0.0;
                      for (std::int64_t c = 0; c < classes; ++c) sum += std::exp(x[c] - max);
                      const double log_sum = max + std::log(sum);
                      sum_loss += log_sum - x[lp[n]];
                      if (dp) {
                        // d/dx_c = softmax_c - [c == label], averaged over the batch.
                        float* d = dp + n * classes;
                        for (std::int64_t c = 0; c < classes; ++c)
                          d[c] = static_cast<float>(
                              (std::exp(x[c] - log_sum) - (c == lp[n] ? 1.0 : 0.0)) * grad_scale);
                      }
                    }
                    return sum_loss;
                  });
  return static_cast<float>(total / static_cast<double>(batch));
}

float bce_with_logits(const Tensor& logits, const Tensor& targets, Tensor* dlogits, float scale) {
  detail::expect_shape("bce_with_logits", "targets", targets, logits.shape());
  if (dlogits) detail::expect_shape("bce_with_logits", "dlogits", *dlogits, logits.shape());
  const std::int64_t count = logits.numel();
  if (count == 0) return std::numeric_limits<float>::quiet_NaN();
  const float* xp = logits.f32();
  const float* tp = targets.f32();
  float* dp = dlogits ? dlogits->f32() : nullptr;
  const double grad_scale = static_cast<double>(scale) / static_cast<double>(count);
  const double total =
      blocked_sum(count, kBlockElements, [&](std::int64_t begin, std::int64_t end) {
        double sum = 0.0;
        for (std::int64_t i = begin; i < end; ++i) {
          const double x = xp[i], t = tp[i];
          // max(x, 0) - x t + log(1 + exp(-|x|)): never exponentiates a positive number.
          sum += std::max(x, 0.0) - x * t + std::log1p(std::exp(-std::fabs(x)));
          if (dp) dp[i] = static_cast<float>((stable_sigmoid(x) - t) * grad_scale);
        }
        return sum;
      });
  return static_cast<float>(total / static_cast<double>(count));
}

float mse(const Tensor& prediction, const Tensor& target, Tensor* dprediction, float scale) {
  if (dprediction) detail::expect_shape("mse", "dprediction", *dprediction, prediction.shape());
  const std::int64_t count = prediction.numel();
  const float* pp = prediction.f32();
  float* dp = dprediction ? dprediction->f32() : nullptr;
  const bool labels = target.dtype() == DType::I64;
  std::int64_t classes = 1;
  const std::int64_t* lp = nullptr;
  const float* tp = nullptr;
  if (labels) {
    // Labels [B] stand for one-hot rows of the prediction's width.
    detail::expect_rank("mse", "prediction", prediction, 2);
    classes = prediction.dim(1);
    detail::expect_shape("mse", "labels", target, {prediction.dim(0)});
    lp = target.data<std::int64_t>();
    check_labels("MSE", lp, prediction.dim(0), classes);
  } else {
    detail::expect_shape("mse", "target", target, prediction.shape());
    tp = target.f32();
  }
  if (count == 0) return std::numeric_limits<float>::quiet_NaN();
  const double grad_scale = 2.0 * static_cast<double>(scale) / static_cast<double>(count);
  const double total =
      blocked_sum(count, kBlockElements, [&](std::int64_t begin, std::int64_t end) {
        double sum = 0.0;
        for (std::int64_t i = begin; i < end; ++i) {
          const double t = labels ? (i % classes == lp[i / classes] ? 1.0 : 0.0) : tp[i];
          const double diff = pp[i] - t;
          sum += diff * diff;
          if (dp) dp[i] = static_cast<float>(diff * grad_scale);
        }
        return sum;
      });
  return static_cast<float>(total / static_cast<double>(count));
}

}  // namespace telar::ops
