#pragma once
// Thread count for compute kernels (OpenMP, which oneDNN uses too).
namespace telar {

int hardware_threads();
// The most compute threads telar accepts: OpenMP runtimes fail (or crash) far beyond the core
// count, and oversubscription only slows kernels down.
int max_compute_threads();
// n <= 0 means all hardware threads; n > max_compute_threads() throws telar::Error.
void set_compute_threads(int n);
int compute_threads();

}  // namespace telar
