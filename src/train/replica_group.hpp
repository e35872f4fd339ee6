#pragma once
// The seam through which a Trainer becomes one replica of a group that trains one model
// together (data parallelism, implemented in dist/). A lone Trainer has no group. The Trainer
// calls these at fixed points of its loop, equally often on every replica whatever its data,
// so an implementation may run collective operations in them; the gradient exchange itself
// happens inside the replica's Executable (see dist/replica_executable.hpp).
#include <span>
#include <string>

namespace telar::train {

class ReplicaGroup {
 public:
  virtual ~ReplicaGroup() = default;
  // Sums `values` elementwise over the replicas, in place (loss x samples, correct, samples of
  // a step or an evaluation), so every replica reports the group's figures.
  virtual void sum(std::span<double> values) = 0;
  // After the training phase of `epoch` (0-based): the group may re-balance work for the next
  // epoch or check that the replicas agree.
  virtual void end_epoch(int epoch) = 0;
  // What a checkpoint must keep for a resumed run to continue exactly (e.g. the work shares
  // in effect); opaque to the Trainer.
  virtual std::string state() const = 0;
};

}  // namespace telar::train
