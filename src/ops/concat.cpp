// Concat along any axis after the batch (any rank >= 2): for each index of the axes before it,
// each input contributes a contiguous run of dim(axis) * inner elements, where inner is the
// product of the axes after it. Concat moves bytes, so it works for any dtype.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "core/parallel.hpp"
#include "ops/detail.hpp"
#include "ops/kernels.hpp"

namespace telar::ops {

namespace {

struct ConcatLayout {
  std::int64_t outer = 0;   // the product of the axes before `axis` (the batch's included)
  std::size_t out_run = 0;  // bytes of y per outer index
};

// Checks that every part agrees with y except along `axis`, and that the widths add up.
template <typename Part>
ConcatLayout layout(std::string_view kernel, std::int64_t axis, std::span<Part> parts,
                    const Tensor& y) {
  if (axis < 1 || axis >= y.rank())
    fail("internal: {}: axis {} of output {} (rank >= 2, an axis after the batch)", kernel, axis,
         shape_str(y.shape()));
  std::int64_t outer = 1;
  for (std::int64_t d = 0; d < axis; ++d) outer *= y.dim(d);
  std::int64_t width = 0;
  for (std::size_t k = 0; k < parts.size(); ++k) {
    const Tensor& t = parts[k];
    // Every slot must be allocated: a part's width fixes where the next one starts. (Backward
    // callers that need no gradient for an input pass a scratch tensor.)
    if (!t.defined()) fail("internal: {}: part {} is not allocated", kernel, k);
    Shape expected = y.shape();
    expected[static_cast<std::size_t>(axis)] = t.rank() == y.rank() ? t.dim(axis) : -1;
    if (t.shape() != expected || t.dtype() != y.dtype())
      fail("internal: {}: part {} is {} {}, incompatible with output {} {} along axis {}", kernel,
           k, dtype_name(t.dtype()), shape_str(t.shape()), dtype_name(y.dtype()),
           shape_str(y.shape()), axis);
    width += t.dim(axis);
  }
  if (width != y.dim(axis))
    fail("internal: {}: parts add up to width {}, output has {}", kernel, width, y.dim(axis));
  return {outer, y.nbytes() / static_cast<std::size_t>(std::max<std::int64_t>(outer, 1))};
}

}  // namespace

void concat_forward(std::int64_t axis, std::span<const Tensor> xs, Tensor& y) {
  const ConcatLayout l = layout("concat_forward", axis, xs, y);
  auto* yp = static_cast<char*>(y.raw());
  parallel_for(0, l.outer, y.nbytes() > (1 << 20), [&](std::int64_t o) {
    std::size_t at = static_cast<std::size_t>(o) * l.out_run;
    for (const Tensor& x : xs) {
      const std::size_t run = x.nbytes() / static_cast<std::size_t>(l.outer);
      std::memcpy(yp + at, static_cast<const char*>(x.raw()) + static_cast<std::size_t>(o) * run,
                  run);
      at += run;
    }
  });
}

void concat_backward(std::int64_t axis, const Tensor& dy, std::span<Tensor> dxs) {
  const ConcatLayout l = layout("concat_backward", axis, dxs, dy);
  const auto* dyp = static_cast<const char*>(dy.raw());
  parallel_for(0, l.outer, dy.nbytes() > (1 << 20), [&](std::int64_t o) {
    std::size_t at = static_cast<std::size_t>(o) * l.out_run;
    for (Tensor& dx : dxs) {
      const std::size_t run = dx.nbytes() / static_cast<std::size_t>(l.outer);
      std::memcpy(static_cast<char*>(dx.raw()) + static_cast<std::size_t>(o) * run, dyp + at, run);
      at += run;
    }
  });
}

}  // namespace telar::ops
