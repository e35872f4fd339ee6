// libtelar_nccl.so: the NCCL communicator, built when CMake finds CUDA and NCCL (TELAR_HAVE_NCCL)
// and loaded by nccl_communicator.cpp on first use. Never run on a GPU in this project yet: see
// docs/dist.md.
#include <cuda_runtime.h>
#include <fmt/format.h>
#include <nccl.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <thread>

#include "core/module_entry.hpp"
#include "dist/communicator_modules.hpp"

namespace telar::dist {
namespace {

void check_cuda(cudaError_t status, const char* call, int device) {
  if (status != cudaSuccess)
    fail("{} on CUDA device {} failed: {} (check the device with nvidia-smi)", call, device,
         cudaGetErrorString(status));
}

void check_nccl(ncclResult_t status, const char* call, int device) {
  if (status != ncclSuccess)
    fail("{} on CUDA device {} failed: {} (NCCL_DEBUG=WARN tells more)", call, device,
         ncclGetErrorString(status));
}

// What the members of one group share: who failed first, and why.
struct GroupState {
  std::mutex mutex;
  bool aborted = false;
  int failed_rank = -1;
  std::string reason;

  // Records the first failure; false when the group had already been ended.
  bool end(int rank, const std::string& why) {
    std::lock_guard lock(mutex);
    if (aborted) return false;
    aborted = true;
    failed_rank = rank;
    reason = why;
    return true;
  }
  bool ended() {
    std::lock_guard lock(mutex);
    return aborted;
  }
  [[noreturn]] void throw_aborted() {
    std::lock_guard lock(mutex);
    throw GroupAborted(fmt::format("worker {} failed: {}", failed_rank, reason), failed_rank);
  }
};

class NcclCommunicator final : public Communicator {
 public:
  NcclCommunicator(ncclComm_t comm, int device, int rank, int size,
                   std::shared_ptr<GroupState> group, Communicator* bootstrap)
      : comm_(comm),
        device_(device),
        rank_(rank),
        size_(size),
        group_(std::move(group)),
        bootstrap_(bootstrap) {
    check_cuda(cudaSetDevice(device_), "cudaSetDevice", device_);
    check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate",
               device_);
  }

  ~NcclCommunicator() override {
    // Errors are ignored here: a destructor cannot report them and the process goes on.
    cudaSetDevice(device_);
    if (comm_ != nullptr) {
      if (!comm_aborted_) {
        if (group_->ended())
          ncclCommAbort(comm_);
        else
          ncclCommDestroy(comm_);
      }
    }
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
    if (device_buffer_ != nullptr) cudaFree(device_buffer_);
    if (host_buffer_ != nullptr) cudaFreeHost(host_buffer_);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string kind() const override { return "nccl"; }

  void all_reduce_sum(std::span<float> values) override {
    reduce(values.data(), values.size_bytes(), values.size(), ncclFloat32);
  }
  void all_reduce_sum(std::span<double> values) override {
    reduce(values.data(), values.size_bytes(), values.size(), ncclFloat64);
  }

  void broadcast(std::span<std::byte> bytes, int root) override {
    require(root >= 0 && root < size_, "internal: broadcast root {} of {} members", root, size_);
    begin(bytes.size());
    if (rank_ == root && !bytes.empty()) std::memcpy(host_buffer_, bytes.data(), bytes.size());
    run(
        bytes.size(),
        [&] {
          return ncclBroadcast(device_buffer_, device_buffer_, bytes.size(), ncclUint8, root, comm_,
                               stream_);
        },
        "ncclBroadcast");
    if (rank_ != root && !bytes.empty()) std::memcpy(bytes.data(), host_buffer_, bytes.size());
  }

  // One staging vector: every part scaled by the weight, then the weight; one NCCL sum.
  double all_reduce_weighted_mean(std::span<const std::span<float>> parts, float weight) override {
    std::size_t count = 1;
    for (const auto& p : parts) count += p.size();
    const std::size_t bytes = count * sizeof(float);
    begin(bytes);
    auto* packed = static_cast<float*>(host_buffer_);
    std::size_t at = 0;
    for (const auto& p : parts) {
      for (std::size_t i = 0; i < p.size(); ++i)  // a member of weight 0 is never read
        packed[at + i] = weight == 0.0f ? 0.0f : weight * p[i];
      at += p.size();
    }
    packed[at] = weight;
    run(
        bytes,
        [&] {
          return ncclAllReduce(device_buffer_, device_buffer_, count, ncclFloat32, ncclSum, comm_,
                               stream_);
        },
        "ncclAllReduce");
    const float total = packed[at];
    const float scale = total > 0.0f ? 1.0f / total : 0.0f;
    at = 0;
    for (const auto& p : parts) {
      for (std::size_t i = 0; i < p.size(); ++i) p[i] = packed[at + i] * scale;
      at += p.size();
    }
    return total;
  }

  // Called from the failing worker's thread while its collective thread may be inside a
  // collective: only the group state changes here. Every member's collective thread sees it
  // while waiting (or at its next call), aborts its own NCCL communicator, which ends the
  // kernels stuck waiting for this member, and throws GroupAborted; the destructor aborts the
  // communicators of members that were idle.
  void abort(const std::string& reason) override {
    const bool first = group_->end(rank_, reason);
    if (first && bootstrap_ != nullptr) bootstrap_->abort(reason);  // MPI: ends the job
  }

 private:
  void reduce(void* values, std::size_t bytes, std::size_t count, ncclDataType_t type) {
    begin(bytes);
    if (bytes != 0) std::memcpy(host_buffer_, values, bytes);
    run(
        bytes,
        [&] {
          return ncclAllReduce(device_buffer_, device_buffer_, count, type, ncclSum, comm_,
                               stream_);
        },
        "ncclAllReduce");
    if (bytes != 0) std::memcpy(values, host_buffer_, bytes);
  }

  void abort_comm() {
    if (comm_ == nullptr || comm_aborted_.exchange(true)) return;
    cudaSetDevice(device_);
    ncclCommAbort(comm_);  // best effort: the group is ending anyway
  }

  [[noreturn]] void throw_aborted() {
    abort_comm();
    group_->throw_aborted();
  }

  // Checks the group, selects the device and makes room for `bytes` in both buffers.
  void begin(std::size_t bytes) {
    if (group_->ended()) throw_aborted();
    check_cuda(cudaSetDevice(device_), "cudaSetDevice", device_);
    if (bytes <= capacity_) return;
    const std::size_t grown = std::max(bytes, capacity_ * 2);
    if (device_buffer_ != nullptr) cudaFree(device_buffer_);
    if (host_buffer_ != nullptr) cudaFreeHost(host_buffer_);
    device_buffer_ = nullptr;
    host_buffer_ = nullptr;
    capacity_ = 0;
    check_cuda(cudaMalloc(&device_buffer_, grown), "cudaMalloc", device_);
    check_cuda(cudaMallocHost(&host_buffer_, grown), "cudaMallocHost", device_);
    capacity_ = grown;
  }

  // host staging -> device, the collective, device -> host staging; waits for the stream,
  // watching for the group's end and NCCL's asynchronous errors meanwhile.
  template <class Collective>
  void run(std::size_t bytes, Collective&& collective, const char* call) {
    if (bytes == 0) return;
    check_cuda(
        cudaMemcpyAsync(device_buffer_, host_buffer_, bytes, cudaMemcpyHostToDevice, stream_),
        "cudaMemcpyAsync", device_);
    check_nccl(collective(), call, device_);
    check_cuda(
        cudaMemcpyAsync(host_buffer_, device_buffer_, bytes, cudaMemcpyDeviceToHost, stream_),
        "cudaMemcpyAsync", device_);
    for (;;) {
      const cudaError_t status = cudaStreamQuery(stream_);
      if (status == cudaSuccess) break;
      if (status != cudaErrorNotReady) check_cuda(status, call, device_);
      if (group_->ended()) throw_aborted();  // another member failed: stop waiting for it
      ncclResult_t async = ncclSuccess;
      check_nccl(ncclCommGetAsyncError(comm_, &async), "ncclCommGetAsyncError", device_);
      if (async != ncclSuccess && async != ncclInProgress) {
        abort_comm();
        check_nccl(async, call, device_);
      }
      std::this_thread::yield();
    }
  }

  ncclComm_t comm_ = nullptr;
  int device_;
  int rank_;
  int size_;
  std::shared_ptr<GroupState> group_;
  Communicator* bootstrap_;
  cudaStream_t stream_ = nullptr;
  void* device_buffer_ = nullptr;
  void* host_buffer_ = nullptr;  // pinned
  std::size_t capacity_ = 0;
  std::atomic<bool> comm_aborted_ = false;
};

int device_count() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}

std::vector<std::unique_ptr<Communicator>> make_group(const std::vector<int>& devices) {
  require(!devices.empty(), "internal: an NCCL group needs at least one device");
  const int n = static_cast<int>(devices.size());
  std::vector<ncclComm_t> comms(devices.size(), nullptr);
  check_nccl(ncclCommInitAll(comms.data(), n, devices.data()), "ncclCommInitAll", devices[0]);
  auto state = std::make_shared<GroupState>();
  std::vector<std::unique_ptr<Communicator>> members;
  try {
    for (int r = 0; r < n; ++r) {
      const auto i = static_cast<std::size_t>(r);
      members.push_back(
          std::make_unique<NcclCommunicator>(comms[i], devices[i], r, n, state, nullptr));
      comms[i] = nullptr;  // owned by the member now
    }
  } catch (...) {
    for (ncclComm_t c : comms)
      if (c != nullptr) ncclCommDestroy(c);
    throw;
  }
  return members;
}

std::unique_ptr<Communicator> join(Communicator& bootstrap, int device) {
  ncclUniqueId id{};
  if (bootstrap.rank() == 0) check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId", device);
  bootstrap.broadcast(std::as_writable_bytes(std::span(&id, 1)), 0);
  check_cuda(cudaSetDevice(device), "cudaSetDevice", device);
  ncclComm_t comm = nullptr;
  check_nccl(ncclCommInitRank(&comm, bootstrap.size(), id, bootstrap.rank()), "ncclCommInitRank",
             device);
  try {
    return std::make_unique<NcclCommunicator>(comm, device, bootstrap.rank(), bootstrap.size(),
                                              std::make_shared<GroupState>(), &bootstrap);
  } catch (...) {
    ncclCommDestroy(comm);
    throw;
  }
}

}  // namespace
}  // namespace telar::dist

TELAR_MODULE_ENTRY(telar::dist::NcclModuleTable{&telar::dist::device_count,
                                                &telar::dist::make_group, &telar::dist::join})
