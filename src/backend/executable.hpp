#pragma once
// A graph compiled for one backend. Callers feed the graph inputs, run forward (training or
// evaluation mode), read the outputs, and run backward from gradients of the outputs.
// Parameters and buffers live in a ParameterSet owned by the caller (so optimizers,
// checkpoints and data-parallel engines see the same tensors); gradients are owned here.
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "core/error.hpp"
#include "core/tensor.hpp"
#include "graph/graph.hpp"
#include "graph/parameters.hpp"

namespace telar::backend {

enum class Mode { Train, Eval };
enum class Pass { Forward, Backward };

// Per-node hooks (profiling scopes, tracing). Called around each node's kernel.
class NodeObserver {
 public:
  virtual ~NodeObserver() = default;
  virtual void on_node_begin(const graph::Node& node, Pass pass) = 0;
  virtual void on_node_end(const graph::Node& node, Pass pass) = 0;
};

// The batch size of a call: the first dimension of the first input the graph declares with a
// batch dimension. Throws telar::Error when there are no inputs or the size is not positive.
inline std::int64_t batch_size_of(const graph::Graph& graph, std::span<const Tensor> inputs) {
  if (inputs.empty()) fail("graph '{}' needs its inputs", graph.name());
  std::int64_t batch = -1;
  for (std::size_t i = 0; i < inputs.size() && i < graph.inputs().size(); ++i)
    if (graph.value(graph.inputs()[i]).shape.at(0) == kBatchDim) {
      batch = inputs[i].rank() > 0 ? inputs[i].dim(0) : -1;
      break;
    }
  if (batch <= 0) fail("batch size must be positive, got {}", batch);
  return batch;
}

class Executable {
 public:
  virtual ~Executable() = default;

  // Runs the graph on one batch. `inputs` follow graph.inputs() order; their first dimension
  // is the batch size (memory and kernels are planned once per batch size and reused).
  virtual void forward(std::span<const Tensor> inputs, Mode mode) = 0;
  // Graph outputs of the last forward, in graph.outputs() order. Valid until the next call.
  virtual const Tensor& output(std::size_t i) const = 0;
  // Back-propagates from gradients of the outputs (an undefined Tensor means zero; a scalar
  // loss output is seeded with 1 by passing a 1-element tensor). Needs a Train-mode forward.
  // Parameter gradients are overwritten (not accumulated) and readable through gradients().
  virtual void backward(std::span<const Tensor> output_grads) = 0;
  virtual graph::ParameterSet& gradients() = 0;
  // Gradient of graph input `i` (graph.inputs() order) after backward(), for the inputs named
  // in CompileOptions::input_gradients; throws telar::Error for any other.
  virtual const Tensor& input_gradient(std::size_t i) const = 0;

  // Parameters changed outside (optimizer step, checkpoint load): backends that keep
  // transformed copies of weights refresh them. Cheap when there are none.
  virtual void parameters_updated() {}

  // Frees what was planned for the batch sizes run so far (activations, kernels, weights in
  // the kernels' layouts); the next forward plans its batch size again. output() is invalid
  // until then. A batch sweep calls it between sizes, so that one size's plan is held at a time.
  virtual void release_plans() = 0;

  // The bytes what was planned so far holds (activations, layout copies, weights in the
  // kernels' layouts, scratch space), where the backend can tell; nothing where it cannot. A
  // batch sweep bounds its next size by it.
  virtual std::optional<std::int64_t> planned_bytes() const { return std::nullopt; }

  // Random choices of the next forward (dropout masks) derive from this stream number and the
  // compile seed; trainers set it to the global step so a resumed run repeats them exactly.
  virtual void set_random_stream(std::uint64_t stream) = 0;

  // Whether the last forward was a probe: a run the backend made on other settings than the
  // ones it chose, to see whether they became faster (the CPU's evaluation forwards on one thread
  // or all, cpu/thread_choice.hpp). A benchmark times such runs but leaves them out of the
  // figures of the chosen settings.
  virtual bool last_forward_was_probe() const { return false; }

  void set_observer(NodeObserver* observer) { observer_ = observer; }
  NodeObserver* observer() const { return observer_; }
  virtual const graph::Graph& graph() const = 0;
  virtual std::string name() const = 0;  // e.g. "cpu:threads=2"

 protected:
  NodeObserver* observer_ = nullptr;
};

}  // namespace telar::backend
