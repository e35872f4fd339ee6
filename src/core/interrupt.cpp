#include "core/interrupt.hpp"

#include <fmt/format.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <vector>

namespace telar {

namespace {

std::atomic<int> g_stop_signal{0};
struct sigaction g_previous_int, g_previous_term;

extern "C" void on_stop_signal(int signal) { g_stop_signal.store(signal); }

}  // namespace

StopOnSignal::StopOnSignal() {
  g_stop_signal.store(0);
  // The handler runs on a stack of its own: oneDNN's JIT kernels keep data below the stack
  // pointer, which a signal frame on the interrupted stack would overwrite.
  static std::vector<char> alternate(std::max<std::size_t>(SIGSTKSZ, 64 * 1024));
  stack_t stack{};
  stack.ss_sp = alternate.data();
  stack.ss_size = alternate.size();
  sigaltstack(&stack, nullptr);
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  // SA_RESETHAND: the default action again, so a second signal ends the process.
  action.sa_flags = SA_RESETHAND | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, &g_previous_int);
  sigaction(SIGTERM, &action, &g_previous_term);
}

StopOnSignal::~StopOnSignal() {
  sigaction(SIGINT, &g_previous_int, nullptr);
  sigaction(SIGTERM, &g_previous_term, nullptr);
}

int stop_signal() { return g_stop_signal.load(); }

std::string signal_name(int signal) {
  if (signal == SIGINT) return "SIGINT";
  if (signal == SIGTERM) return "SIGTERM";
  return fmt::format("signal {}", signal);
}

}  // namespace telar
