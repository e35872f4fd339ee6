#pragma once
// Thread count for compute kernels (OpenMP, which oneDNN uses too).
#include <functional>

namespace telar {

int hardware_threads();
// The most compute threads telar accepts: OpenMP runtimes fail (or crash) far beyond the core
// count, and oversubscription only slows kernels down.
int max_compute_threads();
// n <= 0 means all hardware threads; n > max_compute_threads() throws telar::Error.
void set_compute_threads(int n);
int compute_threads();
// Runs `body` once on every thread of the compute pool (one parallel region of
// compute_threads() threads; the calling thread is one of them), and starts the pool if it does
// not exist yet. `body` must not throw. Inside another parallel region it runs on the calling
// thread only.
void on_each_compute_thread(const std::function<void()>& body);

}  // namespace telar
