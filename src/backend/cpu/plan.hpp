#pragma once
// A plan: a graph bound to one batch size on the CPU. It owns every value's storage, the
// kernels (oneDNN primitives created once and reused) in execution order, layout conversion
// steps between them, and the backward schedule (which step writes or accumulates which
// gradient), so a steady-state training step allocates nothing.
#include <deque>
#include <memory>
#include <set>
#include <span>
#include <vector>

#include "backend/arena_layout.hpp"
#include "backend/cpu/kernel.hpp"
#include "backend/cpu/shared_plan_memory.hpp"
#include "backend/executable.hpp"
#include "backend/schedule.hpp"
#include "graph/parameters.hpp"

namespace telar::backend::cpu {

// How a plan stores its values and gradients.
enum class PlanMemory : std::uint8_t {
  Own,  // a buffer each (cpu:reuse=off)
  // Values whose lifetimes do not meet share one arena (an inference plan: evaluation forwards
  // only, as backward would need the values written over).
  Inference,
  // Each value its own place in one arena (backward reads them all), which plans that never run
  // at once share; activations' gradients whose lifetimes in backward do not meet share another.
  Training,
};

struct PlanOptions {
  bool use_dnnl = true;   // false: reference kernels only ("cpu:ref")
  std::uint64_t seed = 0;
  const std::uint64_t* params_version = nullptr;  // owned by the executable
  std::vector<graph::ValueId> input_gradients;     // inputs whose gradients backward computes
  bool bf16 = false;  // convolutions on bf16 primitives (Precision::BF16; inference only)
  // Precision::INT8 (inference only): the calibrated ranges of the graph's values.
  const QuantizationTable* int8 = nullptr;
  // Inference only: fp32 3x3 convolutions large enough to gain may run as Winograd ones.
  bool winograd = false;
  // Where values and gradients live (PlanMemory above).
  PlanMemory memory = PlanMemory::Own;
  // For plans that never run at once (an executable's, one per batch size, and for the thread
  // choice per thread count): the parameters' layouts, the arenas and the scratchpad they
  // share (shared_plan_memory.hpp). Null: the plan keeps its own.
  SharedPlanMemory* shared = nullptr;
  // The plan runs evaluation forwards only (an inference executable without input gradients):
  // kernels that have no backward may serve it.
  bool inference = false;
};

// Rows [begin, end) of the caller's batch that a plan runs, when a batch is split across
// threads (each part a plan of end - begin rows). end < 0: the whole batch.
struct RowRange {
  std::int64_t begin = 0;
  std::int64_t end = -1;
  bool whole() const { return end < 0; }
};

class Plan : public LayoutConverter, public SlotMemory {
 public:
  Plan(const graph::Graph& graph, graph::ParameterSet& params, graph::ParameterSet& grads,
       std::int64_t batch, const PlanOptions& options);

  // With `rows`, the inputs hold the caller's whole batch and the plan reads its rows.
  void forward(std::span<const Tensor> inputs, Mode mode, std::uint64_t random_stream,
               NodeObserver* observer, RowRange rows = {});
  // With `rows`, gradients of batch outputs hold the whole batch (the plan reads its rows) and
  // a scalar output's gradient is multiplied by `scalar_scale` (a part's share of a mean loss).
  void backward(std::span<const Tensor> output_grads, NodeObserver* observer, RowRange rows = {},
                float scalar_scale = 1.0f);
  const Tensor& output(std::size_t i) const;
  const Tensor& input_gradient(std::size_t i) const;

  // The bytes this plan holds: its slots' data and gradients (an arena once), the kernels' own
  // buffers (weights in their layouts, scratch space), backward's accumulation scratch. Each
  // buffer once: those in `seen` (another plan's, e.g. the parameters and weight layouts plans
  // share) are not counted again, and this plan's are added to it.
  std::int64_t held_bytes(std::set<const void*>& seen) const;

  // The value each layout conversion step reads, in execution order.
  std::vector<graph::ValueId> converted_values() const;

  Slot* convert(Slot* from, const dnnl::memory::desc& md, float int8_scale = 0.0f) override;
  Slot* convert_to_overwrite(Slot* from, const dnnl::memory::desc& md,
                             float int8_scale = 0.0f) override;
  Slot* to_plain(Slot* from) override;
  Tensor allocate(const Shape& shape, DType dtype) override;
  Tensor scratch(std::size_t bytes) override;
  dnnl::memory step_buffer(const dnnl::memory::desc& md) override;

 private:
  struct Step {
    std::unique_ptr<Kernel> kernel;
    const graph::Node* node;   // the graph node it belongs to (conversions: their consumer)
    bool is_conversion;
  };
  struct Accumulation {       // after step `step`'s backward: slot->grad += scratch
    Slot* slot;
    Tensor scratch;
  };
  // A conversion readers may share: `to` holds `from` in another layout (or int8 scale).
  struct Conversion {
    Slot* from;
    Slot* to;
  };
  // The steps, slots and kernels of the graph (the constructor's work; twice with an arena).
  void build(graph::ParameterSet& params);
  void clear();
  // After a trial build: each buffer it asked for, with the steps that write and read it
  // (PlanMemory::Training: every step).
  std::vector<BufferLife> trial_lifetimes() const;
  Slot* new_slot();
  // Slot::overwritable for `value`, read by `reader` (before any conversion).
  bool overwritable(const Slot& value, const graph::Node& reader) const;
  // A reorder step from `from` into a new slot of layout `md` (int8: of scale `scale`).
  Slot* converted(Slot* from, const dnnl::memory::desc& md, float scale);
  void prepare_backward();
  // prepare_backward()'s storage: the activations' gradients and the accumulation buffers
  // (before the kernels bind them), then the kernels' step buffers (after they asked).
  void place_gradients(const std::vector<std::vector<GradWrite>>& writes);
  void place_step_buffers();

  const graph::Graph& graph_;
  graph::ParameterSet& grads_;
  std::int64_t batch_;
  PlanOptions options_;
  std::deque<Slot> slots_;                 // stable addresses
  std::vector<Slot*> value_slots_;         // by ValueId
  std::vector<Step> steps_;
  std::vector<Conversion> shared_conversions_;
  std::vector<Slot*> output_slots_;        // plain views of the graph outputs
  std::vector<std::vector<Accumulation>> accumulations_;  // by step
  // Backward's memory: gradients and accumulation buffers (PlanMemory::Training: in one arena),
  // the steps' staging buffers (step_buffer(), each made without an address while step `step`
  // prepares), and the gradients nothing writes, which backward zeroes (others' plans may have
  // written the arena they lie in).
  struct StepBuffer {
    std::size_t step;
    dnnl::memory memory;
  };
  std::vector<StepBuffer> step_buffers_;
  std::size_t preparing_step_ = 0;
  Tensor gradient_arena_, step_buffer_arena_;
  std::vector<Tensor*> unwritten_gradients_;
  const graph::Node* building_node_ = nullptr;
  bool backward_ready_ = false;
  bool last_forward_trained_ = false;
  // Where allocate() takes the values' storage. With an arena (PlanMemory::Inference or
  // Training) the plan is built twice: the trial build's buffers are unwritten pages (nothing
  // runs on them), its steps give each buffer's lifetime, and the second build, whose kernels
  // ask for buffers in the same order, takes their places in the arena; should it ask for
  // anything else, the plan is built a third time with a buffer of its own for each value.
  enum class Memory : std::uint8_t { Own, Trial, Arena };
  Memory memory_ = Memory::Own;
  std::vector<Tensor> trial_buffers_;  // Trial: in the order asked for
  std::vector<std::int64_t> offsets_;  // Arena: each buffer's place, in the same order
  Tensor arena_;
  // The arenas and scratch space of a plan that shares them with no other (options.shared null).
  SharedPlanMemory own_;
  SharedPlanMemory& memory() { return options_.shared ? *options_.shared : own_; }
  std::size_t next_buffer_ = 0;
  bool arena_mismatch_ = false;
};

}  // namespace telar::backend::cpu
