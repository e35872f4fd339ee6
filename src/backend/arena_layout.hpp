#pragma once
// Buffers that live over ranges of a schedule's steps, placed in one arena so that two buffers
// whose lifetimes meet never overlap: an inference plan's activations then take the memory of
// the values alive at once (a few layers' worth) instead of every value's.
#include <cstdint>
#include <vector>

namespace telar::backend {

struct BufferLife {
  std::int64_t bytes = 0;
  std::size_t first = 0, last = 0;  // the steps that write and last read it (inclusive)
};

struct ArenaLayout {
  std::vector<std::int64_t> offsets;  // by buffer, multiples of the alignment
  std::int64_t bytes = 0;             // the arena's size
};

// Largest buffer first, each at the lowest offset clear of every placed buffer whose lifetime
// meets its own (a buffer read and written by the same step never shares with the other).
ArenaLayout pack_buffers(const std::vector<BufferLife>& buffers, std::int64_t alignment = 64);

}  // namespace telar::backend
