// --communicator auto|threads|nccl: which communicator joins the workers, decided from the
// worker list alone (no GPU needed).
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "dist/communicator_choice.hpp"

using namespace telar::dist;

namespace {

std::string choose(const std::string& requested, const std::string& workers, bool nccl_built) {
  return choose_communicator(requested, parse_workers(workers), nccl_built);
}

std::string error_of(const std::string& requested, const std::string& workers, bool nccl_built) {
  try {
    choose(requested, workers, nccl_built);
  } catch (const telar::Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST(CommunicatorChoice, AutoPicksNcclOnlyForDistinctGpusWithNcclBuilt) {
  EXPECT_EQ(choose("auto", "cuda:0,cuda:1", true), "nccl");
  EXPECT_EQ(choose("auto", "cuda:1,cuda:0,cuda:2", true), "nccl");
  EXPECT_EQ(choose("auto", "cuda:0,cuda:1", false), "threads");
  EXPECT_EQ(choose("auto", "cuda:0,cpu:threads=1", true), "threads");
  EXPECT_EQ(choose("auto", "cuda:0,cuda:0", true), "threads");  // NCCL: one rank per GPU
  EXPECT_EQ(choose("auto", "cpu:threads=1,cpu:threads=1", true), "threads");
  EXPECT_EQ(choose("auto", "mpi", true), "mpi");
  EXPECT_EQ(choose("auto", "mpi", false), "mpi");
}

TEST(CommunicatorChoice, ExplicitChoices) {
  EXPECT_EQ(choose("threads", "cuda:0,cuda:1", true), "threads");
  EXPECT_EQ(choose("nccl", "cuda:0,cuda:1", true), "nccl");
}

TEST(CommunicatorChoice, BadChoicesSayWhatToChange) {
  const std::string cpu = error_of("nccl", "cpu:threads=1,cpu:threads=1", true);
  EXPECT_NE(cpu.find("worker 'cpu:threads=1' is not a CUDA device"), std::string::npos) << cpu;
  const std::string shared = error_of("nccl", "cuda:0,cuda:0", true);
  EXPECT_NE(shared.find("share CUDA device 0"), std::string::npos) << shared;
  const std::string unbuilt = error_of("nccl", "cuda:0,cuda:1", false);
  EXPECT_NE(unbuilt.find("built without NCCL"), std::string::npos) << unbuilt;
  EXPECT_NE(error_of("nccl", "mpi", true).find("--workers mpi"), std::string::npos);
  EXPECT_NE(error_of("threads", "mpi", true).find("--workers mpi"), std::string::npos);
  const std::string bogus = error_of("gloo", "cuda:0,cuda:1", true);
  EXPECT_NE(bogus.find("expected auto, threads or nccl"), std::string::npos) << bogus;
  for (const auto& e : {cpu, shared, unbuilt, bogus}) EXPECT_EQ(e.find('\n'), std::string::npos) << e;
}

TEST(CommunicatorChoice, CudaDeviceIndex) {
  using telar::backend::parse_backend_spec;
  EXPECT_EQ(cuda_device_index(parse_backend_spec("cuda")), 0);
  EXPECT_EQ(cuda_device_index(parse_backend_spec("cuda:3")), 3);
  EXPECT_EQ(cuda_device_index(parse_backend_spec("cpu:threads=2")), -1);
}
