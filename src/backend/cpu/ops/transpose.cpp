// Transpose as one oneDNN reorder: the input, in whatever layout it arrives (a convolution's
// channels-last or blocked output included), is copied into the plain output through a view of
// the output with the input's axes (its strides permuted). ConvNeXt's and the transformers'
// NCHW <-> NHWC transposes are then one vectorised pass where the reference kernel, a strided
// gather, also needed the input reordered to plain first. The reference kernel permutes plain
// tensors of up to 8 axes.
#include "backend/cpu/ops/op_kernels.hpp"

namespace telar::backend::cpu {

namespace {

// The plain output `y` seen with the input's axes: axis perm[d] of the input is axis d of y.
dnnl::memory::desc output_with_input_axes(std::span<const std::int64_t> perm, const Shape& x,
                                          const Shape& y) {
  dnnl::memory::dims y_strides(y.size()), strides(y.size());
  dnnl::memory::dim step = 1;
  for (std::size_t d = y.size(); d-- > 0;) {
    y_strides[d] = step;
    step *= y[d];
  }
  for (std::size_t d = 0; d < perm.size(); ++d)
    strides[static_cast<std::size_t>(perm[d])] = y_strides[d];
  return {to_dims(x), dnnl::memory::data_type::f32, strides};
}

class DnnlTranspose final : public DnnlKernel {
 public:
  DnnlTranspose(KernelIO io, LayoutConverter&) : DnnlKernel(std::move(io)) {
    const Shape& y = out().shape;
    view_ = output_with_input_axes(node().attr<graph::TransposeAttrs>().perm, in(0).shape, y);
    define_output(plain_f32(y), true);
    dnnl::memory to(view_, cpu_engine(), out().data.raw());
    dnnl::memory from = in(0).data_memory();
    fwd_ = {dnnl::reorder(from, to), {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}}};
  }

  void forward(bool, std::uint64_t) override { fwd_.run(); }

  void prepare_backward() override {
    bwd_ = {};
    if (!grad_of(0).tensor) return;
    dnnl::memory from(view_, cpu_engine(), out().grad.raw());
    dnnl::memory to = memory_over(in(0).md, *grad_of(0).tensor);
    bwd_ = {dnnl::reorder(from, to), {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}}};
  }

  void backward() override {
    if (bwd_.ready()) bwd_.run();
  }

 private:
  dnnl::memory::desc view_;
  BoundPrimitive fwd_, bwd_;
};

// f32 inputs of up to 5 axes (the plain layouts this backend names).
std::unique_ptr<Kernel> fast_transpose(KernelIO io, LayoutConverter& converter) {
  const Slot& x = *io.inputs.at(0);
  if (x.shape.size() > 5 || x.md.data_type() != dnnl::memory::data_type::f32) return nullptr;
  return fast_kernel<DnnlTranspose>(std::move(io), converter);
}

class RefTranspose final : public Kernel {
 public:
  explicit RefTranspose(KernelIO io) : Kernel(std::move(io)) { define_plain_output(); }
  void forward(bool, std::uint64_t) override {
    ops::transpose_forward(node().attr<graph::TransposeAttrs>().perm, in(0).data, out().data);
  }
  void backward() override {
    if (grad_of(0).tensor)
      ops::transpose_backward(node().attr<graph::TransposeAttrs>().perm, out().grad,
                              *grad_of(0).tensor);
  }
};

}  // namespace

const OpKernels op_kernel_defs::kTranspose{fast_transpose, reference_kernel<RefTranspose>,
                                           /*int8=*/false, /*backward_reads_output=*/false};

}  // namespace telar::backend::cpu
