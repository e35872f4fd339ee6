#pragma once
// The memory controller's states (STONNE's SDMemory): configure the fabric, distribute the
// stationary operand, stream the other, wait for the fabric to finish the iteration; then the
// next iteration or, once everything is sent, the end.
#include <cstdint>

namespace telar::sim::fabric {

enum class ControllerState : std::uint8_t { Configuring, DistSta, DistStr, Waiting, AllSent };

// The end-of-cycle step of MAGMA's and the TPU mesh's controllers. `iteration_done` is the
// fabric's "this iteration is complete" flag: it moves the stationary phase on and ends the
// streaming phase (consumed then), and a waiting controller reconfigures on it (left set).
// `all_sent`: the last iteration has been streamed. `has_stationary`: the dataflow distributes
// a stationary operand before streaming (the mesh streams both operands at once).
inline void step_controller(ControllerState& state, bool& iteration_done, bool all_sent,
                            bool has_stationary) {
  using S = ControllerState;
  switch (state) {
    case S::Configuring:
      state = has_stationary ? S::DistSta : S::DistStr;
      break;
    case S::DistSta:
      if (iteration_done) {
        state = S::DistStr;
        iteration_done = false;
      }
      break;
    case S::DistStr:
      if (all_sent) {
        state = S::AllSent;
      } else if (iteration_done) {
        state = S::Waiting;
        iteration_done = false;
      }
      break;
    case S::Waiting:
      if (iteration_done) state = S::Configuring;
      break;
    case S::AllSent:
      break;
  }
}

}  // namespace telar::sim::fabric
