#pragma once
// How many threads a forward pass of a model compiled for inference runs on (training and its
// evaluations keep theirs): the executable's, or one when the machine is shared. oneDNN's OpenMP
// kernels split every primitive statically across their threads and wait at a barrier after it;
// when another process takes one of the cores, each primitive waits for the thread it preempted,
// and a ResNet-18 at batch 1 on 2 threads runs 8x slower beside one busy process. One thread on the
// core left free is then faster. The choice is made from the latencies themselves, per batch size:
// the faster arm (by a moving average) runs, the other is tried now and then (after 4 calls, the
// interval doubling while the choice holds: up to 4096 calls on all the threads, 256 on one, so
// that the end of the load is seen) and at once when a call takes more than twice the best seen on
// its arm.
#include <array>

namespace telar::backend::cpu {

class ThreadChoice {
 public:
  explicit ThreadChoice(int threads) : arms_{{{threads}, {1}}} {}

  // The threads of the next call.
  int next();
  // The latency of a call on `threads` (leave out a plan's first call: it binds primitives).
  void record(int threads, double seconds);

  int threads_in_use() const { return arms_[current_].threads; }
  // Whether the call next() gave out last is a probe: a run on the threads not in use, to see
  // whether they became faster (a benchmark leaves it out of the chosen threads' figures).
  bool probing() const { return probing_; }

 private:
  static constexpr int kFirstProbe = 4;
  static constexpr int kMaxProbe[2] = {4096, 256};  // on all the threads, on one
  struct Arm {
    int threads;
    double estimate = -1.0;  // moving average of its latencies; < 0 until measured
    double best = -1.0;      // its fastest call
  };
  std::array<Arm, 2> arms_;
  int current_ = 0;
  int calls_ = 0;               // since the last probe of the other arm
  int interval_ = kFirstProbe;  // calls between probes
  bool probe_now_ = false;
  bool probing_ = false;  // the call given out by next() is a probe
};

}  // namespace telar::backend::cpu
