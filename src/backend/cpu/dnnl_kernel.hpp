#pragma once
// Shared pieces of the oneDNN kernels: a primitive with its argument map built once, and the
// kernel-owned scratchpad (user scratchpad mode: nothing is allocated while running).
#include <unordered_map>
#include <vector>

#include "backend/cpu/dnnl_context.hpp"
#include "backend/cpu/kernel.hpp"
#include "backend/cpu/shared_plan_memory.hpp"

namespace telar::backend::cpu {

// A primitive with its arguments bound once. run() goes through the C API with the argument
// array prepared here: the C++ wrapper's execute() builds a vector on every call.
struct BoundPrimitive {
  BoundPrimitive() = default;
  BoundPrimitive(dnnl::primitive p, std::unordered_map<int, dnnl::memory> a)
      : primitive(std::move(p)), args(std::move(a)) {
    for (const auto& [id, mem] : args) c_args.push_back({id, mem.get()});
  }
  dnnl::primitive primitive;
  std::unordered_map<int, dnnl::memory> args;  // keeps the memories alive
  std::vector<dnnl_exec_arg_t> c_args;
  bool ready() const { return static_cast<bool>(primitive); }
  void run() const {
    dnnl::error::wrap_c_api(dnnl_primitive_execute(primitive.get(), cpu_stream().get(),
                                                   static_cast<int>(c_args.size()), c_args.data()),
                            "could not execute a primitive");
  }
};

class DnnlKernel : public Kernel {
 public:
  void held_buffers(std::vector<HeldBuffer>& out) const override {
    for (const dnnl::memory& m : owned_)
      out.push_back({m.get_data_handle(), static_cast<std::int64_t>(m.get_desc().get_size())});
    for (const Tensor& t : scratchpads_)
      out.push_back({t.raw(), static_cast<std::int64_t>(t.nbytes())});
  }

 protected:
  using Kernel::Kernel;
  // Binds a primitive with its arguments and a scratchpad sized for it, the plan's scratch space
  // (SlotMemory::scratch): bind<dnnl::convolution_forward>(pd, {{DNNL_ARG_SRC, src}, ...}).
  template <typename Primitive, typename PrimitiveDesc>
  BoundPrimitive bind(const PrimitiveDesc& pd, std::unordered_map<int, dnnl::memory> args) {
    const auto sd = pd.scratchpad_desc();
    if (sd.get_size() > 0) {
      scratchpads_.push_back(io_.memory
                                 ? io_.memory->scratch(sd.get_size())
                                 : Tensor({(static_cast<std::int64_t>(sd.get_size()) + 3) / 4}));
      args[DNNL_ARG_SCRATCHPAD] = memory_over(sd, scratchpads_.back());
    }
    return {Primitive(pd), std::move(args)};
  }
  dnnl::memory memory_over(const dnnl::memory::desc& md, const Tensor& t) const {
    return dnnl::memory(md, cpu_engine(), t.raw());
  }
  // A oneDNN-owned buffer (weights in a blocked layout, workspaces, statistics).
  dnnl::memory owned(const dnnl::memory::desc& md) { return owned_.emplace_back(md, cpu_engine()); }
  // A buffer used only while this step's backward runs (SlotMemory::step_buffer), from
  // prepare_backward(); owned where the kernel has no plan memory.
  dnnl::memory step_buffer(const dnnl::memory::desc& md) {
    return io_.memory ? io_.memory->step_buffer(md) : owned(md);
  }
  // Parameter `param` in layout `md`: the executable's buffer, shared with its other plans
  // (shared_plan_memory.hpp), where they share, else owned. The kernel fills it.
  dnnl::memory weights_in(const Tensor& param, const dnnl::memory::desc& md) {
    return io_.shared ? owned_.emplace_back(io_.shared->weights(param, md)) : owned(md);
  }

 private:
  std::vector<Tensor> scratchpads_;
  std::vector<dnnl::memory> owned_;
};

// A kernel that only an inference plan's factory makes (where KernelIO::inference): one primitive,
// fwd_, bound by the constructor; a training forward or a backward is an internal error.
class DnnlForwardOnlyKernel : public DnnlKernel {
 public:
  void forward(bool training, std::uint64_t) override {
    if (training) refuse_training();
    fwd_.run();
  }
  void backward() override { refuse_training(); }

 protected:
  using DnnlKernel::DnnlKernel;
  BoundPrimitive fwd_;

 private:
  [[noreturn]] void refuse_training() const;
};

// Whether parameters changed since `seen` (the plan bumps the counter after optimizer steps
// and checkpoint loads); updates `seen`.
bool parameters_changed(const KernelIO& io, std::uint64_t& seen);

// int8 kernels: f32 weights `plain` quantized into `to` (s8), each divided by its output
// channel's scale (`mask`: the dimensions the scales run along, as oneDNN's output scales).
void quantize_into(dnnl::memory plain, dnnl::memory& to, int mask,
                   const std::vector<float>& scales);
// scales[c] * factor, by channel.
std::vector<float> scaled(const std::vector<float>& scales, float factor);
// values[c] / by[c]: e.g. a bias in accumulator units (oneDNN 2 adds it before output scales).
Tensor divided(const Tensor& values, const std::vector<float>& by);

// Right padding that makes oneDNN's output size equal PyTorch's floor-mode size.
dnnl::memory::dim padding_right(dnnl::memory::dim in, dnnl::memory::dim out,
                                dnnl::memory::dim kernel, dnnl::memory::dim stride,
                                dnnl::memory::dim pad_left, dnnl::memory::dim dilation = 1);

}  // namespace telar::backend::cpu
