#pragma once
// Test knobs that make one worker of a CPU-only machine behave like a different device:
// `slowdown=F` stretches its forward and backward passes F times (it sleeps (F-1) times the CPU
// time each pass took on its thread, so the other workers keep the cores, and time the pass
// spent waiting for a core is not multiplied: a device F times slower takes F times the work,
// not F times the interference), and `fail_at_step=N` makes it throw
// when it starts global step N (a dying worker). Wraps the worker's backend executable.
#include <cstdint>
#include <memory>

#include "backend/executable.hpp"

namespace telar::dist {

struct Handicap {
  double slowdown = 1.0;           // >= 1
  std::int64_t fail_at_step = -1;  // < 0: never
  bool any() const { return slowdown != 1.0 || fail_at_step >= 0; }
};

class HandicappedExecutable final : public backend::Executable, private backend::NodeObserver {
 public:
  HandicappedExecutable(std::unique_ptr<backend::Executable> inner, Handicap handicap);

  void forward(std::span<const Tensor> inputs, backend::Mode mode) override;
  const Tensor& output(std::size_t i) const override { return inner_->output(i); }
  void backward(std::span<const Tensor> output_grads) override;
  graph::ParameterSet& gradients() override { return inner_->gradients(); }
  const Tensor& input_gradient(std::size_t i) const override { return inner_->input_gradient(i); }
  void parameters_updated() override { inner_->parameters_updated(); }
  void release_plans() override { inner_->release_plans(); }
  std::optional<std::int64_t> planned_bytes() const override { return inner_->planned_bytes(); }
  // The stream is the global step (the data-parallel replica passes it through unchanged).
  void set_random_stream(std::uint64_t stream) override;
  const graph::Graph& graph() const override { return inner_->graph(); }
  std::string name() const override;

 private:
  void on_node_begin(const graph::Node& node, backend::Pass pass) override;
  void on_node_end(const graph::Node& node, backend::Pass pass) override;
  void stretch(double seconds) const;

  std::unique_ptr<backend::Executable> inner_;
  Handicap handicap_;
  std::uint64_t step_ = 0;
};

}  // namespace telar::dist
