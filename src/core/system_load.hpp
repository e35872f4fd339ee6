#pragma once
// How busy this machine is: what a benchmark records beside its figures.
#include <optional>

namespace telar {

// The 1-minute load average (/proc/loadavg); nothing where it cannot be read.
std::optional<double> load_average();

}  // namespace telar
