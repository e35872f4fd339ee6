#pragma once
// A communicator joins the workers of one data-parallel job: each worker holds one, knows its
// rank and the group's size, and takes part in collective operations. Every member must call
// the same collectives in the same order (the data-parallel engine guarantees it); a member
// that fails ends the group: the others' pending and later collectives throw GroupAborted
// naming the failed rank, instead of waiting for it forever.
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace telar::dist {

// The group was ended because a member failed; what() names the member and its error.
class GroupAborted : public Error {
 public:
  GroupAborted(const std::string& message, int failed_rank)
      : Error(message), failed_rank(failed_rank) {}
  int failed_rank;
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string kind() const = 0;  // "threads", "mpi", "nccl"

  // Elementwise sum over the members, in place; every member gets bitwise the same result.
  virtual void all_reduce_sum(std::span<float> values) = 0;
  virtual void all_reduce_sum(std::span<double> values) = 0;
  // Copies `bytes` of member `root` into every other member's `bytes` (same length on all).
  virtual void broadcast(std::span<std::byte> bytes, int root) = 0;

  // The weighted mean over the members, in place: each member passes the same number of parts
  // of the same lengths and its weight w (>= 0); every member's parts become
  //   sum_q w_q x_q / sum_q w_q   (0 when every weight is 0; a member of weight 0 is never read)
  // bitwise the same on every member; returns sum_q w_q. This implementation packs the parts
  // into one vector for all_reduce_sum; members that share memory read each other's directly.
  virtual double all_reduce_weighted_mean(std::span<const std::span<float>> parts, float weight);

  // Ends the group because this member failed with `reason`: the other members' collectives
  // throw GroupAborted. For MPI this ends the whole job (MPI_Abort) and does not return.
  virtual void abort(const std::string& reason) = 0;

 private:
  std::vector<float> packed_;  // all_reduce_weighted_mean's buffer, kept between calls
};

}  // namespace telar::dist
