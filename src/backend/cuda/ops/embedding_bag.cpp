// EmbeddingBag over CSR bags (sum or mean, optional per-sample weights).
#include "backend/cuda/ops/op_kernels.hpp"

namespace telar::backend::cuda {

namespace {

// Indices and offsets come from data files: checked on the host (the caller's tensors) before
// any kernel reads them, with the reference kernel's messages.
void validate_bags(const graph::EmbeddingBagAttrs& a, const Tensor& indices, const Tensor& offsets,
                   const Tensor* psw) {
  const std::int64_t bags = offsets.numel(), nnz = indices.numel();
  const std::int64_t* off = offsets.data<std::int64_t>();
  const std::int64_t* idx = indices.data<std::int64_t>();
  if (psw && psw->numel() != nnz)
    fail("EmbeddingBag: {} per-sample weights for {} indices; give one weight per index",
         psw->numel(), nnz);
  if (bags > 0 && off[0] != 0)
    fail(
        "EmbeddingBag: offsets[0] is {}, but the first bag must start at index 0 (offsets are "
        "the start of each bag within the {} indices)",
        off[0], nnz);
  for (std::int64_t b = 0; b + 1 < bags; ++b)
    if (off[b + 1] < off[b])
      fail("EmbeddingBag: offsets must be non-decreasing, but bag {} starts at {} and bag {} at {}",
           b, off[b], b + 1, off[b + 1]);
  if (bags > 0 && off[bags - 1] > nnz)
    fail("EmbeddingBag: the last bag ({}) starts at offset {}, past the end of the {} indices",
         bags - 1, off[bags - 1], nnz);
  for (std::int64_t k = 0; k < nnz; ++k)
    if (idx[k] < 0 || idx[k] >= a.num_embeddings)
      fail(
          "EmbeddingBag: index {} (position {}) is out of range for a table of {} rows; indices "
          "must be in [0, {})",
          idx[k], k, a.num_embeddings, a.num_embeddings);
}

class EmbeddingBag final : public Kernel {
 public:
  explicit EmbeddingBag(KernelIO io) : Kernel(std::move(io)) { define_output(); }
  void forward(bool, std::uint64_t) override {
    const auto& a = node().attr<graph::EmbeddingBagAttrs>();
    if (in(0).host && in(1).host)
      validate_bags(a, *in(0).host, *in(1).host, psw() && in(3).host ? in(3).host : nullptr);
    kernels::embedding_bag_forward(stream(), in(0).i64(), in(1).i64(), in(2).f32(),
                                   psw() ? psw()->f32() : nullptr, out().f32(), in(1).numel,
                                   in(0).numel, a.dim, a.mode == graph::EmbeddingBagMode::Mean);
    check_launch("embedding bag forward");
  }
  void backward() override {
    if (!grad_of(2)) return;
    const auto& a = node().attr<graph::EmbeddingBagAttrs>();
    kernels::embedding_bag_backward(
        stream(), in(0).i64(), in(1).i64(), psw() ? psw()->f32() : nullptr, out().grad, grad_of(2),
        a.num_embeddings, in(1).numel, in(0).numel, a.dim, a.mode == graph::EmbeddingBagMode::Mean);
    check_launch("embedding bag backward");
  }

 private:
  const Slot* psw() const { return io_.inputs.size() > 3 ? &in(3) : nullptr; }
};

}  // namespace

const OpKernels op_kernel_defs::kEmbeddingBag{kernel_of<EmbeddingBag>};

}  // namespace telar::backend::cuda
