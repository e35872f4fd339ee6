#include "graph/parameters.hpp"

#include "core/error.hpp"
#include "core/rng.hpp"

namespace telar::graph {

ParameterSet ParameterSet::initialize(const Graph& graph, std::uint64_t seed) {
  ParameterSet set;
  for (const auto& v : graph.values()) {
    if (v.kind != ValueKind::Parameter && v.kind != ValueKind::Buffer) continue;
    Tensor t(v.shape);
    float* p = t.f32();
    const std::int64_t n = t.numel();
    Rng rng = Rng::derive(seed, static_cast<std::uint64_t>(v.id));
    switch (v.init.kind) {
      case Initializer::Kind::Zeros: break;
      case Initializer::Kind::Ones: t.fill(1.0f); break;
      case Initializer::Kind::Constant: t.fill(v.init.a); break;
      case Initializer::Kind::Uniform:
        for (std::int64_t i = 0; i < n; ++i) p[i] = rng.uniform(v.init.a, v.init.b);
        break;
      case Initializer::Kind::Normal:
        for (std::int64_t i = 0; i < n; ++i) p[i] = rng.normal(v.init.a, v.init.b);
        break;
    }
    set.set(v.id, std::move(t));
  }
  return set;
}

ParameterSet ParameterSet::zeros_like_parameters(const Graph& graph) {
  ParameterSet set;
  for (ValueId id : graph.parameters()) set.set(id, Tensor(graph.value(id).shape));
  return set;
}

bool ParameterSet::has(ValueId id) const {
  return id >= 0 && static_cast<std::size_t>(id) < tensors_.size() &&
         tensors_[static_cast<std::size_t>(id)].defined();
}

Tensor& ParameterSet::at(ValueId id) {
  if (!has(id)) fail("internal: no tensor for value {}", id);
  return tensors_[static_cast<std::size_t>(id)];
}

const Tensor& ParameterSet::at(ValueId id) const {
  if (!has(id)) fail("internal: no tensor for value {}", id);
  return tensors_[static_cast<std::size_t>(id)];
}

void ParameterSet::set(ValueId id, Tensor t) {
  if (static_cast<std::size_t>(id) >= tensors_.size()) tensors_.resize(static_cast<std::size_t>(id) + 1);
  tensors_[static_cast<std::size_t>(id)] = std::move(t);
}

std::vector<ValueId> ParameterSet::ids() const {
  std::vector<ValueId> out;
  for (std::size_t i = 0; i < tensors_.size(); ++i)
    if (tensors_[i].defined()) out.push_back(static_cast<ValueId>(i));
  return out;
}

std::int64_t ParameterSet::total_bytes() const {
  std::int64_t n = 0;
  for (const auto& t : tensors_)
    if (t.defined()) n += static_cast<std::int64_t>(t.nbytes());
  return n;
}

void ParameterSet::zero() {
  for (auto& t : tensors_) t.zero();
}

}  // namespace telar::graph
