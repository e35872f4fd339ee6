// The thread choice of evaluation forwards (backend/cpu/thread_choice.hpp), fed latencies of a
// quiet machine, of one where another process takes a core, and of the load going away.
#include "backend/cpu/thread_choice.hpp"

#include <gtest/gtest.h>

using telar::backend::cpu::ThreadChoice;

namespace {

// Runs `calls` calls with these latencies per thread count; returns the calls run on one thread.
int run(ThreadChoice& c, int calls, double on_two, double on_one) {
  int on_one_thread = 0;
  for (int i = 0; i < calls; ++i) {
    const int t = c.next();
    on_one_thread += t == 1;
    c.record(t, t == 1 ? on_one : on_two);
  }
  return on_one_thread;
}

}  // namespace

TEST(ThreadChoice, AQuietMachineKeepsTheThreadsAndProbesRarely) {
  ThreadChoice c(2);
  // Probes after 4, 8, 16 ... 2048 calls since the last: at calls 5, 13, 29, 61, 125, 253, 509,
  // 1021 and 2045, 9 of 4000.
  EXPECT_EQ(run(c, 4000, 0.010, 0.017), 9);
  EXPECT_EQ(c.threads_in_use(), 2);
}

TEST(ThreadChoice, ABusyCoreMovesTheWorkToOneThreadAtOnce) {
  ThreadChoice c(2);
  run(c, 200, 0.010, 0.017);
  // Another process takes a core: two threads wait for each other at every primitive.
  const int t = c.next();
  EXPECT_EQ(t, 2);
  c.record(t, 0.080);  // four times the best: the next call tries one thread
  EXPECT_EQ(c.next(), 1);
  c.record(1, 0.018);
  EXPECT_EQ(c.threads_in_use(), 1);
  // It stays there while the load lasts (probing two threads every 4 to 256 calls: 4, 8, 16,
  // 32, 64, 128, 256, 256, ...: 9 probes in 1000 calls).
  const int on_one = run(c, 1000, 0.080, 0.018);
  EXPECT_GE(on_one, 1000 - 9);
  EXPECT_EQ(c.threads_in_use(), 1);
}

TEST(ThreadChoice, TheEndOfTheLoadIsSeenWithin256Calls) {
  ThreadChoice c(2);
  run(c, 100, 0.010, 0.017);
  c.record(c.next(), 0.080);
  run(c, 600, 0.080, 0.018);
  ASSERT_EQ(c.threads_in_use(), 1);
  int calls = 0;
  while (c.threads_in_use() == 1 && calls < 1000) {
    const int t = c.next();
    c.record(t, t == 1 ? 0.017 : 0.010);
    ++calls;
  }
  EXPECT_EQ(c.threads_in_use(), 2);
  EXPECT_LE(calls, 257);
}

// A model too small to gain from a second thread runs on one after the first probe.
TEST(ThreadChoice, OneThreadWinsWhereItIsFaster) {
  ThreadChoice c(2);
  run(c, 40, 0.00015, 0.00010);
  EXPECT_EQ(c.threads_in_use(), 1);
}
