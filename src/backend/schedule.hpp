#pragma once
// What a plan for one batch size is made of on any device, and how its backward pass routes
// gradients; the CPU and CUDA plans are built from it and add storage (and, on the CPU, layout
// conversions) of their own.
//   - bind_values(): every value's shape with the batch bound, and whether backward computes
//     its gradient (parameters, the inputs asked for, and every f32 value computed from them);
//   - gradient_writes(): backward runs the plan's steps in reverse; the first step to send a
//     gradient to a slot writes it, the later ones write a scratch buffer the plan then adds
//     (a value read by several steps);
//   - PlanCache: the plans of one executable, one per batch size, made on first use.
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <vector>

#include "core/error.hpp"
#include "core/tensor.hpp"
#include "graph/graph.hpp"

namespace telar::backend {

struct ValueBinding {
  Shape shape;  // batch bound (inputs and activations); kDynamicDim stays for dynamic inputs
  bool requires_grad = false;
};

// By ValueId. Throws for an input in `input_gradients` that cannot have a gradient.
std::vector<ValueBinding> bind_values(const graph::Graph& graph, std::int64_t batch,
                                      std::span<const graph::ValueId> input_gradients);

// The tensors a caller gives a plan's forward(): one for each graph input, of its slot's dtype
// and, with `whole`, of its slot's rank (a dynamic shape) or whole shape (a concrete one).
// slot_of(id) is the plan's slot of value `id`.
void check_input_count(const graph::Graph& graph, std::size_t given);
void check_input(const graph::Value& v, const Tensor& t, DType dtype, const Shape& shape,
                 bool whole);
template <typename SlotOf>
void check_inputs(const graph::Graph& graph, std::span<const Tensor> inputs, SlotOf slot_of,
                  bool whole = true) {
  check_input_count(graph, inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const auto* s = slot_of(graph.inputs()[i]);
    check_input(graph.value(graph.inputs()[i]), inputs[i], s->dtype, s->shape, whole);
  }
}

// The slot of graph input `i` for input_gradient(): it must have been compiled for a gradient
// (CompileOptions::input_gradients). `slots` by ValueId.
template <typename Slot>
const Slot& input_gradient_slot(const graph::Graph& graph, const std::vector<Slot*>& slots,
                                std::size_t i) {
  const graph::ValueId id = graph.inputs().at(i);
  const Slot* s = slots.at(static_cast<std::size_t>(id));
  if (!s->requires_grad)
    fail("internal: input '{}' was not compiled for a gradient (CompileOptions::input_gradients)",
         graph.value(id).name);
  return *s;
}

// Gives every value of `graph` a slot of the device's type and every node its step. new_slot()
// makes a slot (its address stays valid); the fields every device's slot has (id, dtype,
// shape, requires_grad, and kind for inputs, parameters and buffers) are set from `bound`;
// place(slot, value) gives an input or parameter its storage; add_step(node, inputs, output)
// makes the node's kernel over its input slots and its new output slot. Returns the slots by
// ValueId.
template <typename Slot, typename NewSlot, typename Place, typename AddStep>
std::vector<Slot*> build_steps(const graph::Graph& graph, const std::vector<ValueBinding>& bound,
                               NewSlot&& new_slot, Place&& place, AddStep&& add_step) {
  std::vector<Slot*> slots(graph.values().size(), nullptr);
  auto slot_for = [&](const graph::Value& v) {
    const auto at = static_cast<std::size_t>(v.id);
    Slot* s = new_slot();
    s->id = v.id;
    s->dtype = v.dtype;
    s->shape = bound[at].shape;
    s->requires_grad = bound[at].requires_grad;
    slots[at] = s;
    return s;
  };
  for (const graph::Value& v : graph.values()) {
    if (v.kind == graph::ValueKind::Activation) continue;
    Slot* s = slot_for(v);
    s->kind = v.kind;
    place(*s, v);
  }
  for (const graph::Node& node : graph.nodes()) {
    std::vector<Slot*> inputs;
    for (graph::ValueId in : node.inputs) inputs.push_back(slots.at(static_cast<std::size_t>(in)));
    add_step(node, std::move(inputs), slot_for(graph.value(node.outputs.at(0))));
  }
  return slots;
}

enum class GradWrite : std::uint8_t { None, Write, Accumulate };

// reads[k]: the slots step k reads, in input order (a plan's own slot handles); seeded: the
// slots whose gradient the caller writes before backward runs (the graph's outputs). Returns,
// per step and input, what that step's backward does with the input's gradient.
template <typename SlotPtr, typename NeedsGrad>
std::vector<std::vector<GradWrite>> gradient_writes(const std::vector<std::vector<SlotPtr>>& reads,
                                                    std::span<const SlotPtr> seeded,
                                                    NeedsGrad needs_grad) {
  std::set<SlotPtr> written(seeded.begin(), seeded.end());
  std::vector<std::vector<GradWrite>> writes(reads.size());
  for (std::size_t k = reads.size(); k-- > 0;) {
    writes[k].assign(reads[k].size(), GradWrite::None);
    for (std::size_t i = 0; i < reads[k].size(); ++i) {
      const SlotPtr s = reads[k][i];
      if (!needs_grad(s)) continue;
      writes[k][i] = written.insert(s).second ? GradWrite::Write : GradWrite::Accumulate;
    }
  }
  return writes;
}

template <typename Plan>
class PlanCache {
 public:
  // The plan for `batch`, made by make() (a std::unique_ptr<Plan>) the first time.
  template <typename Make>
  Plan& at(std::int64_t batch, Make&& make) {
    auto it = plans_.find(batch);
    if (it == plans_.end()) it = plans_.emplace(batch, make()).first;
    return *it->second;
  }
  void clear() { plans_.clear(); }
  template <typename Visit>
  void for_each(Visit&& visit) const {
    for (const auto& [batch, plan] : plans_) visit(*plan);
  }

 private:
  std::map<std::int64_t, std::unique_ptr<Plan>> plans_;
};

}  // namespace telar::backend
