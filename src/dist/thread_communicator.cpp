#include "dist/thread_communicator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace telar::dist {

class ThreadCommunicator final : public Communicator {
 public:
  ThreadCommunicator(ThreadGroup& group, int rank) : group_(group), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return group_.size(); }
  std::string kind() const override { return "threads"; }
  void all_reduce_sum(std::span<float> values) override { reduce(values); }
  void all_reduce_sum(std::span<double> values) override { reduce(values); }

  void broadcast(std::span<std::byte> bytes, int root) override {
    require(root >= 0 && root < size(), "internal: broadcast root {} of {} members", root, size());
    group_.slots_[static_cast<std::size_t>(rank_)] = bytes.data();
    group_.arrive_and_wait();
    if (rank_ != root && !bytes.empty())
      std::memcpy(bytes.data(), group_.slots_[static_cast<std::size_t>(root)], bytes.size());
    group_.arrive_and_wait();  // the root's buffer stays valid until everyone has copied it
  }

  void abort(const std::string& reason) override { group_.abort(rank_, reason); }

 private:
  template <typename T>
  void reduce(std::span<T> values) {
    const int n = size();
    group_.slots_[static_cast<std::size_t>(rank_)] = values.data();
    group_.arrive_and_wait();
    // Member r sums slice r for everyone, in rank order: the same order whoever sums it.
    const std::size_t len = values.size();
    const std::size_t per = (len + static_cast<std::size_t>(n) - 1) / static_cast<std::size_t>(n);
    const std::size_t begin = std::min(len, per * static_cast<std::size_t>(rank_));
    const std::size_t end = std::min(len, begin + per);
    for (std::size_t i = begin; i < end; ++i) {
      T sum = static_cast<T*>(group_.slots_[0])[i];
      for (int q = 1; q < n; ++q) sum += static_cast<T*>(group_.slots_[static_cast<std::size_t>(q)])[i];
      for (int q = 0; q < n; ++q) static_cast<T*>(group_.slots_[static_cast<std::size_t>(q)])[i] = sum;
    }
    group_.arrive_and_wait();
  }

  ThreadGroup& group_;
  int rank_;
};

ThreadGroup::ThreadGroup(int size) : size_(size) {
  require(size >= 1, "a worker group needs at least one member, got {}", size);
  slots_.assign(static_cast<std::size_t>(size), nullptr);
  for (int r = 0; r < size; ++r) members_.push_back(std::make_unique<ThreadCommunicator>(*this, r));
}

Communicator& ThreadGroup::member(int rank) {
  require(rank >= 0 && rank < size_, "internal: member {} of a group of {}", rank, size_);
  return *members_[static_cast<std::size_t>(rank)];
}

void ThreadGroup::abort(int rank, const std::string& reason) {
  {
    std::lock_guard lock(mutex_);
    if (aborted_) return;  // the first failure is the one reported
    aborted_ = true;
    failed_rank_ = rank;
    reason_ = reason;
  }
  cv_.notify_all();
}

bool ThreadGroup::aborted() const {
  std::lock_guard lock(mutex_);
  return aborted_;
}

int ThreadGroup::failed_rank() const {
  std::lock_guard lock(mutex_);
  return failed_rank_;
}

std::string ThreadGroup::reason() const {
  std::lock_guard lock(mutex_);
  return reason_;
}

void ThreadGroup::throw_aborted() const {
  throw GroupAborted(fmt::format("worker {} failed: {}", failed_rank_, reason_), failed_rank_);
}

void ThreadGroup::arrive_and_wait() {
  std::unique_lock lock(mutex_);
  if (aborted_) throw_aborted();
  const std::uint64_t generation = generation_;
  if (++arrived_ == size_) {
    arrived_ = 0;
    ++generation_;
    cv_.notify_all();
    return;
  }
  cv_.wait(lock, [&] { return generation_ != generation || aborted_; });
  if (generation_ == generation) throw_aborted();
}

}  // namespace telar::dist
