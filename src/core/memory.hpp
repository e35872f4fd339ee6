#pragma once
// What this machine can hold.
#include <cstdint>
#include <optional>
#include <string>

namespace telar {

// Memory available for new allocations without swapping (Linux's MemAvailable), in bytes;
// nothing where /proc/meminfo cannot be read.
std::optional<std::int64_t> available_memory_bytes();

// A size for messages: "512 KB", "64.0 MB", "1.3 GB" (powers of 1000).
std::string bytes_text(double bytes);

}  // namespace telar
