// Transpose as one oneDNN reorder: the input, in whatever layout it arrives (a convolution's
// channels-last or blocked output included), is copied into the output through a view of the
// output with the input's axes (its strides permuted); the output is plain, or channels-last
// where that is the input's own order of the bytes. ConvNeXt's and the transformers'
// NCHW <-> NHWC transposes are then one vectorised pass where the reference kernel, a strided
// gather, also needed the input reordered to plain first. The reference kernel permutes plain
// tensors of up to 8 axes.
#include <cstring>
#include <optional>

#include "backend/cpu/ops/op_kernels.hpp"
#include "core/parallel.hpp"

namespace telar::backend::cpu {

namespace {

// The strides of a layout without blocks, padding or offset (plain, channels-last and other
// orders of the axes); none for a blocked one.
std::optional<dnnl::memory::dims> strides_of(const dnnl::memory::desc& md) {
  const dnnl_memory_desc_t& d = md.data;
  if (d.format_kind != dnnl_blocked || d.format_desc.blocking.inner_nblks != 0 || d.offset0 != 0)
    return std::nullopt;
  for (int k = 0; k < d.ndims; ++k)
    if (d.padded_dims[k] != d.dims[k]) return std::nullopt;
  return dnnl::memory::dims(d.format_desc.blocking.strides,
                            d.format_desc.blocking.strides + d.ndims);
}

// The output, whose axis d has stride `y_strides[d]`, seen with the input's axes: axis perm[d]
// of the input is axis d of the output.
dnnl::memory::desc output_with_input_axes(std::span<const std::int64_t> perm, const Shape& x,
                                          const dnnl::memory::dims& y_strides) {
  dnnl::memory::dims strides(y_strides.size());
  for (std::size_t d = 0; d < perm.size(); ++d)
    strides[static_cast<std::size_t>(perm[d])] = y_strides[d];
  return {to_dims(x), dnnl::memory::data_type::f32, strides};
}

// `bytes` from `from` to `to` in blocks of 64 KiB, split over the threads.
void copy_bytes(const void* from, void* to, std::size_t bytes) {
  constexpr std::int64_t kBlock = 64 * 1024;
  const auto blocks = static_cast<std::int64_t>((bytes + kBlock - 1) / kBlock);
  parallel_for(0, blocks, blocks > 1, [&](std::int64_t b) {
    const auto start = static_cast<std::size_t>(b * kBlock);
    std::memcpy(static_cast<char*>(to) + start, static_cast<const char*>(from) + start,
                std::min<std::size_t>(kBlock, bytes - start));
  });
}

class DnnlTranspose final : public DnnlKernel {
 public:
  DnnlTranspose(KernelIO io, LayoutConverter&) : DnnlKernel(std::move(io)) {
    const Shape& y = out().shape;
    const auto& perm = node().attr<graph::TransposeAttrs>().perm;
    // The output is plain, except where keeping the input's order of the bytes makes it the
    // channels-last image convolutions read (a plain NHWC -> NCHW transpose in front of one:
    // the copy is a straight one and the convolution reorders nothing); elsewhere a plain
    // output spares its plain readers a second copy.
    dnnl::memory::dims y_strides = *strides_of(plain_f32(y));
    if (const auto x_strides = strides_of(in(0).md); x_strides && y.size() == 4) {
      dnnl::memory::dims kept(y.size());
      for (std::size_t d = 0; d < perm.size(); ++d)
        kept[d] = (*x_strides)[static_cast<std::size_t>(perm[d])];
      const dnnl::memory::desc channels_last(to_dims(y), dnnl::memory::data_type::f32,
                                             dnnl::memory::format_tag::nhwc);
      if (dnnl::memory::desc(to_dims(y), dnnl::memory::data_type::f32, kept) == channels_last)
        y_strides = kept;
    }
    const dnnl::memory::desc y_md(to_dims(y), dnnl::memory::data_type::f32, y_strides);
    view_ = output_with_input_axes(perm, in(0).shape, y_strides);
    define_output(y_md, is_plain(y_md, y));
    // The output's bytes in the input's order (a channels-last convolution output transposed to
    // plain NHWC, a transformer's tokens after a Linear): a straight copy, which oneDNN 2.6
    // would run on its slow generic reorder.
    straight_ = view_ == in(0).md;
    dnnl::memory to(view_, cpu_engine(), out().data.raw());
    dnnl::memory from = in(0).data_memory();
    fwd_ = {dnnl::reorder(from, to), {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}}};
  }

  void forward(bool, std::uint64_t) override {
    if (straight_)
      copy_bytes(in(0).data.raw(), out().data.raw(), out().data.nbytes());
    else
      fwd_.run();
  }

  void prepare_backward() override {
    bwd_ = {};
    if (!grad_of(0).tensor) return;
    dnnl::memory from(view_, cpu_engine(), out().grad.raw());
    dnnl::memory to = memory_over(in(0).md, *grad_of(0).tensor);
    bwd_ = {dnnl::reorder(from, to), {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}}};
  }

  void backward() override {
    if (!bwd_.ready()) return;
    if (straight_)
      copy_bytes(out().grad.raw(), grad_of(0).tensor->raw(), out().grad.nbytes());
    else
      bwd_.run();
  }

 private:
  bool straight_ = false;
  dnnl::memory::desc view_;
  BoundPrimitive fwd_, bwd_;
};

// f32 inputs of up to 8 axes (the plain layouts this backend names).
std::unique_ptr<Kernel> fast_transpose(KernelIO io, LayoutConverter& converter) {
  const Slot& x = *io.inputs.at(0);
  if (x.shape.size() > 8 || x.md.data_type() != dnnl::memory::data_type::f32) return nullptr;
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
