#pragma once
// --workers: the devices of a data-parallel run. A worker is a device string as --backend
// takes it ("cpu", "cpu:threads=1", "cuda:0"), plus worker options joined the same way:
//   slowdown=F       (test knob) the worker computes F times slower, see dist/handicap.hpp
//   fail_at_step=N   (test knob) the worker throws when it starts global step N
// A comma-separated list runs one worker per entry as threads of this process. "mpi" runs one
// worker per MPI rank (mpirun -np N telar train --workers mpi ...): "mpi" alone gives every
// rank a cpu worker, "mpi:DEVICE" every rank DEVICE, "mpi:DEVICE0,DEVICE1,..." rank r the
// r-th device.
#include <cstdint>
#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "dist/handicap.hpp"

namespace telar::dist {

struct WorkerSpec {
  std::string text;             // as typed
  backend::BackendSpec device;  // without the worker options
  Handicap handicap;
  // Compute threads of the worker's own thread (0: the process default). A cpu worker's are its
  // kernels' (threads=N); a GPU worker's run its host side: the optimizer step over the
  // parameters and the copies of gradients and parameters.
  int host_threads = 0;
};


struct WorkerList {
  bool mpi = false;
  std::vector<WorkerSpec> workers;  // threads: one per worker; mpi: one for all, or one per rank
  std::string text;

  // The spec of worker `rank` of `size` (mpi: checks that a per-rank list matches the size).
  WorkerSpec for_rank(int rank, int size) const;
};

// Throws telar::Error (one line) for an empty list, an unknown device or option.
WorkerList parse_workers(const std::string& text);

// Makes every worker's compute threads explicit, for `workers` that share one machine's cores
// (an oversubscribed machine slows every worker's OpenMP loops down many times): a cpu worker
// with threads=N keeps N, and the other workers, cpu and GPU alike, share the remaining cores
// equally (at least one each; a GPU worker's run its host side).
void assign_threads(std::vector<WorkerSpec>& workers);

}  // namespace telar::dist
