// MatMul of two computed tensors: the forward pass on oneDNN's matmul primitive (plain
// operands, the leading dimensions as its batch), the backward on the reference kernel.
#include "backend/cpu/ops/op_kernels.hpp"

namespace telar::backend::cpu {

namespace {

void matmul_gradients(const Slot& a, const Slot& b, const Slot& y, const GradTarget& da,
                      const GradTarget& db) {
  if (da.tensor || db.tensor) ops::matmul_backward(a.data, b.data, y.grad, da.tensor, db.tensor);
}

class DnnlMatMul final : public DnnlKernel {
 public:
  DnnlMatMul(KernelIO io, LayoutConverter& converter) : DnnlKernel(std::move(io)) {
    io_.inputs[0] = converter.to_plain(io_.inputs[0]);
    io_.inputs[1] = converter.to_plain(io_.inputs[1]);
    define_plain_output();
  }

  void forward(bool, std::uint64_t) override {
    if (!matmul_.ready()) {
      dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(in(0).md, in(1).md, out().md),
                                      default_attr(), cpu_engine());
      matmul_ = bind<dnnl::matmul>(pd, {{DNNL_ARG_SRC, in(0).data_memory()},
                                        {DNNL_ARG_WEIGHTS, in(1).data_memory()},
                                        {DNNL_ARG_DST, out().data_memory()}});
    }
    matmul_.run();
  }
  void backward() override { matmul_gradients(in(0), in(1), out(), grad_of(0), grad_of(1)); }

 private:
  BoundPrimitive matmul_;
};

class RefMatMul final : public Kernel {
 public:
  explicit RefMatMul(KernelIO io) : Kernel(std::move(io)) { define_plain_output(); }
  void forward(bool, std::uint64_t) override {
    ops::matmul_forward(in(0).data, in(1).data, out().data);
  }
  void backward() override { matmul_gradients(in(0), in(1), out(), grad_of(0), grad_of(1)); }
};

}  // namespace

const OpKernels op_kernel_defs::kMatMul{.fast = fast_kernel<DnnlMatMul>,
                                        .reference = reference_kernel<RefMatMul>,
                                        .backward_reads_output = false};

}  // namespace telar::backend::cpu
