#pragma once
// The CUDA runtime, cuBLAS and cuDNN seen from the backend: status checks that become
// telar::Error (naming the node and the library's own message), owned device memory, and the
// per-executable context (device, stream, library handles, one shared workspace).
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <cstddef>
#include <string>
#include <string_view>

namespace telar::backend::cuda {

// Each throws telar::Error "CUDA backend: <what>: <library message>" when status is not success.
void check(cudaError_t status, std::string_view what);
void check(cublasStatus_t status, std::string_view what);
void check(cudnnStatus_t status, std::string_view what);

// Why no device is usable ("" when one is): the runtime's own words for a missing driver or
// an empty device list. Never throws.
std::string device_unavailable_reason();

// Device memory, freed on destruction; resize() keeps nothing (plans size buffers once).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes) { resize(bytes); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) {
    o.ptr_ = nullptr;
    o.bytes_ = 0;
  }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  ~DeviceBuffer();

  // Grows to at least `bytes` (contents lost when it grows).
  void reserve(std::size_t bytes) {
    if (bytes > bytes_) resize(bytes);
  }
  void resize(std::size_t bytes);
  void* get() const { return ptr_; }
  float* f32() const { return static_cast<float*>(ptr_); }
  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

class Context {
 public:
  explicit Context(int device);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  int device() const { return device_; }
  cudaStream_t stream() const { return stream_; }
  cublasHandle_t cublas() const { return cublas_; }
  cudnnHandle_t cudnn() const { return cudnn_; }
  // Makes this context's device current on the calling thread (data-parallel workers run
  // each executable on its own thread).
  void activate() const;
  // Shared scratch for cuDNN; grown while plans are built, never during a step.
  void reserve_workspace(std::size_t bytes) { workspace_.reserve(bytes); }
  void* workspace() const { return workspace_.get(); }
  std::size_t workspace_bytes() const { return workspace_.bytes(); }
  void synchronize() const;

 private:
  int device_;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  cudnnHandle_t cudnn_ = nullptr;
  DeviceBuffer workspace_;
};

}  // namespace telar::backend::cuda
