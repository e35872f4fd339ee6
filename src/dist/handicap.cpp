#include "dist/handicap.hpp"

#include <fmt/format.h>

#include <chrono>
#include <thread>

#include "core/clock.hpp"
#include "core/error.hpp"

namespace telar::dist {

HandicappedExecutable::HandicappedExecutable(std::unique_ptr<backend::Executable> inner,
                                             Handicap handicap)
    : inner_(std::move(inner)), handicap_(handicap) {
  require(handicap_.slowdown >= 1.0, "slowdown={} must be at least 1", handicap_.slowdown);
  inner_->set_observer(this);
}

void HandicappedExecutable::stretch(double seconds) const {
  if (handicap_.slowdown > 1.0 && seconds > 0.0)
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds * (handicap_.slowdown - 1.0)));
}

void HandicappedExecutable::set_random_stream(std::uint64_t stream) {
  step_ = stream;
  inner_->set_random_stream(stream);
}

void HandicappedExecutable::forward(std::span<const Tensor> inputs, backend::Mode mode) {
  if (mode == backend::Mode::Train && handicap_.fail_at_step >= 0 &&
      step_ == static_cast<std::uint64_t>(handicap_.fail_at_step))
    fail("this worker fails at step {} on purpose (fail_at_step={}, a test option)", step_,
         handicap_.fail_at_step);
  const std::int64_t start = thread_cpu_ns();
  inner_->forward(inputs, mode);
  stretch(static_cast<double>(thread_cpu_ns() - start) * 1e-9);
}

void HandicappedExecutable::backward(std::span<const Tensor> output_grads) {
  const std::int64_t start = thread_cpu_ns();
  inner_->backward(output_grads);
  stretch(static_cast<double>(thread_cpu_ns() - start) * 1e-9);
}

std::string HandicappedExecutable::name() const {
  std::string n = inner_->name();
  if (handicap_.slowdown != 1.0) n += fmt::format(":slowdown={}", handicap_.slowdown);
  if (handicap_.fail_at_step >= 0) n += fmt::format(":fail_at_step={}", handicap_.fail_at_step);
  return n;
}

void HandicappedExecutable::on_node_begin(const graph::Node& node, backend::Pass pass) {
  if (observer_) observer_->on_node_begin(node, pass);
}

void HandicappedExecutable::on_node_end(const graph::Node& node, backend::Pass pass) {
  if (observer_) observer_->on_node_end(node, pass);
}

}  // namespace telar::dist
