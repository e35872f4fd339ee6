#include "backend/cuda/plan.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "backend/cuda/kernels.hpp"
#include "backend/schedule.hpp"
#include "core/error.hpp"
#include "core/rng.hpp"

namespace telar::backend::cuda {

using graph::ValueKind;

namespace {

std::size_t bytes_of(const Shape& shape, DType dtype) {
  return static_cast<std::size_t>(shape_numel(shape)) * dtype_size(dtype);
}

}  // namespace

void Kernel::define_output() {
  Slot& o = out();
  o.numel = shape_numel(o.shape);
  o.storage.resize(bytes_of(o.shape, o.dtype));
  o.data = o.storage.get();
}

void Kernel::check_launch(std::string_view what) const {
  const cudaError_t status = kernels::last_launch_error();
  if (status != cudaSuccess)
    check(status,
          fmt::format("node '{}' ({}): {}", node().name, graph::op_name(node().kind), what));
}

Slot* Plan::new_slot() {
  slots_.emplace_back();
  return &slots_.back();
}

Plan::Plan(const graph::Graph& graph, DeviceParameters& device_params, Context& ctx,
           std::int64_t batch, std::uint64_t seed,
           const std::vector<graph::ValueId>& input_gradients)
    : graph_(graph), device_params_(device_params), ctx_(ctx), batch_(batch) {
  const std::vector<ValueBinding> bound = bind_values(graph, batch, input_gradients);
  auto place = [&](Slot& s, const graph::Value& v) {
    if (v.kind == ValueKind::Input) {
      if (s.dynamic()) return;
      s.storage.resize(bytes_of(s.shape, s.dtype));
      s.data = s.storage.get();
    } else {
      s.data = device_params.values.at(v.id).get();
    }
    s.numel = shape_numel(s.shape);
  };
  auto add_step = [&](const graph::Node& node, std::vector<Slot*> inputs, Slot* out) {
    KernelIO io;
    io.node = &node;
    io.inputs = std::move(inputs);
    io.output = out;
    io.seed = mix64(seed ^ (0x5eedULL + static_cast<std::uint64_t>(node.id)));
    io.ctx = &ctx;
    kernels_.push_back(make_kernel(std::move(io)));
  };
  value_slots_ = build_steps<Slot>(graph, bound, [&] { return new_slot(); }, place, add_step);
  for (graph::ValueId id : graph.outputs()) {
    const Slot* s = value_slots_.at(static_cast<std::size_t>(id));
    host_outputs_.emplace_back(s->shape, s->dtype);
  }
  accumulations_.resize(kernels_.size());
}

void Plan::prepare_backward() {
  for (Slot& s : slots_) {
    if (!s.requires_grad || s.grad) continue;
    if (s.kind == ValueKind::Parameter) {
      s.grad = device_params_.grads.at(s.id).f32();
    } else {
      s.grad_storage.resize(bytes_of(s.shape, DType::F32));
      s.grad = s.grad_storage.f32();
      // Zero once: a value no consumer sends a gradient to (a dead branch) reads as zero.
      if (s.grad_storage.bytes() > 0)
        check(cudaMemset(s.grad, 0, s.grad_storage.bytes()), "zeroing a gradient buffer");
    }
  }
  // Graph outputs are written first in backward order (by the caller's seed, or zeros).
  std::vector<std::vector<Slot*>> reads;
  for (const auto& kernel : kernels_) reads.push_back(kernel->io().inputs);
  std::vector<Slot*> seeded;
  for (graph::ValueId id : graph_.outputs())
    seeded.push_back(value_slots_.at(static_cast<std::size_t>(id)));
  const auto writes = gradient_writes(reads, std::span<Slot* const>(seeded),
                                      [](const Slot* s) { return s->requires_grad; });
  for (std::size_t k = 0; k < kernels_.size(); ++k) {
    KernelIO& io = kernels_[k]->io();
    io.input_grads.assign(io.inputs.size(), GradTarget{});
    for (std::size_t i = 0; i < io.inputs.size(); ++i) {
      Slot* s = io.inputs[i];
      if (writes[k][i] == GradWrite::Write) {
        io.input_grads[i] = {s->grad, false};
      } else if (writes[k][i] == GradWrite::Accumulate) {
        accumulations_[k].push_back({s, DeviceBuffer(bytes_of(s->shape, DType::F32))});
        io.input_grads[i] = {accumulations_[k].back().scratch.f32(), true};
      }
    }
  }
  for (auto& kernel : kernels_) kernel->prepare_backward();
  for (std::size_t i = 0; i < graph_.inputs().size(); ++i) {
    const Slot* s = value_slots_.at(static_cast<std::size_t>(graph_.inputs()[i]));
    if (s->requires_grad) host_input_grads_.emplace(i, Tensor(s->shape));
  }
  backward_ready_ = true;
}

void Plan::forward(std::span<const Tensor> inputs, Mode mode, std::uint64_t random_stream,
                   NodeObserver* observer) {
  const auto& ids = graph_.inputs();
  const auto slot_of = [&](graph::ValueId id) {
    return value_slots_[static_cast<std::size_t>(id)];
  };
  check_inputs(graph_, inputs, slot_of);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    Slot* s = slot_of(ids[i]);
    const Tensor& t = inputs[i];
    const graph::Value& v = graph_.value(ids[i]);
    if (s->dynamic()) {
      s->storage.reserve(std::max<std::size_t>(t.nbytes(), 8));  // grows only
      s->data = s->storage.get();
      s->numel = t.numel();
    }
    s->host = &t;
    if (t.nbytes() > 0)
      check(cudaMemcpyAsync(s->data, t.raw(), t.nbytes(), cudaMemcpyHostToDevice, ctx_.stream()),
            fmt::format("uploading input '{}'", v.name));
  }
  const bool training = mode == Mode::Train;
  if (training && !backward_ready_) prepare_backward();
  for (auto& kernel : kernels_) {
    if (observer) observer->on_node_begin(kernel->node(), Pass::Forward);
    kernel->forward(training, random_stream);
    if (observer) {
      ctx_.synchronize();  // so a profiling scope around the node measures the device's work
      observer->on_node_end(kernel->node(), Pass::Forward);
    }
  }
  for (std::size_t i = 0; i < host_outputs_.size(); ++i) {
    const Slot* s = value_slots_[static_cast<std::size_t>(graph_.outputs()[i])];
    Tensor& t = host_outputs_[i];
    if (t.nbytes() > 0)
      check(cudaMemcpyAsync(t.raw(), s->data, t.nbytes(), cudaMemcpyDeviceToHost, ctx_.stream()),
            "downloading the outputs");
  }
  ctx_.synchronize();
  for (std::size_t i = 0; i < ids.size(); ++i)
    value_slots_[static_cast<std::size_t>(ids[i])]->host = nullptr;
  last_forward_trained_ = training;
}

void Plan::backward(std::span<const Tensor> output_grads, NodeObserver* observer,
                    graph::ParameterSet& host_grads) {
  if (!last_forward_trained_) fail("internal: backward() needs a training-mode forward() first");
  const auto& outs = graph_.outputs();
  if (output_grads.size() > outs.size())
    fail("internal: {} output gradients for {} outputs", output_grads.size(), outs.size());
  for (std::size_t i = 0; i < outs.size(); ++i) {
    Slot* s = value_slots_[static_cast<std::size_t>(outs[i])];
    if (!s->requires_grad) continue;
    const std::size_t bytes = static_cast<std::size_t>(s->numel) * sizeof(float);
    if (i < output_grads.size() && output_grads[i].defined()) {
      if (output_grads[i].numel() != s->numel)
        fail("internal: output gradient {} has {} elements, expected {}", i,
             output_grads[i].numel(), s->numel);
      check(cudaMemcpyAsync(s->grad, output_grads[i].raw(), bytes, cudaMemcpyHostToDevice,
                            ctx_.stream()),
            "uploading the output gradients");
    } else {
      check(cudaMemsetAsync(s->grad, 0, bytes, ctx_.stream()), "zeroing an output gradient");
    }
  }
  for (std::size_t k = kernels_.size(); k-- > 0;) {
    Kernel& kernel = *kernels_[k];
    if (observer) observer->on_node_begin(kernel.node(), Pass::Backward);
    kernel.backward();
    for (auto& acc : accumulations_[k]) {
      kernels::accumulate(ctx_.stream(), acc.slot->grad, acc.scratch.f32(), acc.slot->numel);
    }
    if (!accumulations_[k].empty()) {
      const cudaError_t status = kernels::last_launch_error();
      if (status != cudaSuccess)
        check(status, fmt::format("node '{}': gradient accumulation", kernel.node().name));
    }
    if (observer) {
      // Observers may read this node's parameter gradients at its end (the data-parallel
      // replica all-reduces a bucket as soon as its last gradient is written), so they are on
      // the host before on_node_end, and never copied again after it.
      for (const Slot* in : kernel.io().inputs)
        if (in->kind == ValueKind::Parameter && in->grad) {
          Tensor& t = host_grads.at(in->id);
          check(
              cudaMemcpyAsync(t.raw(), in->grad, t.nbytes(), cudaMemcpyDeviceToHost, ctx_.stream()),
              fmt::format("downloading the gradient of '{}'", graph_.value(in->id).name));
        }
      ctx_.synchronize();
      observer->on_node_end(kernel.node(), Pass::Backward);
    }
  }
  if (!observer) {
    for (auto& [id, buffer] : device_params_.grads) {
      Tensor& t = host_grads.at(id);
      check(
          cudaMemcpyAsync(t.raw(), buffer.get(), t.nbytes(), cudaMemcpyDeviceToHost, ctx_.stream()),
          fmt::format("downloading the gradient of '{}'", graph_.value(id).name));
    }
  }
  for (auto& [i, t] : host_input_grads_) {
    const Slot* s = value_slots_[static_cast<std::size_t>(graph_.inputs()[i])];
    check(cudaMemcpyAsync(t.raw(), s->grad, t.nbytes(), cudaMemcpyDeviceToHost, ctx_.stream()),
          "downloading input gradients");
  }
  ctx_.synchronize();
}

const Tensor& Plan::input_gradient(std::size_t i) const {
  input_gradient_slot(graph_, value_slots_, i);  // checks it was compiled for a gradient
  const auto it = host_input_grads_.find(i);
  if (it == host_input_grads_.end())
    fail("internal: input_gradient() before a training-mode forward()");
  return it->second;
}

}  // namespace telar::backend::cuda
