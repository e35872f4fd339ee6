#include "backend/arena_layout.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace telar::backend {
namespace {

// A chain a -> b -> c (steps 0..3): a lives over steps 0-1, b over 1-2, c over 2-3. By hand,
// 64-byte alignment: b (200 bytes, 256 aligned) first at 0; a (100 -> 128) meets b at step 1: at
// 256; c (100) meets b at step 2 but not a: at 256 as well. The arena: 256 + 128 = 384 bytes, where
// each buffer alone would take 256 + 128 + 128 = 512.
TEST(ArenaLayout, AChainSharesWhatDoesNotLiveAtOnce) {
  const ArenaLayout layout = pack_buffers({{100, 0, 1}, {200, 1, 2}, {100, 2, 3}});
  ASSERT_EQ(layout.offsets.size(), 3u);
  EXPECT_EQ(layout.offsets[1], 0);
  EXPECT_EQ(layout.offsets[0], 256);
  EXPECT_EQ(layout.offsets[2], 256);
  EXPECT_EQ(layout.bytes, 384);
}

// Buffers alive at once never overlap; a gap between two placed ones is taken when it fits.
// x (0-9, 64 bytes) and z (0-9, 64) stay; y (0-0, 128) dies at once and w (5-9, 128) takes its
// place: sizes first: y at 0, w (does not meet y) at 0, x at 128, z at 192.
TEST(ArenaLayout, BuffersAliveAtOnceNeverOverlap) {
  const std::vector<BufferLife> buffers = {{64, 0, 9}, {128, 0, 0}, {64, 0, 9}, {128, 5, 9}};
  const ArenaLayout layout = pack_buffers(buffers);
  EXPECT_EQ(layout.offsets, (std::vector<std::int64_t>{128, 0, 192, 0}));
  EXPECT_EQ(layout.bytes, 256);
  for (std::size_t i = 0; i < buffers.size(); ++i)
    for (std::size_t j = i + 1; j < buffers.size(); ++j) {
      const bool meet = buffers[i].first <= buffers[j].last && buffers[j].first <= buffers[i].last;
      const bool overlap = layout.offsets[i] < layout.offsets[j] + buffers[j].bytes &&
                           layout.offsets[j] < layout.offsets[i] + buffers[i].bytes;
      EXPECT_FALSE(meet && overlap) << i << " and " << j;
    }
}

TEST(ArenaLayout, EmptyAndBadInput) {
  EXPECT_EQ(pack_buffers({}).bytes, 0);
  EXPECT_EQ(pack_buffers({{0, 0, 0}}).bytes, 0);
  EXPECT_THROW(pack_buffers({{8, 2, 1}}), Error);
  EXPECT_THROW(pack_buffers({{-8, 0, 1}}), Error);
}

}  // namespace
}  // namespace telar::backend
