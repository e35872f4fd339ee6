// Concat along axis 1 (any rank >= 2: each input contributes a contiguous run of
// dim(1) * inner elements per sample). Concat moves bytes, so it works for any dtype.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "core/parallel.hpp"
#include "ops/detail.hpp"
#include "ops/kernels.hpp"

namespace telar::ops {

namespace {

struct ConcatLayout {
  std::int64_t batch = 0;
  std::int64_t out_row = 0;  // elements per sample in y
  std::size_t elem = 0;      // bytes per element
};

// Checks that every part agrees with y except along axis 1, and that the widths add up.
template <typename Part>
ConcatLayout layout(std::string_view kernel, std::span<Part> parts, const Tensor& y) {
  if (y.rank() < 2)
    fail("internal: {}: output {} must have rank >= 2", kernel, shape_str(y.shape()));
  ConcatLayout l{y.dim(0), y.numel() / std::max<std::int64_t>(y.dim(0), 1), dtype_size(y.dtype())};
  std::int64_t width = 0;
  for (std::size_t k = 0; k < parts.size(); ++k) {
    const Tensor& t = parts[k];
    // Every slot must be allocated: a part's width fixes where the next one starts. (Backward
    // callers that need no gradient for an input pass a scratch tensor.)
    if (!t.defined()) fail("internal: {}: part {} is not allocated", kernel, k);
    Shape expected = y.shape();
    expected[1] = t.rank() >= 2 ? t.dim(1) : -1;
    if (t.shape() != expected || t.dtype() != y.dtype())
      fail("internal: {}: part {} is {} {}, incompatible with output {} {}", kernel, k,
           dtype_name(t.dtype()), shape_str(t.shape()), dtype_name(y.dtype()),
           shape_str(y.shape()));
    width += t.dim(1);
  }
  if (width != y.dim(1))
    fail("internal: {}: parts add up to width {}, output has {}", kernel, width, y.dim(1));
  return l;
}

}  // namespace

void concat_forward(std::span<const Tensor> xs, Tensor& y) {
  const ConcatLayout l = layout("concat_forward", xs, y);
  auto* yp = static_cast<char*>(y.raw());
  const std::size_t out_row_bytes = static_cast<std::size_t>(l.out_row) * l.elem;
  parallel_for(0, l.batch, y.nbytes() > (1 << 20), [&](std::int64_t n) {
    std::size_t at = static_cast<std::size_t>(n) * out_row_bytes;
    for (const Tensor& x : xs) {
      const std::size_t row = x.nbytes() / static_cast<std::size_t>(l.batch);
      std::memcpy(yp + at, static_cast<const char*>(x.raw()) + static_cast<std::size_t>(n) * row,
                  row);
      at += row;
    }
  });
}

void concat_backward(const Tensor& dy, std::span<Tensor> dxs) {
  const ConcatLayout l = layout("concat_backward", dxs, dy);
  const auto* dyp = static_cast<const char*>(dy.raw());
  const std::size_t in_row_bytes = static_cast<std::size_t>(l.out_row) * l.elem;
  parallel_for(0, l.batch, dy.nbytes() > (1 << 20), [&](std::int64_t n) {
    std::size_t at = static_cast<std::size_t>(n) * in_row_bytes;
    for (Tensor& dx : dxs) {
      const std::size_t row = dx.nbytes() / static_cast<std::size_t>(l.batch);
      std::memcpy(static_cast<char*>(dx.raw()) + static_cast<std::size_t>(n) * row, dyp + at, row);
      at += row;
    }
  });
}

}  // namespace telar::ops
