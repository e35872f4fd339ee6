#include "train/optim/optimizer.hpp"

#include <cmath>

#include "core/error.hpp"

namespace telar::train {

using graph::ValueId;

namespace {
constexpr std::string_view kStepSlot = "step";

std::size_t index_of(ValueId id) {
  return static_cast<std::size_t>(id);
}
}  // namespace

Tensor& Optimizer::slot(std::size_t slot, ValueId id, const Tensor& param) {
  graph::ParameterSet& set = slots_[slot];
  if (!set.has(id)) set.set(id, Tensor(param.shape(), DType::F32));
  return set.at(id);
}

std::int64_t Optimizer::count_step(ValueId id) {
  if (index_of(id) >= steps_.size()) steps_.resize(index_of(id) + 1, 0);
  return ++steps_[index_of(id)];
}

std::int64_t Optimizer::steps_taken(ValueId id) const {
  return id >= 0 && index_of(id) < steps_.size() ? steps_[index_of(id)] : 0;
}

void Optimizer::require_non_negative(float value, std::string_view what, std::string_view hint) {
  require(std::isfinite(value) && value >= 0.0f, "{} {} is not a number >= 0; {}", what, value,
          hint);
}

Optimizer::Update Optimizer::update_of(graph::ParameterSet& params,
                                       const graph::ParameterSet& grads, ValueId id) {
  require(params.has(id) && grads.has(id),
          "internal: optimizer step for value {} without a {} tensor", id,
          params.has(id) ? "gradient" : "parameter");
  const Tensor& p = params.at(id);
  const Tensor& g = grads.at(id);
  require(p.dtype() == DType::F32 && g.dtype() == DType::F32 && p.numel() == g.numel(),
          "internal: parameter {} is {} {} but its gradient is {} {}", id, dtype_name(p.dtype()),
          shape_str(p.shape()), dtype_name(g.dtype()), shape_str(g.shape()));
  Tensor& param = params.at(id);
  return Update{param, param.f32(), g.f32(), param.numel()};
}

NamedTensors Optimizer::state(const graph::Graph& graph) const {
  NamedTensors out;
  const std::size_t value_count = graph.values().size();
  for (std::size_t i = 0; i < value_count; ++i) {
    const auto id = static_cast<ValueId>(i);
    const std::string& param_name = graph.value(id).name;
    for (std::size_t s = 0; s < slot_names_.size(); ++s)
      if (slots_[s].has(id)) out.push_back({param_name + "/" + slot_names_[s], slots_[s].at(id)});
    if (steps_taken(id) > 0) {
      Tensor count({1}, DType::I64);
      count.data<std::int64_t>()[0] = steps_taken(id);
      out.push_back({param_name + "/" + std::string(kStepSlot), count});
    }
  }
  return out;
}

void Optimizer::load_state(const graph::Graph& graph, const NamedTensors& state) {
  // Validate everything into staging containers first, so a bad entry leaves the optimizer
  // as it was.
  std::vector<graph::ParameterSet> new_slots(slot_names_.size());
  std::vector<std::int64_t> new_steps;
  for (const NamedTensor& entry : state) {
    const std::size_t slash = entry.name.rfind('/');
    require(slash != std::string::npos,
            "optimizer state entry '{}' is not of the form PARAMETER/SLOT; the checkpoint is "
            "damaged or was not written by telar",
            entry.name);
    const std::string param_name = entry.name.substr(0, slash);
    const std::string slot_name = entry.name.substr(slash + 1);
    const graph::Value* value = graph.find_value(param_name);
    require(value != nullptr && value->kind == graph::ValueKind::Parameter,
            "{} state names parameter '{}', which model '{}' does not have; the state belongs to "
            "another model, start a new run or use that model",
            name(), param_name, graph.name());
    if (slot_name == kStepSlot) {
      require(entry.tensor.dtype() == DType::I64 && entry.tensor.numel() == 1 &&
                  entry.tensor.data<std::int64_t>()[0] >= 0,
              "{} state entry '{}' is not a step count; the checkpoint is damaged", name(),
              entry.name);
      if (index_of(value->id) >= new_steps.size()) new_steps.resize(index_of(value->id) + 1, 0);
      new_steps[index_of(value->id)] = entry.tensor.data<std::int64_t>()[0];
      continue;
    }
    std::size_t s = 0;
    while (s < slot_names_.size() && slot_names_[s] != slot_name) ++s;
    require(s < slot_names_.size(),
            "{} state entry '{}' has slot '{}', which {} does not keep; the state was written by "
            "another optimizer, resume with that optimizer",
            name(), entry.name, slot_name, name());
    require(entry.tensor.dtype() == DType::F32 && entry.tensor.shape() == value->shape,
            "{} state entry '{}' is {} {} but parameter '{}' is f32 {}; the state belongs to "
            "another model",
            name(), entry.name, dtype_name(entry.tensor.dtype()), shape_str(entry.tensor.shape()),
            param_name, shape_str(value->shape));
    new_slots[s].set(value->id, entry.tensor.clone());
  }
  slots_ = std::move(new_slots);
  steps_ = std::move(new_steps);
}

void Optimizer::reset() {
  for (auto& set : slots_) set = graph::ParameterSet();
  steps_.clear();
}

}  // namespace telar::train
