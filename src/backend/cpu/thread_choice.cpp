#include "backend/cpu/thread_choice.hpp"

#include <algorithm>

namespace telar::backend::cpu {

int ThreadChoice::next() {
  probing_ = probe_now_ || calls_ >= interval_;
  if (probing_) {
    probe_now_ = false;
    calls_ = 0;
    return arms_[1 - current_].threads;
  }
  ++calls_;
  return arms_[current_].threads;
}

void ThreadChoice::record(int threads, double seconds) {
  const int a = arms_[current_].threads == threads ? current_ : 1 - current_;
  Arm& arm = arms_[a];
  if (a == current_) {
    arm.estimate = arm.estimate < 0.0 ? seconds : 0.7 * arm.estimate + 0.3 * seconds;
    // A call far slower than this arm has run: the machine changed; try the other soon.
    if (arm.best > 0.0 && seconds > 2.0 * arm.best && calls_ >= 2) probe_now_ = true;
  } else {
    arm.estimate = seconds;  // a probe: the fresh figure replaces a stale one
  }
  arm.best = arm.best < 0.0 ? seconds : std::min(arm.best, seconds);
  Arm& in_use = arms_[current_];
  Arm& other = arms_[1 - current_];
  if (other.estimate >= 0.0 && in_use.estimate >= 0.0 && other.estimate < 0.9 * in_use.estimate) {
    current_ = 1 - current_;
    interval_ = std::min(kFirstProbe, kMaxProbe[current_]);
    calls_ = 0;
    probe_now_ = false;  // the switch is the answer
  } else if (a != current_) {
    // The probe confirmed the choice: probe less often.
    interval_ = std::min(2 * interval_, kMaxProbe[current_]);
  }
}

}  // namespace telar::backend::cpu
