#include "backend/arena_layout.hpp"

#include <algorithm>
#include <numeric>

#include "core/error.hpp"

namespace telar::backend {

ArenaLayout pack_buffers(const std::vector<BufferLife>& buffers, std::int64_t alignment) {
  require(alignment > 0, "internal: arena alignment {}", alignment);
  const auto aligned = [&](std::int64_t bytes) {
    return (bytes + alignment - 1) / alignment * alignment;
  };
  std::vector<std::size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return buffers[a].bytes > buffers[b].bytes;
  });
  ArenaLayout layout;
  layout.offsets.assign(buffers.size(), 0);
  std::vector<std::size_t> placed;
  for (const std::size_t i : order) {
    const BufferLife& b = buffers[i];
    require(b.bytes >= 0 && b.first <= b.last, "internal: buffer of {} bytes living {}..{}",
            b.bytes, b.first, b.last);
    // The address ranges of the placed buffers alive with this one, by offset.
    std::vector<std::pair<std::int64_t, std::int64_t>> taken;
    for (const std::size_t j : placed)
      if (buffers[j].first <= b.last && b.first <= buffers[j].last)
        taken.emplace_back(layout.offsets[j], layout.offsets[j] + aligned(buffers[j].bytes));
    std::sort(taken.begin(), taken.end());
    std::int64_t offset = 0;
    for (const auto& [begin, end] : taken) {
      if (begin - offset >= aligned(b.bytes)) break;  // fits in the gap before this one
      offset = std::max(offset, end);
    }
    layout.offsets[i] = offset;
    layout.bytes = std::max(layout.bytes, offset + aligned(b.bytes));
    placed.push_back(i);
  }
  return layout;
}

}  // namespace telar::backend
