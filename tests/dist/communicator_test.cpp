// The thread communicator: sums, broadcasts, and ending the group when a member fails.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <thread>

#include "dist/collective_queue.hpp"
#include "dist/data_parallel.hpp"
#include "dist/thread_communicator.hpp"
#include "dist/worker_threads.hpp"

using namespace telar::dist;

TEST(ThreadCommunicator, SumsAndBroadcasts) {
  constexpr int n = 3;
  std::vector<std::vector<float>> results(n);
  std::vector<std::vector<double>> dresults(n);
  std::vector<std::string> texts(n);
  run_worker_threads(n, [&](Communicator& c) {
    const int r = c.rank();
    std::vector<float> v = {1.0f * static_cast<float>(r), 10.0f, static_cast<float>(r * r), -1.0f, 0.5f};
    c.all_reduce_sum(v);
    results[static_cast<std::size_t>(r)] = v;
    std::vector<double> d(1, r + 0.25);
    c.all_reduce_sum(d);
    dresults[static_cast<std::size_t>(r)] = d;
    std::string t = r == 1 ? "hello" : "xxxxx";
    c.broadcast(std::as_writable_bytes(std::span<char>(t.data(), t.size())), 1);
    texts[static_cast<std::size_t>(r)] = t;
  });
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(results[static_cast<std::size_t>(r)], (std::vector<float>{3.0f, 30.0f, 5.0f, -3.0f, 1.5f}));
    EXPECT_EQ(dresults[static_cast<std::size_t>(r)][0], 3.75);
    EXPECT_EQ(texts[static_cast<std::size_t>(r)], "hello");
  }
}

// The packing implementation (what MPI uses) on top of the thread group's sums.
class PackingCommunicator final : public Communicator {
 public:
  explicit PackingCommunicator(Communicator& inner) : inner_(inner) {}
  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  std::string kind() const override { return "packing"; }
  void all_reduce_sum(std::span<float> v) override { inner_.all_reduce_sum(v); }
  void all_reduce_sum(std::span<double> v) override { inner_.all_reduce_sum(v); }
  void broadcast(std::span<std::byte> b, int root) override { inner_.broadcast(b, root); }
  void abort(const std::string& reason) override { inner_.abort(reason); }

 private:
  Communicator& inner_;
};

TEST(ThreadCommunicator, WeightedMeanIsTheSameZeroCopyOrPacked) {
  constexpr int n = 3;
  // Member r holds parts {a (5 values), empty, b (2 values)} of value r + 1 + i / 10, weight
  // w = {3, 1, 0}: the mean is (3 x0 + 1 x1) / 4; member 2 (weight 0) holds NaNs, never read.
  const float weights[n] = {3, 1, 0};
  for (bool packed : {false, true}) {
    std::vector<std::vector<float>> results(n);
    std::vector<double> totals(n);
    run_worker_threads(n, [&](Communicator& c) {
      const int r = c.rank();
      std::vector<float> a(5), b(2), none;
      for (int i = 0; i < 5; ++i) a[static_cast<std::size_t>(i)] = r == 2 ? NAN : static_cast<float>(r + 1) + static_cast<float>(i) / 10;
      for (int i = 0; i < 2; ++i) b[static_cast<std::size_t>(i)] = r == 2 ? NAN : static_cast<float>(r + 1) * 10 + static_cast<float>(i);
      std::vector<std::span<float>> parts = {a, none, b};
      PackingCommunicator p(c);
      Communicator& use = packed ? static_cast<Communicator&>(p) : c;
      totals[static_cast<std::size_t>(r)] = use.all_reduce_weighted_mean(parts, weights[r]);
      a.insert(a.end(), b.begin(), b.end());
      results[static_cast<std::size_t>(r)] = a;
    });
    for (int r = 0; r < n; ++r) {
      EXPECT_EQ(totals[static_cast<std::size_t>(r)], 4.0);
      const auto& v = results[static_cast<std::size_t>(r)];
      for (int i = 0; i < 5; ++i)
        EXPECT_FLOAT_EQ(v[static_cast<std::size_t>(i)], (3 * (1 + i / 10.0f) + 1 * (2 + i / 10.0f)) / 4) << packed;
      EXPECT_FLOAT_EQ(v[5], (3 * 10.0f + 1 * 20.0f) / 4);
      EXPECT_FLOAT_EQ(v[6], (3 * 11.0f + 1 * 21.0f) / 4);
      EXPECT_EQ(v, results[0]);  // bitwise the same everywhere
    }
  }
}

TEST(ThreadCommunicator, AFailingMemberEndsTheGroupAndIsNamed) {
  std::atomic<int> aborted_others{0};
  try {
    run_worker_threads(3, [&](Communicator& c) {
      if (c.rank() == 2) throw telar::Error("disk on fire");
      std::vector<float> v(4, 1.0f);
      try {
        for (;;) c.all_reduce_sum(v);  // would wait for rank 2 forever
      } catch (const GroupAborted& e) {
        EXPECT_EQ(e.failed_rank, 2);
        ++aborted_others;
        throw;
      }
    });
    FAIL() << "no exception";
  } catch (const WorkerFailed& e) {
    EXPECT_EQ(e.rank, 2);
    EXPECT_STREQ(e.what(), "worker 2 failed: disk on fire");
  }
  EXPECT_EQ(aborted_others.load(), 2);
}

TEST(CollectiveQueue, RunsTasksInOrderAndRethrows) {
  ThreadGroup group(1);
  CollectiveQueue q(group.member(0));
  std::vector<int> order;
  for (int i = 0; i < 5; ++i) q.submit([&order, i] { order.push_back(i); });
  q.drain();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
  q.submit([] { throw telar::Error("boom"); });
  q.submit([&order] { order.push_back(99); });  // skipped: the group is broken
  EXPECT_THROW(q.drain(), telar::Error);
  EXPECT_EQ(order.size(), 5u);
}
