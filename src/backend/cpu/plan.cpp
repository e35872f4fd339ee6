#include "backend/cpu/plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>

#include "backend/cpu/dnnl_context.hpp"
#include "backend/cpu/ops/op_kernels.hpp"
#include "backend/schedule.hpp"
#include "core/error.hpp"
#include "core/parallel.hpp"

namespace telar::backend::cpu {

using graph::ValueKind;

void Kernel::define_output(const dnnl::memory::desc& md, bool plain) {
  Slot& o = out();
  o.md = md;
  o.plain = plain;
  o.data = allocate_for(md, o.shape, plain, io_.memory);
}

void Kernel::define_plain_output() {
  Slot& o = out();
  if (o.dtype == DType::F32 && shape_is_concrete(o.shape)) o.md = plain_f32(o.shape);
  o.plain = true;
  o.data = io_.memory ? io_.memory->allocate(o.shape, o.dtype) : Tensor(o.shape, o.dtype);
}

void Kernel::require_inference(bool training) const {
  if (training)
    fail("internal: node '{}' carries post-ops, which inference compilation sets; it cannot "
         "run a training-mode forward",
         node().name);
}

bool Plan::overwritable(const Slot& value, const graph::Node& reader) const {
  if (value.kind != ValueKind::Activation || value.dtype != DType::F32) return false;
  const graph::Value& v = graph_.value(value.id);
  const auto& outputs = graph_.outputs();
  if (std::find(outputs.begin(), outputs.end(), v.id) != outputs.end()) return false;
  if (std::count(reader.inputs.begin(), reader.inputs.end(), v.id) != 1 ||
      graph_.consumers(v.id).size() != 1)
    return false;
  return v.producer >= 0 && !op_kernels(graph_.node(v.producer).kind).backward_reads_output;
}

Slot* Plan::new_slot() {
  slots_.emplace_back();
  return &slots_.back();
}

Plan::Plan(const graph::Graph& graph, graph::ParameterSet& params, graph::ParameterSet& grads,
           std::int64_t batch, const PlanOptions& options)
    : graph_(graph), grads_(grads), batch_(batch), options_(options) {
  if (options.memory == PlanMemory::Own) {
    build(params);
    return;
  }
  memory_ = Memory::Trial;
  build(params);
  const ArenaLayout layout = pack_buffers(trial_lifetimes());
  offsets_ = layout.offsets;
  clear();
  memory_ = Memory::Arena;
  arena_ = memory().arena(static_cast<std::size_t>(layout.bytes));
  build(params);
  if (arena_mismatch_ || next_buffer_ != offsets_.size()) {
    clear();
    arena_ = {};
    memory_ = Memory::Own;
    build(params);
  }
  trial_buffers_.clear();
  memory_ = Memory::Own;  // values bound later (none today) get buffers of their own
}

std::vector<BufferLife> Plan::trial_lifetimes() const {
  std::map<const Storage*, std::size_t> buffer_of;  // views and aliases share the storage
  for (std::size_t i = 0; i < trial_buffers_.size(); ++i)
    buffer_of[trial_buffers_[i].storage()] = i;
  std::vector<BufferLife> lives(trial_buffers_.size());
  std::vector<bool> used(trial_buffers_.size(), false);
  const auto use = [&](const Slot* s, std::size_t step) {
    const auto it = s->data.defined() ? buffer_of.find(s->data.storage()) : buffer_of.end();
    if (it == buffer_of.end()) return;
    BufferLife& life = lives[it->second];
    life.first = used[it->second] ? std::min(life.first, step) : step;
    life.last = used[it->second] ? std::max(life.last, step) : step;
    used[it->second] = true;
  };
  for (std::size_t k = 0; k < steps_.size(); ++k) {
    const KernelIO& io = steps_[k].kernel->io();
    for (const Slot* in : io.inputs) use(in, k);
    use(io.output, k);
  }
  // The outputs are read after the last step; a buffer no step uses lives throughout.
  const std::size_t end = steps_.size();
  for (const Slot* s : output_slots_) use(s, end);
  for (graph::ValueId id : graph_.outputs())
    use(value_slots_.at(static_cast<std::size_t>(id)), end);
  for (std::size_t i = 0; i < lives.size(); ++i) {
    lives[i].bytes = static_cast<std::int64_t>(trial_buffers_[i].nbytes());
    if (!used[i] || options_.memory == PlanMemory::Training) {
      lives[i].first = 0;
      lives[i].last = end;
    }
  }
  return lives;
}

Tensor Plan::allocate(const Shape& shape, DType dtype) {
  switch (memory_) {
    case Memory::Trial:
      return trial_buffers_.emplace_back(Tensor::unwritten(shape, dtype));
    case Memory::Arena: {
      const std::size_t i = next_buffer_++;
      const auto bytes = static_cast<std::size_t>(shape_numel(shape)) * dtype_size(dtype);
      if (i < offsets_.size() && trial_buffers_[i].nbytes() == bytes)
        return arena_.view(static_cast<std::size_t>(offsets_[i]), shape, dtype);
      arena_mismatch_ = true;
      break;
    }
    case Memory::Own:
      break;
  }
  return Tensor(shape, dtype);
}

Tensor Plan::scratch(std::size_t bytes) {
  return memory().scratch(bytes);
}

void Plan::clear() {
  steps_.clear();  // the kernels first: they point at the slots
  shared_conversions_.clear();
  output_slots_.clear();
  value_slots_.clear();
  accumulations_.clear();
  step_buffers_.clear();
  gradient_arena_ = {};
  step_buffer_arena_ = {};
  unwritten_gradients_.clear();
  slots_.clear();
  own_.clear();
}

void Plan::build(graph::ParameterSet& params) {
  const graph::Graph& graph = graph_;
  const PlanOptions& options = options_;
  const std::vector<ValueBinding> bound = bind_values(graph, batch_, options.input_gradients);
  // Precision::INT8: each value's calibrated encoding (kernels decide whether to store it so).
  auto calibrated = [&](Slot& s) {
    if (!options.int8) return;
    const auto it = options.int8->ranges.find(graph.value(s.id).name);
    if (it != options.int8->ranges.end()) s.int8 = int8_encoding(it->second);
  };
  auto place = [&](Slot& s, const graph::Value& v) {
    if (v.dtype == DType::F32 && shape_is_concrete(s.shape)) s.md = plain_f32(s.shape);
    if (v.kind == ValueKind::Input) {
      calibrated(s);
      if (!s.dynamic()) s.data = Tensor(s.shape, s.dtype);
    } else {
      s.data = params.at(v.id);  // shares the caller's storage
    }
  };
  auto add_step = [&](const graph::Node& node, std::vector<Slot*> inputs, Slot* out) {
    building_node_ = &node;
    KernelIO io;
    io.node = &node;
    io.inputs = std::move(inputs);
    io.output = out;
    io.seed = mix64(options.seed ^ (0x5eedULL + static_cast<std::uint64_t>(node.id)));
    io.params_version = options.params_version;
    io.bf16 = options.bf16;
    io.winograd = options.winograd;
    io.inference = options.inference;
    io.int8 = options.int8 && !options.int8->excluded.count(node.name);
    io.memory = this;
    io.shared = options.shared;
    calibrated(*out);
    if (options.memory == PlanMemory::Training)
      for (Slot* in : io.inputs) in->overwritable = overwritable(*in, node);
    const OpKernels& kernels = op_kernels(node.kind);
    if (!(kernels.int8 && options.use_dnnl && io.int8))
      for (Slot*& in : io.inputs)
        if (is_int8(in->md)) in = to_plain(in);
    std::unique_ptr<Kernel> kernel;
    try {
      if (options.use_dnnl && kernels.fast) kernel = kernels.fast(io, *this);
    } catch (const dnnl::error& e) {
      fail("internal: oneDNN could not set up node '{}' ({} {}): {}", node.name,
           graph::op_name(node.kind), shape_str(out->shape), e.what());
    }
    if (!kernel) {
      for (Slot*& in : io.inputs)
        if (in->dtype == DType::F32 && !in->plain) in = to_plain(in);
      kernel = kernels.reference(io);
    }
    steps_.push_back({std::move(kernel), &node, false});
  };
  value_slots_ = build_steps<Slot>(graph, bound, [&] { return new_slot(); }, place, add_step);
  building_node_ = nullptr;
  for (graph::ValueId id : graph.outputs()) {
    Slot* s = value_slots_.at(static_cast<std::size_t>(id));
    output_slots_.push_back(s->dtype == DType::F32 && !s->plain ? to_plain(s) : s);
  }
  accumulations_.resize(steps_.size());
}

std::int64_t Plan::held_bytes(std::set<const void*>& seen) const {
  std::int64_t bytes = 0;
  const auto in_arena = [&](const Tensor& t) {
    for (const Tensor* a : {&arena_, &gradient_arena_})
      if (a->defined() && t.storage() == a->storage()) return true;
    return false;
  };
  const auto add = [&](const Tensor& t) {
    if (t.defined() && in_arena(t)) return;  // the arenas are counted whole
    if (t.defined() && t.numel() > 0 && seen.insert(t.raw()).second)
      bytes += static_cast<std::int64_t>(t.nbytes());
  };
  for (const Tensor* a : {&arena_, &gradient_arena_, &step_buffer_arena_})
    if (a->defined() && seen.insert(a->raw()).second)
      bytes += static_cast<std::int64_t>(a->nbytes());
  for (const Slot& s : slots_) {
    add(s.data);
    add(s.grad);
  }
  for (const auto& step : accumulations_)
    for (const Accumulation& a : step) add(a.scratch);
  std::vector<HeldBuffer> buffers;
  for (const Step& s : steps_) s.kernel->held_buffers(buffers);
  for (const HeldBuffer& b : buffers)
    if (b.bytes > 0 && seen.insert(b.address).second) bytes += b.bytes;
  return bytes;
}

std::vector<graph::ValueId> Plan::converted_values() const {
  std::vector<graph::ValueId> out;
  for (const Step& s : steps_)
    if (s.is_conversion) out.push_back(s.kernel->io().inputs.at(0)->id);
  return out;
}

namespace {
// Whether `s` holds its value in layout `md` (and, for int8 storage, at `scale`).
bool holds(const Slot& s, const dnnl::memory::desc& md, float scale) {
  return s.md == md && (!is_int8(md) || s.int8.scale == scale);
}
// The scale a conversion of `from` quantizes to: the one asked for, else `from`'s own.
float scale_for(const Slot& from, float int8_scale) {
  return int8_scale > 0.0f ? int8_scale : from.int8.scale;
}
}  // namespace

Slot* Plan::convert(Slot* from, const dnnl::memory::desc& md, float int8_scale) {
  const float scale = scale_for(*from, int8_scale);
  if (holds(*from, md, scale)) return from;
  // Values are written once (a sum post-op writes over its summand only after the summand's
  // other readers, and over a conversion of its own), so a conversion serves every later
  // reader: ResNet's block input, read by a strided convolution and its projection shortcut,
  // is reordered once.
  for (const Conversion& c : shared_conversions_)
    if (c.from == from && holds(*c.to, md, scale)) return c.to;
  Slot* to = converted(from, md, scale);
  shared_conversions_.push_back({from, to});
  return to;
}

Slot* Plan::convert_to_overwrite(Slot* from, const dnnl::memory::desc& md, float int8_scale) {
  const float scale = scale_for(*from, int8_scale);
  return holds(*from, md, scale) ? from : converted(from, md, scale);
}

Slot* Plan::converted(Slot* from, const dnnl::memory::desc& md, float scale) {
  if ((is_int8(md) || is_int8(from->md)) && scale <= 0.0f)
    fail("internal: value '{}' has no calibrated int8 encoding to convert with",
         graph_.value(from->id).name);
  Slot* s = new_slot();
  s->id = from->id;
  s->kind = ValueKind::Activation;
  s->dtype = from->dtype;
  s->shape = from->shape;
  s->md = md;
  s->int8 = {is_int8(md) ? md.data_type() == dnnl::memory::data_type::u8 : from->int8.is_unsigned,
             scale};
  s->plain = is_plain(md, from->shape);
  s->requires_grad = from->requires_grad;
  s->data = allocate_for(md, s->shape, s->plain, this);
  KernelIO io;
  io.node = building_node_;
  io.inputs = {from};
  io.output = s;
  io.memory = this;
  steps_.push_back({make_reorder_kernel(io), building_node_, true});
  return s;
}

Slot* Plan::to_plain(Slot* from) {
  return convert(from, plain_f32(from->shape));
}

void Plan::prepare_backward() {
  // Graph outputs are written first in backward order (by the caller's seed, or zeros).
  std::vector<std::vector<Slot*>> reads;
  for (const auto& step : steps_) reads.push_back(step.kernel->io().inputs);
  const auto writes = gradient_writes(reads, std::span<Slot* const>(output_slots_),
                                      [](const Slot* s) { return s->requires_grad; });
  place_gradients(writes);
  for (std::size_t k = 0; k < steps_.size(); ++k) {
    KernelIO& io = steps_[k].kernel->io();
    io.input_grads.assign(io.inputs.size(), GradTarget{});
    std::size_t accumulation = 0;
    for (std::size_t i = 0; i < io.inputs.size(); ++i) {
      if (writes[k][i] == GradWrite::Write)
        io.input_grads[i] = {&io.inputs[i]->grad, false};
      else if (writes[k][i] == GradWrite::Accumulate)
        io.input_grads[i] = {&accumulations_[k].at(accumulation++).scratch, true};
    }
    preparing_step_ = k;
    steps_[k].kernel->prepare_backward();
  }
  place_step_buffers();
  backward_ready_ = true;
}

void Plan::place_gradients(const std::vector<std::vector<GradWrite>>& writes) {
  for (std::size_t k = 0; k < steps_.size(); ++k) {
    const KernelIO& io = steps_[k].kernel->io();
    for (std::size_t i = 0; i < io.inputs.size(); ++i)
      if (writes[k][i] == GradWrite::Accumulate) accumulations_[k].push_back({io.inputs[i], {}});
  }
  // Each buffer, with its lifetime in backward order: step k's backward runs at time
  // end - 1 - k. A gradient lives from the step that first writes it (its last reader's) to its
  // producer's, which reads it; the outputs' from the start (the caller seeds them), the inputs'
  // whose gradients the caller asked for to the end; one that nothing writes holds zeros
  // throughout. An accumulation buffer lives in its step alone.
  struct Wanted {
    Tensor* tensor;
    Shape shape;
  };
  std::vector<Wanted> wanted;
  std::vector<BufferLife> lives;
  std::map<const Slot*, std::size_t> buffer_of;
  const std::size_t end = steps_.size();
  for (Slot& s : slots_) {
    if (!s.requires_grad || s.grad.defined()) continue;
    if (s.kind == ValueKind::Parameter) {
      s.grad = grads_.at(s.id);  // parameter slots share the caller-visible gradient tensors
      continue;
    }
    buffer_of[&s] = wanted.size();
    wanted.push_back({&s.grad, storage_shape(s.md, s.shape, s.plain)});
    lives.push_back({0, end, 0});
  }
  std::vector<bool> written(wanted.size(), false);
  const auto touch = [&](const Slot* s, std::size_t time, bool writes_it) {
    const auto it = buffer_of.find(s);
    if (it == buffer_of.end()) return;
    BufferLife& life = lives[it->second];
    life.first = std::min(life.first, time);
    life.last = std::max(life.last, time);
    if (writes_it) written[it->second] = true;
  };
  for (const Slot* s : output_slots_) touch(s, 0, true);
  for (std::size_t k = 0; k < steps_.size(); ++k) {
    const KernelIO& io = steps_[k].kernel->io();
    const std::size_t time = end - 1 - k;
    touch(io.output, time, false);
    for (std::size_t i = 0; i < io.inputs.size(); ++i)
      if (writes[k][i] != GradWrite::None) touch(io.inputs[i], time, true);
  }
  for (graph::ValueId id : options_.input_gradients)
    touch(value_slots_.at(static_cast<std::size_t>(id)), end, false);
  for (std::size_t b = 0; b < wanted.size(); ++b)
    if (!written[b]) {
      lives[b] = {lives[b].bytes, 0, end};
      unwritten_gradients_.push_back(wanted[b].tensor);
    }
  for (std::size_t k = 0; k < steps_.size(); ++k)
    for (Accumulation& a : accumulations_[k]) {
      const Slot& s = *a.slot;
      wanted.push_back({&a.scratch, storage_shape(s.md, s.shape, s.plain)});
      lives.push_back({0, end - 1 - k, end - 1 - k});
    }
  for (std::size_t b = 0; b < wanted.size(); ++b)
    lives[b].bytes = shape_numel(wanted[b].shape) * static_cast<std::int64_t>(sizeof(float));
  if (options_.memory != PlanMemory::Training) {
    for (Wanted& w : wanted) *w.tensor = Tensor(w.shape);
    return;
  }
  const ArenaLayout layout = pack_buffers(lives);
  gradient_arena_ = memory().gradients(static_cast<std::size_t>(layout.bytes));
  for (std::size_t b = 0; b < wanted.size(); ++b)
    *wanted[b].tensor = gradient_arena_.view(static_cast<std::size_t>(layout.offsets[b]),
                                             wanted[b].shape, DType::F32);
}

dnnl::memory Plan::step_buffer(const dnnl::memory::desc& md) {
  return step_buffers_
      .emplace_back(StepBuffer{preparing_step_, dnnl::memory(md, cpu_engine(), DNNL_MEMORY_NONE)})
      .memory;
}

void Plan::place_step_buffers() {
  if (step_buffers_.empty()) return;
  std::vector<BufferLife> lives;
  for (const StepBuffer& b : step_buffers_)
    lives.push_back({static_cast<std::int64_t>(b.memory.get_desc().get_size()), b.step, b.step});
  const ArenaLayout layout = pack_buffers(lives);
  step_buffer_arena_ = memory().step_buffers(static_cast<std::size_t>(layout.bytes));
  for (std::size_t b = 0; b < step_buffers_.size(); ++b)
    step_buffers_[b].memory.set_data_handle(static_cast<char*>(step_buffer_arena_.raw()) +
                                            layout.offsets[b]);
}

namespace {
// The rows [rows.begin, rows.begin + rows_here) of a tensor of `total_rows` rows.
const void* row_block(const Tensor& t, RowRange rows, std::int64_t rows_here) {
  const std::size_t row_bytes = t.nbytes() / static_cast<std::size_t>(std::max<std::int64_t>(t.dim(0), 1));
  if (rows.end - rows.begin != rows_here || rows.end > t.dim(0))
    fail("internal: rows [{}, {}) of {} do not fit a plan of {} rows", rows.begin, rows.end,
         shape_str(t.shape()), rows_here);
  return static_cast<const char*>(t.raw()) + static_cast<std::size_t>(rows.begin) * row_bytes;
}
}  // namespace

void Plan::forward(std::span<const Tensor> inputs, Mode mode, std::uint64_t random_stream,
                   NodeObserver* observer, RowRange rows) {
  const auto& ids = graph_.inputs();
  const auto slot_of = [&](graph::ValueId id) {
    return value_slots_[static_cast<std::size_t>(id)];
  };
  check_inputs(graph_, inputs, slot_of, rows.whole());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    Slot* s = slot_of(ids[i]);
    const Tensor& t = inputs[i];
    if (!rows.whole()) {
      const graph::Value& v = graph_.value(ids[i]);
      if (s->dynamic() || t.rank() != static_cast<int>(s->shape.size()) ||
          !std::equal(s->shape.begin() + 1, s->shape.end(), t.shape().begin() + 1))
        fail("internal: input '{}' {} cannot be split into rows of {}", v.name,
             shape_str(t.shape()), shape_str(s->shape));
      std::memcpy(s->data.raw(), row_block(t, rows, batch_), s->data.nbytes());
    } else if (s->dynamic()) {
      s->data = t;
    } else {
      std::memcpy(s->data.raw(), t.raw(), t.nbytes());
    }
  }
  const bool training = mode == Mode::Train;
  if (training && options_.memory == PlanMemory::Inference)
    fail("internal: a plan whose values share memory (inference) cannot run a training forward");
  if (training && !backward_ready_) prepare_backward();
  for (std::size_t k = 0; k < steps_.size(); ++k) {
    const graph::Node* node = steps_[k].node;
    const bool first = node && (k == 0 || steps_[k - 1].node != node);
    const bool last = node && (k + 1 == steps_.size() || steps_[k + 1].node != node);
    if (observer && first) observer->on_node_begin(*node, Pass::Forward);
    try {
      steps_[k].kernel->forward(training, random_stream);
    } catch (const dnnl::error& e) {
      fail("internal: oneDNN failed in the forward pass of node '{}': {}",
           node ? node->name : "(output)", e.what());
    }
    if (observer && last) observer->on_node_end(*node, Pass::Forward);
  }
  cpu_stream().wait();
  last_forward_trained_ = training;
}

void Plan::backward(std::span<const Tensor> output_grads, NodeObserver* observer, RowRange rows,
                    float scalar_scale) {
  if (!last_forward_trained_) fail("internal: backward() needs a training-mode forward() first");
  if (output_grads.size() > output_slots_.size())
    fail("internal: {} output gradients for {} outputs", output_grads.size(), output_slots_.size());
  for (std::size_t i = 0; i < output_slots_.size(); ++i) {
    Slot* s = output_slots_[i];
    if (!s->requires_grad) continue;
    if (i < output_grads.size() && output_grads[i].defined() && !rows.whole()) {
      const Tensor& g = output_grads[i];
      if (s->grad.rank() == 0 && g.numel() == 1) {
        s->grad.f32()[0] = g.f32()[0] * scalar_scale;
      } else {
        if (g.rank() != s->grad.rank() || g.numel() / std::max<std::int64_t>(g.dim(0), 1) !=
                                              s->grad.numel() / std::max<std::int64_t>(batch_, 1))
          fail("internal: output gradient {} {} cannot be split into rows of {}", i,
               shape_str(g.shape()), shape_str(s->grad.shape()));
        std::memcpy(s->grad.raw(), row_block(g, rows, batch_), s->grad.nbytes());
      }
    } else if (i < output_grads.size() && output_grads[i].defined()) {
      if (output_grads[i].numel() != s->grad.numel())
        fail("internal: output gradient {} has {} elements, expected {}", i,
             output_grads[i].numel(), s->grad.numel());
      std::memcpy(s->grad.raw(), output_grads[i].raw(), s->grad.nbytes());
    } else {
      s->grad.zero();
    }
  }
  for (Tensor* g : unwritten_gradients_) g->zero();
  for (std::size_t k = steps_.size(); k-- > 0;) {
    const graph::Node* node = steps_[k].node;
    const bool first = node && (k + 1 == steps_.size() || steps_[k + 1].node != node);
    const bool last = node && (k == 0 || steps_[k - 1].node != node);
    if (observer && first) observer->on_node_begin(*node, Pass::Backward);
    try {
      steps_[k].kernel->backward();
    } catch (const dnnl::error& e) {
      fail("internal: oneDNN failed in the backward pass of node '{}': {}",
           node ? node->name : "(output)", e.what());
    }
    for (auto& acc : accumulations_[k]) {
      float* dst = acc.slot->grad.data<float>();
      const float* src = acc.scratch.data<float>();
      const std::int64_t n = acc.slot->grad.numel();
      parallel_for(0, n, n > 65536, [&](std::int64_t j) { dst[j] += src[j]; });
    }
    if (observer && last) observer->on_node_end(*node, Pass::Backward);
  }
  cpu_stream().wait();
}

const Tensor& Plan::output(std::size_t i) const {
  return output_slots_.at(i)->data;
}

const Tensor& Plan::input_gradient(std::size_t i) const {
  const Slot& s = input_gradient_slot(graph_, value_slots_, i);
  if (!s.grad.defined()) fail("internal: input_gradient() before a training-mode forward()");
  return s.grad;
}

}  // namespace telar::backend::cpu
