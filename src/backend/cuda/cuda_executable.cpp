// The CUDA executable: device copies of the parameters (uploaded when the caller says they
// changed), one plan per batch size, and the host views the Executable interface promises
// (outputs, parameter gradients, BatchNorm running statistics) copied back after each call.
#include <fmt/format.h>


#include "backend/compiled_executable.hpp"
#include "backend/cuda/cuda_backend.hpp"
#include "backend/cuda/plan.hpp"
#include "backend/schedule.hpp"
#include "core/error.hpp"
#include "core/parse.hpp"

namespace telar::backend::cuda {

namespace {

std::size_t bytes_of(const Tensor& t) {
  return t.nbytes();
}

class CudaExecutable final : public CompiledExecutable {
 public:
  CudaExecutable(const graph::Graph& graph, graph::ParameterSet& params, int device,
                 const CompileOptions& options)
      : CompiledExecutable(graph, params, options, fmt::format("cuda:{}", device)), ctx_(device) {
    for (const auto& v : graph.values()) {
      if (v.kind != graph::ValueKind::Parameter && v.kind != graph::ValueKind::Buffer) continue;
      const Tensor& t = params.at(v.id);
      if (t.dtype() != DType::F32)
        fail("internal: parameter '{}' is {}; the CUDA backend holds f32 parameters", v.name,
             dtype_name(t.dtype()));
      device_params_.values.emplace(v.id, DeviceBuffer(bytes_of(t)));
      if (v.kind == graph::ValueKind::Parameter) {
        // Zero: a parameter no backward path reaches keeps a zero gradient, as on the CPU.
        auto& grad = device_params_.grads.emplace(v.id, DeviceBuffer(bytes_of(t))).first->second;
        if (grad.bytes() > 0)
          check(cudaMemset(grad.get(), 0, grad.bytes()),
                fmt::format("zeroing the gradient of '{}'", v.name));
      }
    }
    upload_parameters();
  }

  void forward(std::span<const Tensor> inputs, Mode mode) override {
    ctx_.activate();
    const std::int64_t batch = batch_size_of(graph_, inputs);
    if (uploaded_version_ != params_version_) upload_parameters();
    current_ = &plans_.at(batch, [&] {
      return std::make_unique<Plan>(graph_, device_params_, ctx_, batch, seed_, input_gradients_);
    });
    current_->forward(inputs, mode, random_stream_++, observer_);
    if (mode == Mode::Train) download_buffers();
  }

  const Tensor& output(std::size_t i) const override {
    if (!current_) fail("internal: output() before forward()");
    return current_->output(i);
  }

  void backward(std::span<const Tensor> output_grads) override {
    if (!current_) fail("internal: backward() before forward()");
    ctx_.activate();
    current_->backward(output_grads, observer_, grads_);
  }

  const Tensor& input_gradient(std::size_t i) const override {
    if (!current_) fail("internal: input_gradient() before forward()");
    return current_->input_gradient(i);
  }

  void release_plans() override {
    current_ = nullptr;
    plans_.clear();
  }

 private:
  void upload_parameters() {
    ctx_.activate();
    for (auto& [id, buffer] : device_params_.values) {
      const Tensor& t = params_.at(id);
      check(
          cudaMemcpyAsync(buffer.get(), t.raw(), t.nbytes(), cudaMemcpyHostToDevice, ctx_.stream()),
          fmt::format("uploading parameter '{}'", graph_.value(id).name));
    }
    ctx_.synchronize();  // the host tensors may change as soon as we return
    uploaded_version_ = params_version_;
  }

  // Training updates buffers (BatchNorm running statistics) on the device; the caller's
  // ParameterSet is what checkpoints and data-parallel buffer averaging read.
  void download_buffers() {
    bool any = false;
    for (auto& [id, buffer] : device_params_.values) {
      if (graph_.value(id).kind != graph::ValueKind::Buffer) continue;
      Tensor& t = params_.at(id);
      check(
          cudaMemcpyAsync(t.raw(), buffer.get(), t.nbytes(), cudaMemcpyDeviceToHost, ctx_.stream()),
          fmt::format("downloading buffer '{}'", graph_.value(id).name));
      any = true;
    }
    if (any) ctx_.synchronize();
  }

  Context ctx_;
  DeviceParameters device_params_;
  std::uint64_t uploaded_version_ = 0;
  PlanCache<Plan> plans_;  // after device_params_: freed first
  Plan* current_ = nullptr;
};

}  // namespace

int usable_device(const BackendSpec& spec, std::string_view instead) {
  if (!spec.options.empty())
    fail("backend '{}': unknown option '{}'; cuda takes only a device number (cuda or cuda:N)",
         spec.text, spec.options.begin()->first);
  int device = 0;
  if (!spec.target.empty()) {
    const std::int64_t n = parse_int(spec.target, "cuda device");
    require(n >= 0 && n < 1024,
            "backend '{}': device {} is not a device number; use cuda:0, cuda:1 ...", spec.text, n);
    device = static_cast<int>(n);
  }
  const std::string reason = device_unavailable_reason();
  if (!reason.empty())
    fail("backend '{}': no CUDA device is usable here ({}): use {}", spec.text, reason, instead);
  int count = 0;
  check(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
  if (device >= count)
    fail("backend '{}': this machine has {} CUDA device{} (cuda:0{}); use one of those or {}",
         spec.text, count, count == 1 ? "" : "s",
         count == 1 ? "" : fmt::format(" .. cuda:{}", count - 1), instead);
  return device;
}

std::unique_ptr<Executable> compile(const BackendSpec& spec, const graph::Graph& graph,
                                    graph::ParameterSet& params, const CompileOptions& options) {
  const int device = usable_device(spec);
  for (graph::ValueId id : graph.parameters())
    if (!params.has(id)) fail("internal: parameter '{}' has no tensor", graph.value(id).name);
  return std::make_unique<CudaExecutable>(graph, params, device, options);
}

}  // namespace telar::backend::cuda
