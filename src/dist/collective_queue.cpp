#include "dist/collective_queue.hpp"

#include <fmt/format.h>

namespace telar::dist {

CollectiveQueue::CollectiveQueue(Communicator& comm) : comm_(comm) {
  thread_ = std::thread([this] { loop(); });
}

CollectiveQueue::~CollectiveQueue() {
  bool broken = false;
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
    broken = pending_ > 0;
  }
  // Unwinding past collectives in progress (the worker failed between submitting and
  // draining): the others must not wait for this member any longer, nor its helper for them.
  if (broken) comm_.abort(fmt::format("worker {} stopped with collectives in progress", comm_.rank()));
  work_cv_.notify_all();
  thread_.join();
}

void CollectiveQueue::submit(std::function<void()> task) {
  {
    std::lock_guard lock(mutex_);
    tasks_.push_back(std::move(task));
    ++pending_;
  }
  work_cv_.notify_one();
}

void CollectiveQueue::drain() {
  std::unique_lock lock(mutex_);
  done_cv_.wait(lock, [&] { return pending_ == 0; });
  if (error_) std::rethrow_exception(error_);
}

void CollectiveQueue::run(std::function<void()> task) {
  submit(std::move(task));
  drain();
}

void CollectiveQueue::loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    work_cv_.wait(lock, [&] { return stop_ || !tasks_.empty(); });
    if (tasks_.empty()) return;  // stop_ and nothing left
    std::function<void()> task = std::move(tasks_.front());
    tasks_.pop_front();
    const bool skip = error_ != nullptr;
    lock.unlock();
    std::exception_ptr error;
    if (!skip) {
      try {
        task();
      } catch (...) {
        error = std::current_exception();
      }
    }
    task = nullptr;
    lock.lock();
    if (error && !error_) error_ = error;
    if (--pending_ == 0) done_cv_.notify_all();
  }
}

}  // namespace telar::dist
