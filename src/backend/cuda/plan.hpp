#pragma once
// A graph bound to one batch size on one GPU: device storage for every value and gradient,
// the node kernels in execution order and the backward schedule (which kernel writes or
// accumulates which gradient), all set up once so a steady-state step allocates nothing.
// Parameters and their gradients live in DeviceParameters, shared by the plans of one
// executable; the host ParameterSets stay the caller's view (copied at the interface).
#include <deque>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "backend/cuda/device.hpp"
#include "backend/executable.hpp"
#include "graph/parameters.hpp"

namespace telar::backend::cuda {

// Storage of one value on the device. Dynamic inputs (EmbeddingBag indices) grow on demand.
struct Slot {
  graph::ValueId id = graph::kNoValue;
  Shape shape;  // batch bound; kDynamicDim stays for dynamic inputs
  DType dtype = DType::F32;
  graph::ValueKind kind = graph::ValueKind::Activation;
  void* data = nullptr;  // device pointer (owned by `storage` or another slot: Flatten)
  DeviceBuffer storage;
  std::int64_t numel = 0;        // elements in this forward
  const Tensor* host = nullptr;  // graph inputs: the caller's tensor during forward()
  bool requires_grad = false;
  float* grad = nullptr;  // device gradient (parameters: DeviceParameters' buffer)
  DeviceBuffer grad_storage;

  bool dynamic() const { return !shape_is_concrete(shape); }
  float* f32() const { return static_cast<float*>(data); }
  const std::int64_t* i64() const { return static_cast<const std::int64_t*>(data); }
};

// Where a kernel's backward writes the gradient of input i (see cpu/kernel.hpp): the slot's
// own gradient, a scratch buffer the plan adds afterwards, or nowhere.
struct GradTarget {
  float* ptr = nullptr;
  bool accumulate = false;
};

struct KernelIO {
  const graph::Node* node = nullptr;
  std::vector<Slot*> inputs;
  Slot* output = nullptr;
  std::vector<GradTarget> input_grads;
  std::uint64_t seed = 0;  // per-node random stream base (dropout), as on the CPU
  Context* ctx = nullptr;
};

class Kernel {
 public:
  explicit Kernel(KernelIO io) : io_(std::move(io)) {}
  virtual ~Kernel() = default;
  virtual void prepare_backward() {}
  virtual void forward(bool training, std::uint64_t random_stream) = 0;
  virtual void backward() = 0;
  KernelIO& io() { return io_; }
  const graph::Node& node() const { return *io_.node; }

 protected:
  const Slot& in(std::size_t i) const { return *io_.inputs.at(i); }
  Slot& out() { return *io_.output; }
  float* grad_of(std::size_t i) const { return io_.input_grads.at(i).ptr; }
  cudaStream_t stream() const { return io_.ctx->stream(); }
  // Allocates the output's storage for its (concrete) shape.
  void define_output();
  // Checks the launches just made (kernels.hpp) and names this node in the error.
  void check_launch(std::string_view what) const;
  KernelIO io_;
};

std::unique_ptr<Kernel> make_kernel(KernelIO io);

// Parameters and buffers on the device, and parameter gradients; uploaded when the caller's
// version changes (parameters_updated()).
struct DeviceParameters {
  std::map<graph::ValueId, DeviceBuffer> values;
  std::map<graph::ValueId, DeviceBuffer> grads;
};

class Plan {
 public:
  Plan(const graph::Graph& graph, DeviceParameters& device_params, Context& ctx, std::int64_t batch,
       std::uint64_t seed, const std::vector<graph::ValueId>& input_gradients);

  void forward(std::span<const Tensor> inputs, Mode mode, std::uint64_t random_stream,
               NodeObserver* observer);
  // Leaves the parameter gradients in `host_grads` (the executable's gradients()).
  void backward(std::span<const Tensor> output_grads, NodeObserver* observer,
                graph::ParameterSet& host_grads);
  const Tensor& output(std::size_t i) const { return host_outputs_.at(i); }
  const Tensor& input_gradient(std::size_t i) const;

 private:
  struct Accumulation {
    Slot* slot;
    DeviceBuffer scratch;
  };
  Slot* new_slot();
  void prepare_backward();

  const graph::Graph& graph_;
  DeviceParameters& device_params_;
  Context& ctx_;
  std::int64_t batch_;
  std::deque<Slot> slots_;
  std::vector<Slot*> value_slots_;
  std::vector<std::unique_ptr<Kernel>> kernels_;
  std::vector<std::vector<Accumulation>> accumulations_;
  std::vector<Tensor> host_outputs_;
  std::map<std::size_t, Tensor> host_input_grads_;  // by graph input position
  bool backward_ready_ = false;
  bool last_forward_trained_ = false;
};

}  // namespace telar::backend::cuda
