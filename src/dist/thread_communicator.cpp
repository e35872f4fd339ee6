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

  // Zero-copy: member r computes slice r of the concatenated parts straight from every
  // member's tensors and writes the result into all of them (no packing, one pass).
  double all_reduce_weighted_mean(std::span<const std::span<float>> parts, float weight) override {
    const int n = size();
    ThreadGroup::Registration& mine = group_.registrations_[static_cast<std::size_t>(rank_)];
    mine.parts = parts;
    mine.weight = weight;
    group_.arrive_and_wait();
    float total = 0.0f;  // in rank order, as every member
    for (int q = 0; q < n; ++q) total += group_.registrations_[static_cast<std::size_t>(q)].weight;
    const float scale = total > 0.0f ? 1.0f / total : 0.0f;
    std::size_t len = 0;
    for (const auto& p : parts) len += p.size();
    const std::size_t per = (len + static_cast<std::size_t>(n) - 1) / static_cast<std::size_t>(n);
    const std::size_t begin = std::min(len, per * static_cast<std::size_t>(rank_));
    const std::size_t end = std::min(len, begin + per);
    // Walk the parts that overlap [begin, end).
    std::size_t part = 0, base = 0;
    while (part < parts.size() && base + parts[part].size() <= begin) base += parts[part++].size();
    // In blocks that stay in L1, member by member (vectorisable loops); the sum keeps rank
    // order, so every slice is summed the same way whoever sums it.
    constexpr std::size_t kBlock = 1024;
    float acc[kBlock];
    for (std::size_t i = begin; i < end; ++part) {
      const std::size_t from = i - base, to = std::min(parts[part].size(), end - base);
      for (std::size_t b0 = from; b0 < to; b0 += kBlock) {
        const std::size_t len_b = std::min(kBlock, to - b0);
        bool first = true;
        for (int q = 0; q < n; ++q) {
          const ThreadGroup::Registration& r = group_.registrations_[static_cast<std::size_t>(q)];
          if (r.weight == 0.0f) continue;
          const float* x = r.parts[part].data() + b0;
          const float w = r.weight;
          if (first)
            for (std::size_t k = 0; k < len_b; ++k) acc[k] = x[k] * w;
          else
            for (std::size_t k = 0; k < len_b; ++k) acc[k] += x[k] * w;
          first = false;
        }
        if (first) std::fill(acc, acc + len_b, 0.0f);
        for (std::size_t k = 0; k < len_b; ++k) acc[k] *= scale;
        for (int q = 0; q < n; ++q)
          std::memcpy(group_.registrations_[static_cast<std::size_t>(q)].parts[part].data() + b0, acc,
                      len_b * sizeof(float));
      }
      i = base + to;
      base += parts[part].size();
    }
    group_.arrive_and_wait();
    return total;
  }

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
  registrations_.assign(static_cast<std::size_t>(size), Registration{});
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
