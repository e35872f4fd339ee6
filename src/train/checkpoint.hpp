#pragma once
// Checkpoints: everything needed to continue a training run exactly, in one versioned binary
// file written atomically (temporary name, then rename), so a crash never leaves a half-written
// checkpoint in place of the last good one.
//
// File layout (all integers little-endian):
//   "TELARCKP"                 8 bytes, magic
//   u32 format version         kCheckpointFormatVersion
//   u32 reserved               0
//   u64 payload size           bytes between the header and the checksum
//   payload                    u32 section count, then per section:
//                                string name, u64 body size, body
//   u32 CRC-32 (zlib) of the payload
// Strings are u32 length + bytes. A tensor list is u32 count, then per tensor: string name,
// u8 dtype (0 f32, 1 f64, 2 i32, 3 i64, 4 u8), u32 rank, i64 dims[rank], raw elements.
// Sections: "model" (string name, u64 fingerprint, i64 parameter count), "parameters" and
// "buffers" (tensor lists keyed by value name), "optimizer" (string name, string description,
// tensor list), "trainer" (i64 epoch, i64 step_in_epoch, i64 global_step, u64 rng[4],
// f64 best_metric, string best_metric_name, string config_json, string progress_json), and,
// only when there is some, "extra" (a tensor list: state kept outside the graph's parameters,
// such as DLRM's embedding tables). Readers skip sections they do not know, so sections can be
// added without a version change.
#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>

#include "graph/graph.hpp"
#include "graph/parameters.hpp"
#include "train/named_tensor.hpp"
#include "train/optim/optimizer.hpp"

namespace telar::train {

inline constexpr std::uint32_t kCheckpointFormatVersion = 1;
inline constexpr char kCheckpointMagic[8] = {'T', 'E', 'L', 'A', 'R', 'C', 'K', 'P'};
// The checkpoint's file name inside a run directory.
inline constexpr const char* kCheckpointFileName = "checkpoint.telar";

// Where the training loop stands. A run resumed from this state continues with batch
// `step_in_epoch` of epoch `epoch` (both counted from 0).
struct TrainerState {
  std::int64_t epoch = 0;
  std::int64_t step_in_epoch = 0;  // batches of `epoch` already trained
  std::int64_t global_step = 0;    // optimizer steps taken in all (drives the lr schedule)
  std::array<std::uint64_t, 4> rng_state{};  // the trainer's Rng (Rng::state / set_state)
  double best_metric = std::numeric_limits<double>::quiet_NaN();  // NaN: none yet
  std::string best_metric_name;                                   // e.g. "val_accuracy"
  std::string config_json;                                        // the resolved run configuration
  std::string progress_json;                                      // the trainer's running sums of the epoch in progress
};

struct Checkpoint {
  std::string model_name;
  std::uint64_t model_fingerprint = 0;
  std::int64_t parameter_count = 0;  // trainable scalars, for messages
  NamedTensors parameters;           // by value name
  NamedTensors buffers;              // by value name (e.g. BatchNorm running statistics)
  std::string optimizer_name;        // empty: no optimizer state saved
  std::string optimizer_description;
  NamedTensors optimizer_state;
  TrainerState trainer;
  NamedTensors extra;  // state outside the graph's parameters (none for a graph's training)
};

// Low level: the file format. write_checkpoint is atomic. read_checkpoint checks the magic,
// version, size and checksum, and the structure of every section it knows; it throws a
// one-line telar::Error for a missing, foreign, truncated, newer-version or corrupted file.
void write_checkpoint(const std::filesystem::path& path, const Checkpoint& checkpoint);
Checkpoint read_checkpoint(const std::filesystem::path& path);

// High level: from and to a model's live state.
// The tensors of the returned Checkpoint share storage with `params` and the optimizer; write
// it before changing them.
Checkpoint capture_checkpoint(const graph::Graph& graph, const graph::ParameterSet& params,
                              const Optimizer* optimizer, const TrainerState& trainer);
void save_checkpoint(const std::filesystem::path& path, const graph::Graph& graph,
                     const graph::ParameterSet& params, const Optimizer* optimizer,
                     const TrainerState& trainer);

struct RestoreOptions {
  // Refuse a checkpoint whose model fingerprint differs from the graph's. Off: load any
  // checkpoint whose parameter names, shapes and dtypes match (e.g. after changing dropout).
  bool require_same_model = true;
  // Restore the optimizer's state when an optimizer is given (resuming training).
  bool restore_optimizer = true;
};

// Checks `checkpoint` against `graph` (model, every parameter and buffer by name, shape and
// dtype, the optimizer's name) and only then copies it into `params` (existing tensors are
// overwritten in place, so backends holding them see the new values) and `optimizer`.
// `source` names the checkpoint in messages. Returns the trainer state.
TrainerState restore_checkpoint(const Checkpoint& checkpoint, const std::filesystem::path& source,
                                const graph::Graph& graph, graph::ParameterSet& params,
                                Optimizer* optimizer, RestoreOptions options = {});
// read_checkpoint + restore_checkpoint.
TrainerState load_checkpoint(const std::filesystem::path& path, const graph::Graph& graph,
                             graph::ParameterSet& params, Optimizer* optimizer,
                             RestoreOptions options = {});

}  // namespace telar::train
