#pragma once
// Stopping long work cleanly on SIGINT (Ctrl-C) or SIGTERM. While a StopOnSignal is alive, the
// first such signal only records a request to stop; the work checks stop_signal() at safe
// points (training: after each batch), saves what it must and throws Interrupted. The handler
// then restores the default action, so a second signal ends the process at once.
#include <string>

#include "core/error.hpp"

namespace telar {

// Work that stopped because it was asked to; the command exits with 128 + the signal
// (130 for SIGINT, 143 for SIGTERM), the shells' convention.
class Interrupted : public Error {
 public:
  Interrupted(const std::string& message, int signal) : Error(message), signal(signal) {}
  int signal;
};

class StopOnSignal {
 public:
  StopOnSignal();  // installs the handlers (and clears an earlier request)
  ~StopOnSignal();  // restores the handlers that were there before
  StopOnSignal(const StopOnSignal&) = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;
};

// The signal that asked to stop (SIGINT, SIGTERM), or 0.
int stop_signal();
// "SIGINT", "SIGTERM", or "signal N".
std::string signal_name(int signal);

}  // namespace telar
