// Add, Sub, Mul, Div. The residual Add of two tensors of one shape runs on oneDNN binary, in the
// first operand's layout; its backward hands the output gradient to both operands, reordering
// where their layouts differ. The others (and broadcasting) run on the reference kernel.
#include "backend/cpu/ops/op_kernels.hpp"

namespace telar::backend::cpu {

namespace {

class DnnlAdd final : public DnnlKernel {
 public:
  DnnlAdd(KernelIO io, LayoutConverter& converter) : DnnlKernel(std::move(io)) {
    io_.inputs[1] = converter.convert(io_.inputs[1], in(0).md);
    define_output(in(0).md, in(0).plain);
    dnnl::binary::primitive_desc pd(
        dnnl::binary::desc(dnnl::algorithm::binary_add, in(0).md, in(1).md, out().md),
        default_attr(), cpu_engine());
    fwd_ = bind<dnnl::binary>(pd, {{DNNL_ARG_SRC_0, in(0).data_memory()},
                                   {DNNL_ARG_SRC_1, in(1).data_memory()},
                                   {DNNL_ARG_DST, out().data_memory()}});
  }

  void forward(bool, std::uint64_t) override { fwd_.run(); }

  void prepare_backward() override {
    for (std::size_t i = 0; i < 2; ++i) {
      if (!grad_of(i).tensor) continue;
      dnnl::memory from = out().grad_memory();
      dnnl::memory to = memory_over(in(i).md, *grad_of(i).tensor);
      copies_[i] = {dnnl::reorder(from, to), {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}}};
    }
  }

  void backward() override {
    for (auto& c : copies_)
      if (c.ready()) c.run();
  }

 private:
  BoundPrimitive fwd_;
  BoundPrimitive copies_[2];
};

std::unique_ptr<Kernel> fast_binary(KernelIO io, LayoutConverter& converter) {
  if (io.node->kind != graph::OpKind::Add || io.inputs[0]->shape != io.inputs[1]->shape)
    return nullptr;
  return fast_kernel<DnnlAdd>(std::move(io), converter);
}

ops::Binary binary_of(graph::OpKind kind) {
  switch (kind) {
    case graph::OpKind::Add: return ops::Binary::Add;
    case graph::OpKind::Sub: return ops::Binary::Sub;
    case graph::OpKind::Mul: return ops::Binary::Mul;
    default: return ops::Binary::Div;
  }
}

class RefBinary final : public Kernel {
 public:
  explicit RefBinary(KernelIO io) : Kernel(std::move(io)), op_(binary_of(node().kind)) {
    define_plain_output();
  }
  void forward(bool, std::uint64_t) override {
    ops::binary_forward(op_, in(0).data, in(1).data, out().data);
  }
  void backward() override {
    ops::binary_backward(op_, in(0).data, in(1).data, out().grad, grad_of(0).tensor,
                         grad_of(1).tensor);
  }

 private:
  ops::Binary op_;
};

}  // namespace

const OpKernels op_kernel_defs::kBinary{fast_binary, reference_kernel<RefBinary>, /*int8=*/false,
                                        /*backward_reads_output=*/false};

}  // namespace telar::backend::cpu
