#pragma once
// A worker's collectives run on one helper thread, in the order they were submitted: the
// compute thread hands over a gradient bucket as soon as its last gradient is written and
// goes on with the backward pass, and MPI sees calls from one thread at a time. Every member
// of a group submits the same collectives in the same order, so the helpers pair up.
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

#include "dist/communicator.hpp"

namespace telar::dist {

class CollectiveQueue {
 public:
  explicit CollectiveQueue(Communicator& comm);
  ~CollectiveQueue();
  CollectiveQueue(const CollectiveQueue&) = delete;
  CollectiveQueue& operator=(const CollectiveQueue&) = delete;

  Communicator& comm() { return comm_; }
  const Communicator& comm() const { return comm_; }
  int rank() const { return comm_.rank(); }
  int size() const { return comm_.size(); }

  // Queues `task` (it runs on the helper thread, after the tasks queued before it).
  void submit(std::function<void()> task);
  // Waits until every queued task has run; rethrows the first exception a task threw (after
  // one fails, the later ones are skipped: the group is broken).
  void drain();
  // submit + drain.
  void run(std::function<void()> task);

 private:
  void loop();

  Communicator& comm_;
  std::mutex mutex_;
  std::condition_variable work_cv_, done_cv_;
  std::deque<std::function<void()>> tasks_;
  std::size_t pending_ = 0;  // queued or running
  std::exception_ptr error_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace telar::dist
