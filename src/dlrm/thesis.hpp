#pragma once
// The thesis' experiments (spec §5.2): 13 inference workloads of DLRM on the hybrid
// accelerator, and that accelerator as Table 11 gives it.
//   validation  DLRM(1), DLRM(3), DLRM(6) (Centaur's): 5 tables of 1M rows
//   group 1     10/25/50 tables of 1M rows, 20 samples, up to 100 lookups per bag
//   group 2     the same with 80 samples
//   group 3     50 tables of 10M rows, 20 or 80 samples, up to 100 or 1000 lookups
// Every workload: d = 32, --data-generation=random, --mini-batch-size=128 (one batch of
// --data-size samples), --num-indices-per-lookup as named (random 1..N per bag).
#include <string>
#include <string_view>
#include <vector>

#include "backend/sim/target.hpp"
#include "dlrm/config.hpp"

namespace telar::dlrm {

struct ThesisWorkload {
  std::string name;   // "DLRM(1)", "10-1M-20-100" (tables-rows-samples-lookups)
  std::string group;  // "validation", "group 1", "group 2", "group 3"
  std::int64_t tables = 0, rows = 0, data_size = 0, lookups = 0;
  std::string bottom, top;      // --arch-mlp-bot, --arch-mlp-top
  std::string thesis_eb_share;  // the EmbeddingBags' share of cycles the thesis states, or ""
  static constexpr std::int64_t kEmbeddingDim = 32;
  static constexpr std::int64_t kMiniBatch = 128;
  DlrmConfig config() const;
  // The dlrm_s_pytorch.py flags that describe it.
  std::string flags() const;
};

// The 13, in the thesis' order.
const std::vector<ThesisWorkload>& thesis_workloads();
// "all", or names separated by commas ("DLRM(1)" or "dlrm1", "50-10M-80-1000", a group as
// "validation", "group1" ... "group3"); throws telar::Error naming the unknown one.
std::vector<ThesisWorkload> select_thesis_workloads(std::string_view list);

// Table 11: MAERI with 256 multipliers and 128 read / 128 write ports for the MLPs, the CSR
// sparse x dense engine (MAGMA_SPARSE_DENSE, the controller the thesis' code used) with 128
// multipliers and 128/128 ports for the EmbeddingBags; accumulation buffers on; tiles by the
// mapper (the thesis does not state its tiles).
backend::sim::SimTarget thesis_hybrid_target();
inline constexpr const char* kThesisTargetName = "thesis-table11";

}  // namespace telar::dlrm
