#pragma once
// DLRM training checkpoints (`telar dlrm --resume DIR`): the MLPs' parameters, every embedding
// table's trained rows (all rows of a memory or mmap table, the overlay of a procedural one)
// and the run's position, in telar's checkpoint file (train/checkpoint.hpp; the tables in its
// "extra" section as emb/T.values and, for procedural tables, emb/T.rows). Plain SGD keeps no
// optimizer state; batch j's data is a function of the seed and j, so the position is enough to
// continue exactly.
#include <filesystem>
#include <string>

#include "dlrm/executor.hpp"
#include "dlrm/runner.hpp"

namespace telar::runs {

// The checkpoint's file name inside a DLRM run directory.
inline constexpr const char* kDlrmCheckpointFileName = "checkpoint.telar";

// Writes atomically; the tables are copied once into the file's tensors.
void save_dlrm_checkpoint(const std::filesystem::path& path, const dlrm::DlrmModel& model,
                          dlrm::Executor& exe, const dlrm::RunPosition& at);

// Checks the file against the model (the training graph's fingerprint, the tables' shapes)
// before changing anything, then restores the MLPs and the tables of `model` (freshly made from
// the run's options) and returns the position to continue from. Throws telar::Error naming
// the file for a checkpoint of another model or a damaged one.
dlrm::RunPosition load_dlrm_checkpoint(const std::filesystem::path& path, dlrm::DlrmModel& model,
                                       dlrm::Executor& exe);

}  // namespace telar::runs
