#pragma once
// Workers on GPUs joined by NCCL: each member owns one CUDA device, an NCCL communicator and a
// stream. Collectives take host spans (the CUDA backend keeps gradients on the host): a call
// copies the values into pinned host staging, then to a device buffer, runs one NCCL
// collective and copies the result back, and returns once the stream is done. Built when CMake
// finds CUDA and NCCL (TELAR_HAVE_NCCL), as the module libtelar_nccl.so (nccl_module.cpp),
// loaded on the first call below; otherwise, or when it does not load, they throw and explain.
// A failed member ends the group: in one process every member's NCCL communicator is aborted
// (ncclCommAbort) and their pending and later collectives throw GroupAborted.
#include <memory>
#include <vector>

#include "dist/communicator.hpp"

namespace telar::dist {

// True when this telar was built with NCCL (and CUDA).
bool nccl_available();
// The CUDA devices this process sees (0 without NCCL, a driver or a device).
int nccl_device_count();

// One process, one thread per member: the communicators of devices[0..n-1] (ncclCommInitAll),
// member r on CUDA device devices[r]; the devices must differ (NCCL puts one rank per GPU).
std::vector<std::unique_ptr<Communicator>> make_nccl_group(const std::vector<int>& devices);

// One member per process (e.g. MPI ranks): rank 0 of `bootstrap` makes the NCCL unique id and
// broadcasts it through `bootstrap`; every member then joins on its CUDA `device`
// (ncclCommInitRank) with bootstrap's rank and size. abort() also aborts `bootstrap`, which
// must outlive the result.
std::unique_ptr<Communicator> join_nccl(Communicator& bootstrap, int device);

}  // namespace telar::dist
