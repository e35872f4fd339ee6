#pragma once
// One data-parallel worker's view of the model: its backend executable, plus the gradient
// exchange that makes every worker apply the same update (DDP semantics).
//
// Gradients are grouped into buckets in the order the backward pass finishes them (the last
// layers first); a bucket is handed to the worker's collective thread as soon as its last
// gradient is written, so the all-reduce of late layers overlaps with the backward pass of
// early ones. Each bucket's exchange is a weighted mean with the worker's number of samples b
// as its weight: the result is  sum_r b_r g_r / sum_r b_r,  the gradient one worker would
// compute on the whole global batch, whatever the split. A worker whose part of the global
// batch is empty still takes part, with weight zero.
//
// BatchNorm layers normalise with the statistics of the worker's own batch (as DDP without
// SyncBatchNorm). Their running statistics, which evaluation uses, are made the same on every
// worker after each step: the sample-weighted average over the workers (default; for the
// running mean it equals the update one worker would make on the global batch) or rank 0's
// values (DDP's broadcast_buffers). A group of one exchanges nothing and trains exactly as a
// lone executable.
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "backend/executable.hpp"
#include "dist/collective_queue.hpp"

namespace telar::dist {

enum class BufferSync { Average, Broadcast };

struct ReplicaOptions {
  std::size_t bucket_bytes = std::size_t{4} << 20;
  bool overlap = true;  // false: all buckets go after the backward pass
  BufferSync buffers = BufferSync::Average;
};

class ReplicaExecutable final : public backend::Executable, private backend::NodeObserver {
 public:
  ReplicaExecutable(std::unique_ptr<backend::Executable> inner, graph::ParameterSet& params,
                    CollectiveQueue& queue, ReplicaOptions options);

  void forward(std::span<const Tensor> inputs, backend::Mode mode) override;
  const Tensor& output(std::size_t i) const override;
  // Local backward, then the bucketed all-reduce; on return gradients() hold the group's
  // sample-weighted mean gradient (and buffers are synchronised).
  void backward(std::span<const Tensor> output_grads) override;
  graph::ParameterSet& gradients() override { return inner_->gradients(); }
  // The worker's own input gradients (they are not exchanged).
  const Tensor& input_gradient(std::size_t i) const override { return inner_->input_gradient(i); }
  void parameters_updated() override { inner_->parameters_updated(); }
  void release_plans() override { inner_->release_plans(); }
  std::optional<std::int64_t> planned_bytes() const override { return inner_->planned_bytes(); }
  void set_random_stream(std::uint64_t stream) override { inner_->set_random_stream(stream); }
  const graph::Graph& graph() const override { return inner_->graph(); }
  std::string name() const override { return inner_->name(); }

  // The executable without the exchange (warm-up measurements).
  backend::Executable& local() { return *inner_; }
  std::size_t bucket_count() const { return buckets_.size(); }
  // Seconds spent computing training steps (forward to the end of the local backward, not
  // waiting for the exchange) and samples trained since the last call.
  std::pair<double, std::int64_t> take_compute_stats();

 private:
  struct Bucket {
    std::vector<std::span<float>> parts;  // the gradients, in the executable's tensors
    std::size_t bytes = 0;
    bool launched = false;
  };
  void on_node_begin(const graph::Node& node, backend::Pass pass) override;
  void on_node_end(const graph::Node& node, backend::Pass pass) override;
  void launch(std::size_t bucket);
  void sync_buffers(float weight);

  std::unique_ptr<backend::Executable> inner_;
  graph::ParameterSet& params_;
  CollectiveQueue& queue_;
  ReplicaOptions options_;
  std::vector<Bucket> buckets_;
  std::vector<std::vector<std::size_t>> ready_after_node_;  // by NodeId: buckets complete there
  std::vector<graph::ValueId> buffer_ids_;                  // f32 buffers (running statistics)
  std::vector<std::span<float>> buffer_parts_;
  std::vector<Tensor> empty_outputs_;
  bool empty_step_ = false;
  bool training_step_ = false;
  std::int64_t local_samples_ = 0;
  std::int64_t forward_start_ns_ = 0;
  double compute_seconds_ = 0.0;
  std::int64_t compute_samples_ = 0;
};

}  // namespace telar::dist
