// The NCCL communicator: sums, weighted means, broadcasts and ending the group. NCCL puts one
// rank per GPU, so most need two CUDA devices (one group of one GPU runs where there is one);
// elsewhere they skip and say why.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "dist/data_parallel.hpp"
#include "dist/nccl_communicator.hpp"
#include "dist/worker_threads.hpp"

using namespace telar::dist;

namespace {

// Empty when a test needing `gpus` CUDA devices can run; else why not.
std::string why_skip(int gpus = 2) {
  if (!nccl_available()) return "this telar was built without NCCL";
  const int n = nccl_device_count();
  if (n < gpus)
    return "needs " + std::to_string(gpus) + " CUDA device" + (gpus == 1 ? "" : "s") + ", found " +
           std::to_string(n);
  return "";
}

}  // namespace

// A group of one GPU runs every collective through NCCL (device buffers, stream, group calls)
// and gives back what it was given: what a one-GPU machine can check.
TEST(NcclCommunicator, OneGpuGroupRunsEveryCollective) {
  if (const auto why = why_skip(1); !why.empty()) GTEST_SKIP() << why;
  const auto members = make_nccl_group({0});
  std::vector<float> v = {1.5f, -2.0f, 1e-30f}, a = {2, 4}, z = {7, -2};
  std::vector<double> d = {0.25, -8.0};
  double total = -1, zero_total = -1;
  std::string t = "hello";
  run_worker_threads(members, [&](Communicator& c) {
    EXPECT_EQ(c.kind(), "nccl");
    EXPECT_EQ(c.size(), 1);
    c.all_reduce_sum(v);
    c.all_reduce_sum(d);
    std::vector<std::span<float>> parts = {a};
    total = c.all_reduce_weighted_mean(parts, 3.0f);
    std::vector<std::span<float>> zparts = {z};
    zero_total = c.all_reduce_weighted_mean(zparts, 0.0f);
    c.broadcast(std::as_writable_bytes(std::span<char>(t.data(), t.size())), 0);
  });
  EXPECT_EQ(v, (std::vector<float>{1.5f, -2.0f, 1e-30f}));
  EXPECT_EQ(d, (std::vector<double>{0.25, -8.0}));
  EXPECT_EQ(a, (std::vector<float>{2.0f, 4.0f}));
  EXPECT_EQ(total, 3.0);
  EXPECT_EQ(z, (std::vector<float>{0.0f, 0.0f}));  // every weight 0: zeros
  EXPECT_EQ(zero_total, 0.0);
  EXPECT_EQ(t, "hello");
}

TEST(NcclCommunicator, SumsAndBroadcasts) {
  if (const auto why = why_skip(); !why.empty()) GTEST_SKIP() << why;
  const auto members = make_nccl_group({0, 1});
  std::vector<std::vector<float>> sums(2);
  std::vector<double> dsums(2);
  std::vector<std::string> texts(2);
  run_worker_threads(members, [&](Communicator& c) {
    const auto r = static_cast<std::size_t>(c.rank());
    EXPECT_EQ(c.kind(), "nccl");
    std::vector<float> v = {static_cast<float>(r), 10.0f, -0.5f};
    c.all_reduce_sum(v);
    sums[r] = v;
    std::vector<double> d = {static_cast<double>(r) + 0.25};
    c.all_reduce_sum(d);
    dsums[r] = d[0];
    std::string t = r == 1 ? "hello" : "xxxxx";
    c.broadcast(std::as_writable_bytes(std::span<char>(t.data(), t.size())), 1);
    texts[r] = t;
  });
  for (std::size_t r = 0; r < 2; ++r) {
    EXPECT_EQ(sums[r], (std::vector<float>{1.0f, 20.0f, -1.0f}));
    EXPECT_EQ(dsums[r], 1.5);
    EXPECT_EQ(texts[r], "hello");
  }
}

TEST(NcclCommunicator, WeightedMeans) {
  if (const auto why = why_skip(); !why.empty()) GTEST_SKIP() << why;
  const auto members = make_nccl_group({0, 1});
  std::vector<std::vector<float>> unequal(2), zero(2), none(2);
  std::vector<double> totals(6);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  run_worker_threads(members, [&](Communicator& c) {
    const auto r = static_cast<std::size_t>(c.rank());
    // Weights 3 and 1: (3*[2,4] + 1*[6,8]) / 4 = [3, 5]; a second part [1] / [5] -> 2.
    std::vector<float> a = r == 0 ? std::vector<float>{2, 4} : std::vector<float>{6, 8};
    std::vector<float> b = {r == 0 ? 1.0f : 5.0f};
    std::vector<std::span<float>> parts = {a, b};
    totals[r] = c.all_reduce_weighted_mean(parts, r == 0 ? 3.0f : 1.0f);
    unequal[r] = {a[0], a[1], b[0]};
    // Member 1 weighs 0: its values (NaN) are never read; the mean is member 0's.
    std::vector<float> z = r == 0 ? std::vector<float>{7, -2} : std::vector<float>{nan, nan};
    std::vector<std::span<float>> zparts = {z};
    totals[2 + r] = c.all_reduce_weighted_mean(zparts, r == 0 ? 2.0f : 0.0f);
    zero[r] = z;
    // Every weight 0: zeros, not NaN.
    std::vector<float> e = {1, 2};
    std::vector<std::span<float>> eparts = {e};
    totals[4 + r] = c.all_reduce_weighted_mean(eparts, 0.0f);
    none[r] = e;
  });
  for (std::size_t r = 0; r < 2; ++r) {
    EXPECT_EQ(unequal[r], (std::vector<float>{3.0f, 5.0f, 2.0f}));
    EXPECT_EQ(totals[r], 4.0);
    EXPECT_EQ(zero[r], (std::vector<float>{7.0f, -2.0f}));
    EXPECT_EQ(totals[2 + r], 2.0);
    EXPECT_EQ(none[r], (std::vector<float>{0.0f, 0.0f}));
    EXPECT_EQ(totals[4 + r], 0.0);
  }
}

TEST(NcclCommunicator, AFailingMemberEndsTheOthersCollectives) {
  if (const auto why = why_skip(); !why.empty()) GTEST_SKIP() << why;
  const auto members = make_nccl_group({0, 1});
  bool other_aborted = false;
  try {
    run_worker_threads(members, [&](Communicator& c) {
      std::vector<float> v = {1.0f};
      c.all_reduce_sum(v);
      if (c.rank() == 1) throw telar::Error("out of memory on purpose");
      try {
        c.all_reduce_sum(v);  // member 1 never comes: this must throw, not hang
      } catch (const GroupAborted&) {
        other_aborted = true;
        throw;
      }
    });
    FAIL() << "run_worker_threads returned";
  } catch (const WorkerFailed& e) {
    EXPECT_EQ(e.rank, 1);
    EXPECT_NE(std::string(e.what()).find("out of memory on purpose"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(other_aborted);
}
