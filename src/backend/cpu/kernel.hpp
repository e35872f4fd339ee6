#pragma once
// A node's kernel inside a plan: created once per (graph, batch size), run every step.
#include <memory>
#include <vector>

#include "backend/cpu/slot.hpp"
#include "core/rng.hpp"
#include "graph/graph.hpp"

namespace telar::backend::cpu {

class SharedPlanMemory;

// Where a kernel's backward writes the gradient of input i: straight into the input slot's
// grad (the first writer in backward order), or into a scratch buffer the plan then adds to
// it (a value read by several nodes), or nowhere (the input needs no gradient). A kernel writes
// every target it is given, zeros where it does not differentiate that input: the buffers
// share memory with other gradients and other plans', so one left alone holds their values.
struct GradTarget {
  Tensor* tensor = nullptr;    // null: no gradient needed
  bool accumulate = false;
};

struct KernelIO {
  const graph::Node* node = nullptr;
  std::vector<Slot*> inputs;
  Slot* output = nullptr;
  std::vector<GradTarget> input_grads;   // filled by the plan before prepare_backward()
  std::uint64_t seed = 0;                // per-node random stream base (dropout)
  const std::uint64_t* params_version = nullptr;  // bumped when parameters change
  bool bf16 = false;  // Precision::BF16: kernels that have bf16 primitives use them
  bool int8 = false;  // Precision::INT8: kernels that have int8 primitives use them where
                      // their input slot has a calibrated encoding
  bool winograd = false;  // inference only: Conv2d may choose oneDNN's Winograd algorithm
  bool inference = false;        // the plan runs evaluation forwards only (PlanOptions::inference)
  SlotMemory* memory = nullptr;  // the output's storage comes from here (null: its own buffer)
  SharedPlanMemory* shared = nullptr;  // parameters' layouts shared between plans (null: owned)
};

struct HeldBuffer {
  const void* address;
  std::int64_t bytes;
};

class Kernel {
 public:
  explicit Kernel(KernelIO io) : io_(std::move(io)) {}
  virtual ~Kernel() = default;
  const graph::Node& node() const { return *io_.node; }

  // Allocates what backward needs (primitives, workspaces); called once, before the first
  // training-mode forward, after input_grads are set.
  virtual void prepare_backward() {}
  // The buffers this kernel holds beyond its slots, added to `out`: weights in its own layout,
  // workspaces, the scratch space its primitives use (the plan's). By address: a buffer shared
  // with other kernels or plans is counted once.
  virtual void held_buffers(std::vector<HeldBuffer>& out) const { (void)out; }
  virtual void forward(bool training, std::uint64_t random_stream) = 0;
  virtual void backward() = 0;

  KernelIO& io() { return io_; }

 protected:
  // Sets the output slot's layout and allocates its storage (constructors call this once).
  void define_output(const dnnl::memory::desc& md, bool plain);
  void define_plain_output();
  const Slot& in(std::size_t i) const { return *io_.inputs.at(i); }
  Slot& in_mut(std::size_t i) { return *io_.inputs.at(i); }
  Slot& out() { return *io_.output; }
  const GradTarget& grad_of(std::size_t i) const { return io_.input_grads.at(i); }
  // Kernels of nodes with post-ops (graph::PostOps, set by the inference passes) run only in
  // evaluation mode: throws telar::Error (internal) on a training-mode forward.
  void require_inference(bool training) const;
  KernelIO io_;
};

// While a plan is built, kernels may ask for an input in another layout: the plan inserts a
// reorder step (with its backward) before the kernel and returns the converted slot. Into or out
// of an int8 layout the reorder quantizes or dequantizes with the encodings' scales: `from`'s,
// and `int8_scale` for the result where given (e.g. a residual summand requantized to the scale
// of the output it is added into), else `from`'s.
class LayoutConverter {
 public:
  virtual ~LayoutConverter() = default;
  // `from` itself where layout and scale are the same; a conversion already made for another
  // reader is shared.
  virtual Slot* convert(Slot* from, const dnnl::memory::desc& md, float int8_scale = 0.0f) = 0;
  // As convert(), but a conversion is made for this reader alone: it may write over it (a sum
  // post-op's summand). `from` itself is still returned where no conversion is needed.
  virtual Slot* convert_to_overwrite(Slot* from, const dnnl::memory::desc& md,
                                     float int8_scale = 0.0f) = 0;
  virtual Slot* to_plain(Slot* from) = 0;
};

// Each op's kernels are in ops/ (ops/op_kernels.hpp).
// A layout conversion step (src slot -> dst slot of another layout), with backward.
std::unique_ptr<Kernel> make_reorder_kernel(KernelIO io);

}  // namespace telar::backend::cpu
