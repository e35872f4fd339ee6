#pragma once
// A group's members as threads of this process: one thread per member, each running the same
// body with its own communicator. The first member failure ends the group (the others'
// collectives throw GroupAborted instead of waiting) and is reported once every thread has
// finished, naming the member.
#include <functional>
#include <memory>
#include <vector>

#include "dist/communicator.hpp"

namespace telar::dist {

// The first member failure of a thread group, rethrown by run_worker_threads.
class WorkerFailed : public Error {
 public:
  WorkerFailed(const std::string& message, int rank) : Error(message), rank(rank) {}
  int rank;
};

// Runs `body(comm)` for each member of a new group of `size` threads (ThreadGroup). When a
// member throws, the group is ended and, after every thread has finished, WorkerFailed is
// thrown with the first failure: "worker R failed: ..." (or the words the member ended the
// group with, e.g. run_guarded's "worker R (cpu:threads=1) failed: ..."). When every member
// failed by itself (an error they all meet, such as a non-finite loss), rank 0's exception is
// rethrown as it is.
void run_worker_threads(int size, const std::function<void(Communicator&)>& body);

// The same over communicators made beforehand (e.g. make_nccl_group), one thread per member.
void run_worker_threads(const std::vector<std::unique_ptr<Communicator>>& members,
                        const std::function<void(Communicator&)>& body);

}  // namespace telar::dist
