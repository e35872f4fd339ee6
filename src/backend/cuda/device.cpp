#include "backend/cuda/device.hpp"

#include "core/error.hpp"

namespace telar::backend::cuda {

void check(cudaError_t status, std::string_view what) {
  if (status != cudaSuccess)
    fail("CUDA backend: {}: {} ({})", what, cudaGetErrorString(status), cudaGetErrorName(status));
}

void check(cublasStatus_t status, std::string_view what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    fail("CUDA backend: {}: cuBLAS {} ({})", what, cublasGetStatusString(status),
         cublasGetStatusName(status));
}

void check(cudnnStatus_t status, std::string_view what) {
  if (status != CUDNN_STATUS_SUCCESS)
    fail("CUDA backend: {}: cuDNN {}", what, cudnnGetErrorString(status));
}

std::string device_unavailable_reason() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();  // reset the runtime's last-error state for later calls
    return cudaGetErrorString(status);
  }
  if (count == 0) return "the CUDA runtime reports 0 devices";
  return "";
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (ptr_) cudaFree(ptr_);
    ptr_ = o.ptr_;
    bytes_ = o.bytes_;
    o.ptr_ = nullptr;
    o.bytes_ = 0;
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_) cudaFree(ptr_);  // errors at teardown cannot be reported (destructor)
}

void DeviceBuffer::resize(std::size_t bytes) {
  if (ptr_) {
    check(cudaFree(ptr_), "cudaFree");
    ptr_ = nullptr;
    bytes_ = 0;
  }
  if (bytes == 0) return;
  check(cudaMalloc(&ptr_, bytes), fmt::format("cudaMalloc of {} bytes", bytes));
  bytes_ = bytes;
}

Context::Context(int device) : device_(device) {
  activate();
  check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  check(cublasCreate(&cublas_), "cublasCreate");
  check(cublasSetStream(cublas_, stream_), "cublasSetStream");
  // Plain fp32 (no TF32) so results compare with the CPU backend at fp32 tolerances.
  check(cublasSetMathMode(cublas_, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
  check(cudnnCreate(&cudnn_), "cudnnCreate");
  check(cudnnSetStream(cudnn_, stream_), "cudnnSetStream");
}

Context::~Context() {
  cudaSetDevice(device_);
  if (cudnn_) cudnnDestroy(cudnn_);
  if (cublas_) cublasDestroy(cublas_);
  if (stream_) cudaStreamDestroy(stream_);
}

void Context::activate() const {
  check(cudaSetDevice(device_), fmt::format("cudaSetDevice({})", device_));
}

void Context::synchronize() const {
  check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
}

}  // namespace telar::backend::cuda
