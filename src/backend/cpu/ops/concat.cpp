// Concat along the channel axis. Images that arrive in oneDNN's layouts are concatenated on
// oneDNN's concat in channels-last (the layout oneDNN's convolutions read and write around it,
// so that a SqueezeNet fire module or a DenseNet block reorders nothing); its backward copies
// each input's channels out of the output gradient. The reference kernel concatenates plain
// tensors.
#include <vector>

#include "backend/cpu/ops/op_kernels.hpp"

namespace telar::backend::cpu {

namespace {

using md = dnnl::memory::desc;

class DnnlConcat final : public DnnlKernel {
 public:
  DnnlConcat(KernelIO io, LayoutConverter& converter) : DnnlKernel(std::move(io)) {
    const Shape& y = out().shape;
    // One element type for all: the inputs' own where they agree (bf16 between bf16
    // convolutions), else f32.
    auto type = in(0).md.data_type();
    for (std::size_t i = 1; i < io_.inputs.size(); ++i)
      if (in(i).md.data_type() != type) type = dnnl::memory::data_type::f32;
    const auto layout_of = [&](const Shape& shape) {
      return md(to_dims(shape), type, dnnl::memory::format_tag::nhwc);
    };
    std::vector<md> srcs;
    for (std::size_t i = 0; i < io_.inputs.size(); ++i) {
      io_.inputs[i] = converter.convert(io_.inputs[i], layout_of(in(i).shape));
      srcs.push_back(in(i).md);
    }
    define_output(layout_of(y), is_plain(layout_of(y), y));  // [B, C, 1, 1]: plain too
    dnnl::concat::primitive_desc pd(out().md, 1, srcs, cpu_engine(), default_attr());
    std::unordered_map<int, dnnl::memory> args = {{DNNL_ARG_DST, out().data_memory()}};
    for (std::size_t i = 0; i < srcs.size(); ++i)
      args[DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i)] = in(i).data_memory();
    fwd_ = bind<dnnl::concat>(pd, std::move(args));
  }

  void forward(bool, std::uint64_t) override { fwd_.run(); }

  void prepare_backward() override {
    copies_.clear();
    dnnl::memory::dim offset = 0;
    for (std::size_t i = 0; i < io_.inputs.size(); ++i) {
      const dnnl::memory::dims dims = to_dims(in(i).shape);
      if (grad_of(i).tensor) {
        dnnl::memory::dims at(dims.size(), 0);
        at[1] = offset;
        dnnl::memory part(out().md.submemory_desc(dims, at), cpu_engine(), out().grad.raw());
        dnnl::memory to = memory_over(in(i).md, *grad_of(i).tensor);
        copies_.push_back({dnnl::reorder(part, to), {{DNNL_ARG_FROM, part}, {DNNL_ARG_TO, to}}});
      }
      offset += dims[1];
    }
  }

  void backward() override {
    for (const BoundPrimitive& c : copies_) c.run();
  }

 private:
  BoundPrimitive fwd_;
  std::vector<BoundPrimitive> copies_;
};

// Images joined along the channels whose inputs all arrive in oneDNN's layouts; where one arrives
// plain, its producer
// runs on plain tensors (a Slice, a Transpose: ShuffleNet's channel shuffle), and so, likely,
// do the readers: the reference kernel concatenates them as they are (two copies per sample,
// faster than oneDNN's concat of plain tensors).
std::unique_ptr<Kernel> fast_concat(KernelIO io, LayoutConverter& converter) {
  if (io.output->shape.size() != 4 || io.node->attr<graph::ConcatAttrs>().axis != 1) return nullptr;
  for (const Slot* in : io.inputs)
    if (in->plain) return nullptr;
  return fast_kernel<DnnlConcat>(std::move(io), converter);
}

class RefConcat final : public Kernel {
 public:
  explicit RefConcat(KernelIO io) : Kernel(std::move(io)) {
    define_plain_output();
    inputs_.resize(io_.inputs.size());
    grads_.resize(io_.inputs.size());
  }
  void forward(bool, std::uint64_t) override {
    for (std::size_t i = 0; i < inputs_.size(); ++i) inputs_[i] = in(i).data;
    ops::concat_forward(node().attr<graph::ConcatAttrs>().axis, inputs_, out().data);
  }
  void prepare_backward() override {
    needed_ = false;
    for (std::size_t i = 0; i < grads_.size(); ++i) {
      needed_ = needed_ || grad_of(i).tensor;
      grads_[i] = grad_of(i).tensor ? *grad_of(i).tensor : Tensor(in(i).shape);
    }
  }
  // Nothing to do where no input wants a gradient (a concatenation of the model's input).
  void backward() override {
    if (needed_) ops::concat_backward(node().attr<graph::ConcatAttrs>().axis, out().grad, grads_);
  }

 private:
  std::vector<Tensor> inputs_, grads_;
  bool needed_ = false;
};

}  // namespace

const OpKernels op_kernel_defs::kConcat{fast_concat, reference_kernel<RefConcat>,
                                        /*int8=*/false, /*backward_reads_output=*/false};

}  // namespace telar::backend::cpu
