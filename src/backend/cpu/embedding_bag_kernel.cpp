// EmbeddingBag (sum, unweighted) in a plan: the fast kernels of embedding_bag_kernels.hpp.
// The backward goes through the sparse gradient and writes it out as the dense gradient the
// Executable contract asks for (DLRM's own training loop uses the sparse form directly).
#include <fmt/format.h>

#include "backend/cpu/embedding_bag_kernels.hpp"
#include "backend/cpu/kernel.hpp"

namespace telar::backend::cpu {

namespace {

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

}  // namespace

std::unique_ptr<Kernel> make_fast_embedding_bag(KernelIO io) {
  const auto& a = io.node->attr<graph::EmbeddingBagAttrs>();
  if (a.mode != graph::EmbeddingBagMode::Sum || a.per_sample_weights) return nullptr;
  return std::make_unique<FastEmbeddingBag>(std::move(io));
}

}  // namespace telar::backend::cpu
