#pragma once
// Which communicator joins the workers of telar train (--communicator auto|threads|nccl):
// decided from the worker list alone, so it is checked before anything is written.
#include <string>

#include "dist/worker_spec.hpp"

namespace telar::dist {

// Returns "threads", "mpi" or "nccl" for `requested` ("auto", "threads" or "nccl"):
//  auto: nccl when NCCL is built (`nccl_built`) and the workers are threads of this process,
//        each on a different CUDA device; mpi for --workers mpi; threads otherwise.
//  threads: threads (not with --workers mpi).
//  nccl: nccl; throws telar::Error (one line, saying what to change) when NCCL is not built,
//        a worker is not a CUDA device, two workers share a device, or the workers are MPI
//        ranks (not supported by telar train yet).
std::string choose_communicator(const std::string& requested, const WorkerList& workers,
                                bool nccl_built);

// The CUDA device index of a "cuda[:N]" device (cuda alone is device 0); -1 for other kinds.
int cuda_device_index(const backend::BackendSpec& device);

}  // namespace telar::dist
