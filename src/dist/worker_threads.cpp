#include "dist/worker_threads.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <mutex>
#include <string>
#include <thread>

#include "dist/thread_communicator.hpp"

namespace telar::dist {

namespace {

// The first member that ended the group, and the words it ended it with.
class FirstFailure {
 public:
  void note(int rank, const std::string& reason) {
    std::lock_guard lock(mutex_);
    if (rank_ >= 0) return;
    rank_ = rank;
    reason_ = reason;
  }
  bool any() const { return rank_ >= 0; }  // read after the threads have joined
  WorkerFailed error() const {
    const std::string prefix = fmt::format("worker {} ", rank_);
    return WorkerFailed(reason_.rfind(prefix, 0) == 0 ? reason_ : fmt::format("worker {} failed: {}", rank_, reason_),
                        rank_);
  }

 private:
  std::mutex mutex_;
  int rank_ = -1;
  std::string reason_;
};

// A member as its body sees it: every call goes to the member's communicator, and abort() is
// also noted, so the report uses the words the body ended the group with.
class NotingCommunicator final : public Communicator {
 public:
  NotingCommunicator(Communicator& inner, FirstFailure& first) : inner_(inner), first_(first) {}
  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  std::string kind() const override { return inner_.kind(); }
  void all_reduce_sum(std::span<float> values) override { inner_.all_reduce_sum(values); }
  void all_reduce_sum(std::span<double> values) override { inner_.all_reduce_sum(values); }
  void broadcast(std::span<std::byte> bytes, int root) override { inner_.broadcast(bytes, root); }
  double all_reduce_weighted_mean(std::span<const std::span<float>> parts, float weight) override {
    return inner_.all_reduce_weighted_mean(parts, weight);
  }
  void abort(const std::string& reason) override {
    first_.note(inner_.rank(), reason);
    inner_.abort(reason);
  }

 private:
  Communicator& inner_;
  FirstFailure& first_;
};

void run_members(const std::vector<Communicator*>& members,
                 const std::function<void(Communicator&)>& body) {
  const std::size_t n = members.size();
  FirstFailure first;
  std::vector<std::exception_ptr> own_errors(n);
  std::vector<std::thread> threads;
  for (std::size_t r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      NotingCommunicator member(*members[r], first);
      std::string what;
      try {
        body(member);
        return;
      } catch (const GroupAborted&) {
        return;  // another member failed first; its error is the one reported
      } catch (const std::exception& e) {
        own_errors[r] = std::current_exception();
        what = e.what();
      } catch (...) {
        own_errors[r] = std::current_exception();
        what = "unknown error";
      }
      try {
        member.abort(what);  // a no-op for the group if the body ended it already
      } catch (...) {
        // Ending the group is best effort; this member's own error is reported.
      }
    });
  for (auto& t : threads) t.join();
  if (!first.any()) return;
  if (std::all_of(own_errors.begin(), own_errors.end(), [](const auto& e) { return e != nullptr; }))
    std::rethrow_exception(own_errors[0]);
  throw first.error();
}

}  // namespace

void run_worker_threads(int size, const std::function<void(Communicator&)>& body) {
  ThreadGroup group(size);
  std::vector<Communicator*> members;
  for (int r = 0; r < size; ++r) members.push_back(&group.member(r));
  run_members(members, body);
}

void run_worker_threads(const std::vector<std::unique_ptr<Communicator>>& members,
                        const std::function<void(Communicator&)>& body) {
  std::vector<Communicator*> plain;
  for (const auto& m : members) plain.push_back(m.get());
  run_members(plain, body);
}

}  // namespace telar::dist
