#pragma once
// Thread count for compute kernels (OpenMP, which oneDNN uses too).
namespace telar {

int hardware_threads();
// n <= 0 means all hardware threads.
void set_compute_threads(int n);
int compute_threads();

}  // namespace telar
