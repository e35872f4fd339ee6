#include "dist/replica_executable.hpp"

#include "core/clock.hpp"
#include "core/error.hpp"

namespace telar::dist {

ReplicaExecutable::ReplicaExecutable(std::unique_ptr<backend::Executable> inner,
                                     graph::ParameterSet& params, CollectiveQueue& queue,
                                     ReplicaOptions options)
    : inner_(std::move(inner)), params_(params), queue_(queue), options_(options) {
  const graph::Graph& g = inner_->graph();
  inner_->set_observer(this);
  // A parameter's gradient is final once the backward pass of its first reader (in forward
  // order) has run: the backward pass visits readers last to first.
  const auto& nodes = g.nodes();
  std::vector<graph::NodeId> first_reader(g.values().size(), -1);
  for (const graph::Node& n : nodes)
    for (graph::ValueId in : n.inputs)
      if (first_reader[static_cast<std::size_t>(in)] < 0) first_reader[static_cast<std::size_t>(in)] = n.id;
  ready_after_node_.assign(nodes.size(), {});
  std::vector<graph::ValueId> order;  // parameters in the order their gradients complete
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it)
    for (graph::ValueId p : g.parameters())
      if (first_reader[static_cast<std::size_t>(p)] == it->id) order.push_back(p);
  for (graph::ValueId p : g.parameters())  // never read: zero gradients, last bucket
    if (first_reader[static_cast<std::size_t>(p)] < 0) order.push_back(p);

  graph::ParameterSet& grads = inner_->gradients();
  Bucket current;
  graph::NodeId last_node = -1;
  auto close = [&](graph::NodeId ready_node) {
    if (ready_node >= 0) ready_after_node_[static_cast<std::size_t>(ready_node)].push_back(buckets_.size());
    buckets_.push_back(std::move(current));
    current = Bucket{};
  };
  for (graph::ValueId p : order) {
    Tensor& grad = grads.at(p);
    current.parts.emplace_back(grad.f32(), static_cast<std::size_t>(grad.numel()));
    current.bytes += grad.nbytes();
    last_node = first_reader[static_cast<std::size_t>(p)];
    if (current.bytes >= options_.bucket_bytes) close(last_node);
  }
  // The last bucket (with any never-read parameters) goes after the backward pass.
  if (!current.parts.empty() || buckets_.empty()) close(-1);

  for (graph::ValueId b : g.buffers())
    if (params_.has(b) && params_.at(b).dtype() == DType::F32) {
      buffer_ids_.push_back(b);
      Tensor& t = params_.at(b);
      buffer_parts_.emplace_back(t.f32(), static_cast<std::size_t>(t.numel()));
    }
}

void ReplicaExecutable::forward(std::span<const Tensor> inputs, backend::Mode mode) {
  const std::int64_t batch = inputs.empty() || inputs[0].rank() == 0 ? 0 : inputs[0].dim(0);
  training_step_ = mode == backend::Mode::Train;
  empty_step_ = batch == 0;
  forward_start_ns_ = now_ns();
  if (training_step_) local_samples_ = batch;
  if (!empty_step_) {
    inner_->forward(inputs, mode);
    return;
  }
  if (empty_outputs_.empty()) {
    const graph::Graph& g = inner_->graph();
    for (graph::ValueId id : g.outputs()) {
      Shape shape = g.value(id).shape;
      if (!shape.empty() && shape[0] == kBatchDim) shape[0] = 0;
      for (auto& d : shape)
        if (d < 0) d = 0;
      empty_outputs_.emplace_back(shape, g.value(id).dtype);
    }
  }
}

const Tensor& ReplicaExecutable::output(std::size_t i) const {
  return empty_step_ ? empty_outputs_.at(i) : inner_->output(i);
}

std::pair<double, std::int64_t> ReplicaExecutable::take_compute_stats() {
  std::pair<double, std::int64_t> r{compute_seconds_, compute_samples_};
  compute_seconds_ = 0.0;
  compute_samples_ = 0;
  return r;
}

void ReplicaExecutable::backward(std::span<const Tensor> output_grads) {
  require(training_step_, "internal: backward() needs a training-mode forward() first");
  for (Bucket& b : buckets_) b.launched = false;
  if (!empty_step_) {
    inner_->backward(output_grads);  // launches buckets from on_node_end when overlapping
    compute_seconds_ += static_cast<double>(now_ns() - forward_start_ns_) * 1e-9;
    compute_samples_ += local_samples_;
  }
  // A group of one has nothing to exchange: its gradient is already the group's (exactly;
  // the weighted mean of one member would round g * b / b).
  if (queue_.size() == 1 && !empty_step_) return;
  for (std::size_t k = 0; k < buckets_.size(); ++k)
    if (!buckets_[k].launched) launch(k);
  if (!buffer_ids_.empty()) {
    const float weight = static_cast<float>(local_samples_);
    queue_.submit([this, weight] { sync_buffers(weight); });
  }
  queue_.drain();
}

void ReplicaExecutable::launch(std::size_t k) {
  buckets_[k].launched = true;
  const float weight = empty_step_ ? 0.0f : static_cast<float>(local_samples_);
  queue_.submit([this, k, weight] {
    queue_.comm().all_reduce_weighted_mean(buckets_[k].parts, weight);
  });
}

// Runs on the collective thread, after the gradient buckets.
void ReplicaExecutable::sync_buffers(float weight) {
  if (options_.buffers == BufferSync::Average) {
    queue_.comm().all_reduce_weighted_mean(buffer_parts_, weight);
    return;
  }
  for (graph::ValueId id : buffer_ids_) {
    Tensor& t = params_.at(id);
    queue_.comm().broadcast(std::span<std::byte>(static_cast<std::byte*>(t.raw()), t.nbytes()), 0);
  }
}

void ReplicaExecutable::on_node_begin(const graph::Node& node, backend::Pass pass) {
  if (observer_) observer_->on_node_begin(node, pass);
}

void ReplicaExecutable::on_node_end(const graph::Node& node, backend::Pass pass) {
  if (observer_) observer_->on_node_end(node, pass);
  if (pass != backend::Pass::Backward || !options_.overlap || !training_step_ || queue_.size() == 1)
    return;
  for (std::size_t k : ready_after_node_[static_cast<std::size_t>(node.id)])
    if (!buckets_[k].launched) launch(k);
}

}  // namespace telar::dist
