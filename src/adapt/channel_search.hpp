#pragma once
// How many output channels a layer keeps in one NetAdapt step: the largest count of a list
// (descending, NetAdapt's multiples of 8 below the current count) whose resource is below the
// iteration's constraint. `linear` tries them in order, as NetAdapt's reference code does;
// `bisection` (seed 003, §5.4) halves the list while it is longer than a threshold, then scans
// what is left: the same answer wherever the resource falls as channels do, in O(log n +
// threshold) evaluations instead of O(n).
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

namespace telar::adapt {

enum class ChannelSearch : std::uint8_t { Linear, Bisection };
std::string_view search_name(ChannelSearch search);  // "linear", "bisection"
ChannelSearch parse_search(std::string_view text);

struct SearchResult {
  std::optional<std::int64_t> channels;  // none: no count meets the constraint
  double resource = 0.0;  // the resource of `channels`, as evaluated (confirmed: the mean of both)
  int evaluations = 0;    // calls of the resource function
  int unconfirmed = 0;    // counts that met the constraint once and not when evaluated again
};

// Whether a count that meets the constraint is evaluated again before it is taken. A measured
// latency is noisy: a scan that stops at the first figure under the constraint takes a lucky
// one, and a layer that hardly changes the latency gets scanned down to a width that met it only
// by chance. Confirmed, a count is taken when a second, independent figure is under the
// constraint too; otherwise the scan goes on to the next count.
enum class Confirm : std::uint8_t { Once, Twice };

// The first count of `descending` whose resource is below `constraint`. Bisection scans the last
// `threshold` + 1 counts of its narrowed range linearly (the reference's threshold is 16).
SearchResult find_channels(const std::vector<std::int64_t>& descending,
                           const std::function<double(std::int64_t)>& resource, double constraint,
                           ChannelSearch search, int threshold = 16,
                           Confirm confirm = Confirm::Once);

}  // namespace telar::adapt
