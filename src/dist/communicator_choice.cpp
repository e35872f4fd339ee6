#include "dist/communicator_choice.hpp"

#include <fmt/format.h>

#include <charconv>
#include <set>

namespace telar::dist {

int cuda_device_index(const backend::BackendSpec& device) {
  if (device.kind != "cuda") return -1;
  if (device.target.empty()) return 0;
  int index = -1;
  const char* end = device.target.data() + device.target.size();
  const auto [ptr, ec] = std::from_chars(device.target.data(), end, index);
  if (ec != std::errc() || ptr != end || index < 0)
    fail("device '{}': expected cuda or cuda:N with N a device index", device.text);
  return index;
}

std::string choose_communicator(const std::string& requested, const WorkerList& workers,
                                bool nccl_built) {
  if (requested != "auto" && requested != "threads" && requested != "nccl")
    fail("--communicator {}: expected auto, threads or nccl", requested);
  if (workers.mpi) {
    if (requested == "auto") return "mpi";
    fail("--communicator {}: --workers mpi joins the ranks with MPI; drop --communicator "
         "(NCCL between MPI ranks is not offered by telar train yet)", requested);
  }
  if (requested == "threads") return "threads";
  // NCCL fits when every worker is a different CUDA device.
  std::string misfit;
  std::set<int> devices;
  for (const auto& w : workers.workers) {
    const int index = cuda_device_index(w.device);
    if (index < 0) {
      misfit = fmt::format("worker '{}' is not a CUDA device", w.text);
      break;
    }
    if (!devices.insert(index).second) {
      misfit = fmt::format("two workers share CUDA device {} (NCCL needs one GPU per worker)", index);
      break;
    }
  }
  if (workers.workers.empty()) misfit = "there are no workers";
  if (requested == "auto") return nccl_built && misfit.empty() ? "nccl" : "threads";
  if (!nccl_built)
    fail("--communicator nccl: this telar was built without NCCL (it needs CUDA and nccl.h/libnccl "
         "when CMake runs); use --communicator threads");
  if (!misfit.empty())
    fail("--communicator nccl: {}; use one cuda:N per worker, e.g. --workers cuda:0,cuda:1", misfit);
  return "nccl";
}

}  // namespace telar::dist
