#pragma once
// Optimizers update parameters in place from their gradients, with PyTorch's semantics (so a
// run can be compared step for step with a PyTorch run). State (momentum buffers, moment
// estimates, step counts) is kept per parameter and exported as named tensors
// "<parameter name>/<slot>" for checkpoints, so it survives a rebuild of the graph.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "graph/graph.hpp"
#include "graph/parameters.hpp"
#include "train/named_tensor.hpp"

namespace telar::train {

// Everything the command line can set for an optimizer. Fields an optimizer does not use must
// keep their defaults (a user-typed option that would silently do nothing is an error).
struct OptimizerOptions {
  std::string name = "sgd";          // sgd | adagrad | adam
  float momentum = 0.0f;             // sgd
  bool nesterov = false;             // sgd (needs momentum > 0)
  float weight_decay = 0.0f;         // all: L2 penalty added to the gradient, g += wd * p
  float beta1 = 0.9f;                // adam
  float beta2 = 0.999f;              // adam
  float eps = -1.0f;                 // adam (default 1e-8), adagrad (default 1e-10); < 0: default
  float lr_decay = 0.0f;             // adagrad
  float initial_accumulator = 0.0f;  // adagrad
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;

  virtual std::string_view name() const = 0;  // "sgd", "adagrad", "adam"
  virtual std::string describe() const = 0;   // name and hyperparameters, for run.json

  // Updates params[id] for every id in `ids` from grads[id] with learning rate `lr`.
  // State for a parameter is created (zero) on its first step; no allocation afterwards.
  virtual void step(graph::ParameterSet& params, const graph::ParameterSet& grads,
                    std::span<const graph::ValueId> ids, float lr) = 0;

  // The state as named tensors "<parameter name>/<slot>" (shared with the optimizer, not
  // copied: write them out before the next step). Parameters not yet stepped have no entries.
  NamedTensors state(const graph::Graph& graph) const;
  // Replaces the state by `state` (as produced by state() for the same graph). Validates every
  // entry before changing anything; throws telar::Error naming the first bad entry.
  void load_state(const graph::Graph& graph, const NamedTensors& state);
  // Forgets all state (as if no step had been taken).
  void reset();

  // Number of steps taken for a parameter (0 if never).
  std::int64_t steps_taken(graph::ValueId id) const;
  // State tensors kept per parameter, each shaped like it (for memory estimates).
  std::size_t state_slots() const { return slot_names_.size(); }

 protected:
  // `slots`: names of the per-parameter f32 state tensors (shaped like the parameter).
  explicit Optimizer(std::vector<std::string> slots) : slot_names_(std::move(slots)) {
    slots_.resize(slot_names_.size());
  }
  // The state tensor `slot` of parameter `id`, created zero-filled like `param` if missing.
  Tensor& slot(std::size_t slot, graph::ValueId id, const Tensor& param);
  bool has_slot(std::size_t slot, graph::ValueId id) const { return slots_[slot].has(id); }
  // Increments and returns the step count of parameter `id`.
  std::int64_t count_step(graph::ValueId id);
  // One parameter's update: its tensor, its data and its gradient's (checked to match), and
  // the number of elements.
  struct Update {
    Tensor& param;
    float* p;
    const float* grad;
    std::int64_t n;
  };
  static Update update_of(graph::ParameterSet& params, const graph::ParameterSet& grads,
                          graph::ValueId id);
  // Throws unless `value` is a finite number >= 0: "<what> <value> is not a number >= 0; <hint>".
  static void require_non_negative(float value, std::string_view what, std::string_view hint);

 private:
  std::vector<std::string> slot_names_;
  std::vector<graph::ParameterSet> slots_;  // [slot] indexed by ValueId
  std::vector<std::int64_t> steps_;         // indexed by ValueId
};

// The optimizer names make_optimizer accepts, in the order they are listed in messages.
const std::vector<std::string>& optimizer_names();

// Builds an optimizer from options. Throws telar::Error for an unknown name (listing the
// choices and the closest one), an out-of-range hyperparameter, or an option the chosen
// optimizer does not use.
std::unique_ptr<Optimizer> make_optimizer(const OptimizerOptions& options);

}  // namespace telar::train
