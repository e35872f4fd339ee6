// DLRM's dot interaction.
#include <vector>

#include "backend/cuda/ops/op_kernels.hpp"

namespace telar::backend::cuda {

namespace {

class DotInteraction final : public Kernel {
 public:
  explicit DotInteraction(KernelIO io) : Kernel(std::move(io)) {
    define_output();
    std::vector<const float*> ptrs;
    for (const Slot* s : io_.inputs) ptrs.push_back(s->f32());
    vectors_.resize(ptrs.size() * sizeof(float*));
    ok(cudaMemcpy(vectors_.get(), ptrs.data(), vectors_.bytes(), cudaMemcpyHostToDevice), node(),
       "uploading input pointers");
  }
  void prepare_backward() override {
    std::vector<float*> ptrs;
    for (std::size_t i = 0; i < io_.inputs.size(); ++i) ptrs.push_back(grad_of(i));
    dvectors_.resize(ptrs.size() * sizeof(float*));
    ok(cudaMemcpy(dvectors_.get(), ptrs.data(), dvectors_.bytes(), cudaMemcpyHostToDevice), node(),
       "uploading gradient pointers");
  }
  void forward(bool, std::uint64_t) override {
    const auto& a = node().attr<graph::DotInteractionAttrs>();
    kernels::dot_interaction_forward(stream(), static_cast<const float* const*>(vectors_.get()),
                                     out().f32(), out().shape.at(0), a.num_sparse + 1, a.dim,
                                     a.self_interaction);
    check_launch("dot interaction forward");
  }
  void backward() override {
    const auto& a = node().attr<graph::DotInteractionAttrs>();
    kernels::dot_interaction_backward(stream(), static_cast<const float* const*>(vectors_.get()),
                                      static_cast<float* const*>(dvectors_.get()), out().grad,
                                      out().shape.at(0), a.num_sparse + 1, a.dim,
                                      a.self_interaction);
    check_launch("dot interaction backward");
  }

 private:
  DeviceBuffer vectors_, dvectors_;
};

}  // namespace

const OpKernels op_kernel_defs::kDotInteraction{kernel_of<DotInteraction>};

}  // namespace telar::backend::cuda
