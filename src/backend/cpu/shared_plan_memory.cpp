#include "backend/cpu/shared_plan_memory.hpp"

#include <algorithm>

#include "backend/cpu/dnnl_context.hpp"

namespace telar::backend::cpu {

namespace {
// `current` if it holds `bytes`, else a new buffer of that size.
Tensor at_least(Tensor& current, std::size_t bytes) {
  if (!current.defined() || current.nbytes() < bytes)
    current = Tensor({static_cast<std::int64_t>((bytes + 3) / 4)});
  return current;
}
}  // namespace

dnnl::memory SharedPlanMemory::weights(const Tensor& param, const dnnl::memory::desc& md) {
  for (const Weights& w : weights_)
    if (w.param == param.raw() && w.md == md) return w.memory;
  weights_.push_back({param.raw(), md, dnnl::memory(md, cpu_engine())});
  return weights_.back().memory;
}

Tensor SharedPlanMemory::arena(std::size_t bytes) {
  return at_least(arena_, bytes);
}

Tensor SharedPlanMemory::gradients(std::size_t bytes) {
  return at_least(gradients_, bytes);
}

Tensor SharedPlanMemory::step_buffers(std::size_t bytes) {
  return at_least(step_buffers_, bytes);
}

Tensor SharedPlanMemory::scratch(std::size_t bytes) {
  // At least twice the last when it grows: the buffers given out before stay with their
  // primitives, so the plans hold at most about twice the largest.
  if (scratch_.defined() && scratch_.nbytes() < bytes)
    bytes = std::max(bytes, 2 * scratch_.nbytes());
  return at_least(scratch_, bytes);
}

void SharedPlanMemory::clear() {
  weights_.clear();
  arena_ = {};
  gradients_ = {};
  step_buffers_ = {};
  scratch_ = {};
}

}  // namespace telar::backend::cpu
