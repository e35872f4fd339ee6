// Add, Sub, Mul, Div. The residual Add of two tensors of one shape runs on oneDNN binary, in the
// first operand's layout; its backward hands the output gradient to both operands, reordering
// where their layouts differ. In plans that only run forwards (inference), the others and
// broadcasting (squeeze-and-excitation's [B, C, 1, 1] gate times [B, C, H, W]) run on oneDNN
// binary too, in the layout of the operand of the output's shape where oneDNN has a jit kernel
// for it (binary_layouts). The rest (training's broadcasting and Sub, Mul, Div) runs on the
// reference kernel.
#include <optional>
#include <string_view>

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

dnnl::algorithm algorithm_of(graph::OpKind kind) {
  switch (kind) {
    case graph::OpKind::Add:
      return dnnl::algorithm::binary_add;
    case graph::OpKind::Sub:
      return dnnl::algorithm::binary_sub;
    case graph::OpKind::Mul:
      return dnnl::algorithm::binary_mul;
    default:
      return dnnl::algorithm::binary_div;
  }
}

// The layouts of a forward-only binary (below): `full`, the operand of the output's shape, is
// oneDNN's first operand (it broadcasts its second; Add and Mul commute). The output takes the
// first operand's layout.
struct BinaryLayouts {
  std::size_t full;
  dnnl::memory::desc first, second;
  bool second_view;  // the second is a view of the other operand's plain data, else converted
};

// A plain f32 view of `shape` with the dimensions of a rank-`rank` tensor: aligned at the right
// (NumPy's rule), ones in front.
dnnl::memory::desc padded_plain(const Shape& shape, std::size_t rank) {
  dnnl::memory::dims dims(rank, 1), strides(rank, 0);
  std::copy(shape.begin(), shape.end(), dims.end() - static_cast<std::ptrdiff_t>(shape.size()));
  dnnl::memory::dim stride = 1;
  for (std::size_t d = rank; d-- > 0;) {
    strides[d] = stride;
    stride *= dims[d];
  }
  return {dims, dnnl::memory::data_type::f32, strides};
}

// Whether oneDNN runs the binary on a jit kernel (false: on its reference one, or not at all).
bool runs_on_jit(dnnl::algorithm alg, const dnnl::memory::desc& first,
                 const dnnl::memory::desc& second) {
  try {
    const dnnl::binary::primitive_desc pd(dnnl::binary::desc(alg, first, second, first),
                                          default_attr(), cpu_engine());
    return std::string_view(pd.impl_info_str()).substr(0, 3) != "ref";
  } catch (const dnnl::error&) {
    return false;
  }
}

// oneDNN's jit binary takes a channels-last first operand with a plain or channels-last second,
// and a 16-channel-blocked first with a second blocked alike; for any other (an 8-channel-blocked
// grouped convolution's output) it has only its reference kernel, 50x slower: the first operand
// is then reordered to channels-last. The same shapes: the same layout.
std::optional<BinaryLayouts> binary_layouts(const KernelIO& io, dnnl::algorithm alg) {
  const Shape& a = io.inputs[0]->shape;
  const Shape& b = io.inputs[1]->shape;
  const Shape& y = io.output->shape;
  const graph::OpKind kind = io.node->kind;
  const bool commutes = kind == graph::OpKind::Add || kind == graph::OpKind::Mul;
  const std::size_t full = a == y ? 0 : b == y && commutes ? 1 : 2;
  if (full == 2) return std::nullopt;
  const Slot& first = *io.inputs[full];
  const Shape& other = io.inputs[1 - full]->shape;
  using tag = dnnl::memory::format_tag;
  const auto type = first.md.data_type();
  if (other == y) {
    if (runs_on_jit(alg, first.md, first.md)) return BinaryLayouts{full, first.md, first.md, false};
    if (y.size() != 4) return std::nullopt;
    const dnnl::memory::desc channels_last(to_dims(y), type, tag::acdb);
    if (!runs_on_jit(alg, channels_last, channels_last)) return std::nullopt;
    return BinaryLayouts{full, channels_last, channels_last, false};
  }
  const dnnl::memory::desc plain = padded_plain(other, y.size());
  if (runs_on_jit(alg, first.md, plain)) return BinaryLayouts{full, first.md, plain, true};
  if (y.size() == 4 && other.size() == 4 &&
      first.md == dnnl::memory::desc(to_dims(y), type, tag::aBcd16b)) {
    const dnnl::memory::desc blocked(to_dims(other), dnnl::memory::data_type::f32, tag::aBcd16b);
    if (runs_on_jit(alg, first.md, blocked)) return BinaryLayouts{full, first.md, blocked, false};
  }
  if (y.size() == 4) {
    const dnnl::memory::desc channels_last(to_dims(y), type, tag::acdb);
    if (runs_on_jit(alg, channels_last, plain))
      return BinaryLayouts{full, channels_last, plain, true};
  }
  return std::nullopt;
}

// Forward only (an inference plan's): oneDNN binary, with broadcasting, in binary_layouts().
class DnnlForwardBinary final : public DnnlForwardOnlyKernel {
 public:
  DnnlForwardBinary(KernelIO io, LayoutConverter& converter, const BinaryLayouts& l)
      : DnnlForwardOnlyKernel(std::move(io)) {
    const std::size_t full = l.full, other = 1 - full;
    io_.inputs[full] = converter.convert(io_.inputs[full], l.first);
    io_.inputs[other] = l.second_view ? converter.to_plain(io_.inputs[other])
                                      : converter.convert(io_.inputs[other], l.second);
    define_output(in(full).md, in(full).plain);
    dnnl::binary::primitive_desc pd(
        dnnl::binary::desc(algorithm_of(node().kind), l.first, l.second, out().md), default_attr(),
        cpu_engine());
    fwd_ = bind<dnnl::binary>(pd, {{DNNL_ARG_SRC_0, in(full).data_memory()},
                                   {DNNL_ARG_SRC_1, memory_over(l.second, in(other).data)},
                                   {DNNL_ARG_DST, out().data_memory()}});
  }
};

std::unique_ptr<Kernel> fast_binary(KernelIO io, LayoutConverter& converter) {
  const graph::OpKind kind = io.node->kind;
  const bool same_shapes = io.inputs[0]->shape == io.inputs[1]->shape;
  const dnnl::memory::desc& first = io.inputs[0]->md;
  // An Add of one shape trains (DnnlAdd); in an inference plan, where oneDNN has no jit kernel
  // for its layout (8-channel blocks), it runs as the others do.
  if (kind == graph::OpKind::Add && same_shapes &&
      (!io.inference || runs_on_jit(dnnl::algorithm::binary_add, first, first)))
    return fast_kernel<DnnlAdd>(std::move(io), converter);
  if (!io.inference || io.output->shape.size() > DNNL_MAX_NDIMS) return nullptr;
  const std::optional<BinaryLayouts> layouts = binary_layouts(io, algorithm_of(kind));
  if (!layouts) return nullptr;
  return std::make_unique<DnnlForwardBinary>(std::move(io), converter, *layouts);
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
