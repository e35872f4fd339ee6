// The thread communicator: sums, broadcasts, and ending the group when a member fails.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "dist/collective_queue.hpp"
#include "dist/data_parallel.hpp"
#include "dist/thread_communicator.hpp"

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
