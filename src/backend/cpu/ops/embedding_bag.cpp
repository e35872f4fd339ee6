// EmbeddingBag in a plan: sums without weights on the fast kernels of embedding_bag_kernels.hpp,
// the rest (means, per-sample weights) on the reference kernel.
// The backward goes through the sparse gradient and writes it out as the dense gradient the
// Executable contract asks for (DLRM's own training loop uses the sparse form directly).
#include <fmt/format.h>

#include "backend/cpu/embedding_bag_kernels.hpp"
#include "backend/cpu/ops/op_kernels.hpp"

namespace telar::backend::cpu {

namespace {

// The per-sample weights (input 3, where given) are not differentiated: their gradient is zero.
void zero_per_sample_weights_gradient(const KernelIO& io) {
  if (io.input_grads.size() > 3 && io.input_grads[3].tensor) io.input_grads[3].tensor->zero();
}

class FastEmbeddingBag final : public Kernel {
 public:
  explicit FastEmbeddingBag(KernelIO io)
      : Kernel(std::move(io)), what_(fmt::format("EmbeddingBag '{}'", node().name)) {
    define_plain_output();
  }

  void forward(bool, std::uint64_t) override {
    const CsrBags b = bags();
    check_bags(b, attrs().num_embeddings, what_);
    embedding_bag_sum(in(2).data.f32(), attrs().dim, b, out().data.f32());
  }

  void backward() override {
    zero_per_sample_weights_gradient(io_);
    if (!grad_of(2).tensor) return;
    embedding_bag_sparse_backward(bags(), out().grad.f32(), attrs().dim, grad_);
    sparse_to_dense(grad_, attrs().num_embeddings, grad_of(2).tensor->f32());
  }

 private:
  const graph::EmbeddingBagAttrs& attrs() const { return node().attr<graph::EmbeddingBagAttrs>(); }
  CsrBags bags() const {
    return {in(0).data.data<std::int64_t>(), in(1).data.data<std::int64_t>(), in(1).data.numel(),
            in(0).data.numel()};
  }
  std::string what_;
  SparseRowGrad grad_;
};

class RefEmbeddingBag final : public Kernel {
 public:
  explicit RefEmbeddingBag(KernelIO io) : Kernel(std::move(io)) { define_plain_output(); }
  void forward(bool, std::uint64_t) override {
    ops::embedding_bag_forward(attrs(), in(0).data, in(1).data, in(2).data, psw(), out().data);
  }
  void backward() override {
    zero_per_sample_weights_gradient(io_);
    if (grad_of(2).tensor)
      ops::embedding_bag_backward(attrs(), in(0).data, in(1).data, psw(), out().grad,
                                  *grad_of(2).tensor);
  }

 private:
  const graph::EmbeddingBagAttrs& attrs() const { return node().attr<graph::EmbeddingBagAttrs>(); }
  const Tensor* psw() const { return io_.inputs.size() > 3 ? &in(3).data : nullptr; }
};

// The fast kernels serve unweighted sums; the rest runs on the reference kernel.
std::unique_ptr<Kernel> make_fast(KernelIO io, LayoutConverter&) {
  const auto& a = io.node->attr<graph::EmbeddingBagAttrs>();
  if (a.mode != graph::EmbeddingBagMode::Sum || a.per_sample_weights) return nullptr;
  return std::make_unique<FastEmbeddingBag>(std::move(io));
}

}  // namespace

const OpKernels op_kernel_defs::kEmbeddingBag{make_fast, reference_kernel<RefEmbeddingBag>};

}  // namespace telar::backend::cpu
