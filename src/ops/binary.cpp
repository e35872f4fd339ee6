// Add, Sub, Mul and Div with NumPy broadcasting. The output is walked row by row (its last
// dimension); each operand's offset follows from its strides, 0 along a dimension it is
// stretched on. The backward accumulates into the operands' gradients, so it runs serially.
#include <array>
#include <cstdint>

#include "core/parallel.hpp"
#include "ops/detail.hpp"
#include "ops/kernels.hpp"

namespace telar::ops {

namespace {

constexpr std::size_t kMaxRank = 8;

// The output's dimensions and each operand's strides over them.
struct Walk {
  std::size_t rank = 0;
  std::array<std::int64_t, kMaxRank> dims{}, stride_a{}, stride_b{};
  std::int64_t inner() const { return rank ? dims[rank - 1] : 1; }
  std::int64_t rows(std::int64_t numel) const { return inner() ? numel / inner() : 0; }
  // Offsets of a and b at the start of output row `row`.
  std::pair<std::int64_t, std::int64_t> offsets(std::int64_t row) const {
    std::int64_t oa = 0, ob = 0;
    for (std::size_t k = rank - 1; k-- > 0;) {
      const std::int64_t c = row % dims[k];
      row /= dims[k];
      oa += c * stride_a[k];
      ob += c * stride_b[k];
    }
    return {oa, ob};
  }
};

void strides_of(const Shape& s, const Shape& out, std::array<std::int64_t, kMaxRank>& stride) {
  const std::size_t skip = out.size() - s.size();
  std::int64_t step = 1;
  for (std::size_t k = out.size(); k-- > 0;) {
    const std::int64_t d = k < skip ? 1 : s[k - skip];
    stride[k] = d == 1 && out[k] != 1 ? 0 : step;
    step *= d;
  }
}

Walk walk(std::string_view kernel, const Tensor& a, const Tensor& b, const Tensor& y) {
  const auto shape = broadcast_shape(a.shape(), b.shape());
  if (!shape) fail("internal: {}: {} and {} do not broadcast", kernel, shape_str(a.shape()),
                   shape_str(b.shape()));
  detail::expect_shape(kernel, "y", y, *shape);
  if (shape->size() > kMaxRank)
    fail("{}: rank {} is above the {} dimensions the kernel handles", kernel, shape->size(),
         kMaxRank);
  Walk w;
  w.rank = shape->size();
  std::copy(shape->begin(), shape->end(), w.dims.begin());
  strides_of(a.shape(), *shape, w.stride_a);
  strides_of(b.shape(), *shape, w.stride_b);
  return w;
}

template <typename F>
void forward_rows(const Walk& w, const float* ap, const float* bp, float* yp, std::int64_t numel,
                  F f) {
  const std::int64_t inner = w.inner(), sa = w.stride_a[w.rank - 1], sb = w.stride_b[w.rank - 1];
  parallel_for(0, w.rows(numel), numel > (1 << 16), [&](std::int64_t row) {
    const auto [oa, ob] = w.offsets(row);
    float* out = yp + row * inner;
    for (std::int64_t i = 0; i < inner; ++i) out[i] = f(ap[oa + i * sa], bp[ob + i * sb]);
  });
}

}  // namespace

void binary_forward(Binary op, const Tensor& a, const Tensor& b, Tensor& y) {
  const Walk w = walk("binary_forward", a, b, y);
  const float *ap = a.f32(), *bp = b.f32();
  float* yp = y.f32();
  const std::int64_t n = y.numel();
  switch (op) {
    case Binary::Add: return forward_rows(w, ap, bp, yp, n, [](float u, float v) { return u + v; });
    case Binary::Sub: return forward_rows(w, ap, bp, yp, n, [](float u, float v) { return u - v; });
    case Binary::Mul: return forward_rows(w, ap, bp, yp, n, [](float u, float v) { return u * v; });
    case Binary::Div: return forward_rows(w, ap, bp, yp, n, [](float u, float v) { return u / v; });
  }
  fail("internal: binary_forward: unknown op {}", static_cast<int>(op));
}

void binary_backward(Binary op, const Tensor& a, const Tensor& b, const Tensor& dy, Tensor* da,
                     Tensor* db) {
  const Walk w = walk("binary_backward", a, b, dy);
  if (da) detail::expect_shape("binary_backward", "da", *da, a.shape());
  if (db) detail::expect_shape("binary_backward", "db", *db, b.shape());
  if (da) da->zero();
  if (db) db->zero();
  const float *ap = a.f32(), *bp = b.f32(), *gp = dy.f32();
  float* dap = da ? da->f32() : nullptr;
  float* dbp = db ? db->f32() : nullptr;
  const std::int64_t inner = w.inner(), sa = w.stride_a[w.rank - 1], sb = w.stride_b[w.rank - 1];
  for (std::int64_t row = 0; row < w.rows(dy.numel()); ++row) {
    const auto [oa, ob] = w.offsets(row);
    const float* g = gp + row * inner;
    for (std::int64_t i = 0; i < inner; ++i) {
      const std::int64_t ia = oa + i * sa, ib = ob + i * sb;
      float ga = g[i], gb = g[i];
      switch (op) {
        case Binary::Add: break;
        case Binary::Sub: gb = -g[i]; break;
        case Binary::Mul:
          ga = g[i] * bp[ib];
          gb = g[i] * ap[ia];
          break;
        case Binary::Div:
          ga = g[i] / bp[ib];
          gb = -g[i] * ap[ia] / (bp[ib] * bp[ib]);
          break;
      }
      if (dap) dap[ia] += ga;
      if (dbp) dbp[ib] += gb;
    }
  }
}

}  // namespace telar::ops
