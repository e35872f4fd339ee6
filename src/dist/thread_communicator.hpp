#pragma once
// Workers as threads of one process: collectives meet in shared memory. Sums add the members'
// values in rank order, each member summing one slice of the vector for all (so two workers
// halve the work), and every member reads back the same sums.
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "dist/communicator.hpp"

namespace telar::dist {

class ThreadGroup {
 public:
  explicit ThreadGroup(int size);
  int size() const { return size_; }
  // The communicator of member `rank` (owned by the group; one thread per member).
  Communicator& member(int rank);

  // Ends the group: waiting and later collectives throw GroupAborted with `reason`.
  void abort(int rank, const std::string& reason);

 private:
  friend class ThreadCommunicator;
  // Waits until every member has arrived (a reusable generation barrier); throws
  // GroupAborted if the group is ended meanwhile.
  void arrive_and_wait();
  [[noreturn]] void throw_aborted() const;

  int size_;
  std::vector<std::unique_ptr<Communicator>> members_;
  std::vector<void*> slots_;  // each member's buffer for the collective in progress
  struct Registration {
    std::span<const std::span<float>> parts;
    float weight = 0.0f;
  };
  std::vector<Registration> registrations_;  // all_reduce_weighted_mean in progress
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  int arrived_ = 0;
  std::uint64_t generation_ = 0;
  bool aborted_ = false;
  int failed_rank_ = -1;
  std::string reason_;
};

}  // namespace telar::dist
