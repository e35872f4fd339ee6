#pragma once
// What this machine can hold.
#include <cstdint>
#include <optional>

namespace telar {

// Memory available for new allocations without swapping (Linux's MemAvailable), in bytes;
// nothing where /proc/meminfo cannot be read.
std::optional<std::int64_t> available_memory_bytes();

}  // namespace telar
