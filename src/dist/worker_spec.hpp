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

// A worker's device with the compute threads made explicit: a cpu worker without threads=N
// gets an equal part of the machine's cores (`workers_on_machine` workers share them).
backend::BackendSpec with_default_threads(backend::BackendSpec device, int workers_on_machine);

}  // namespace telar::dist
