// Pinning thread workers to cores: the plan gives each worker consecutive CPUs of its own, or
// nothing when their threads do not fit; a pinned thread (and a thread it starts) then runs on
// exactly those CPUs.
#include <gtest/gtest.h>

#include <thread>

#include "dist/pinning.hpp"

using telar::dist::allowed_cpus;
using telar::dist::pin_this_thread;
using telar::dist::plan_pinning;
using telar::dist::this_thread_cpus;
using Plan = std::vector<std::vector<int>>;

TEST(Pinning, PlansConsecutiveCpusOfTheAllowedOnes) {
  EXPECT_EQ(plan_pinning({1, 1}, {0, 1}), (Plan{{0}, {1}}));
  EXPECT_EQ(plan_pinning({2, 1}, {0, 1, 2, 3}), (Plan{{0, 1}, {2}}));
  // A process restricted to CPUs 2, 5 and 7 (taskset): only those are handed out.
  EXPECT_EQ(plan_pinning({1, 2}, {2, 5, 7}), (Plan{{2}, {5, 7}}));
}

TEST(Pinning, NothingIsPinnedWhenTheThreadsDoNotFit) {
  EXPECT_TRUE(plan_pinning({1, 1, 1}, {0, 1}).empty());
  EXPECT_TRUE(plan_pinning({2, 1}, {4, 6}).empty());
  EXPECT_TRUE(plan_pinning({}, {0, 1}).empty());
  EXPECT_TRUE(plan_pinning({0, 1}, {0, 1}).empty());
}

TEST(Pinning, APinnedThreadAndTheThreadsItStartsRunOnItsCpus) {
  const std::vector<int> allowed = allowed_cpus();
  ASSERT_FALSE(allowed.empty());
  const std::vector<int> mine = {allowed.back()};
  std::vector<int> seen, seen_by_child;
  bool pinned = false;
  std::thread worker([&] {
    pinned = pin_this_thread(mine);
    seen = this_thread_cpus();
    std::thread child([&] { seen_by_child = this_thread_cpus(); });
    child.join();
  });
  worker.join();
  ASSERT_TRUE(pinned);
  EXPECT_EQ(seen, mine);
  EXPECT_EQ(seen_by_child, mine);
  // This thread was not touched.
  EXPECT_EQ(this_thread_cpus(), allowed);
  EXPECT_FALSE(pin_this_thread({}));
}
