#include "adapt/channel_search.hpp"

#include "core/enum_names.hpp"
#include "core/error.hpp"

namespace telar::adapt {

namespace {
inline constexpr EnumNames<ChannelSearch, ChannelSearch::Bisection> kSearchNames{
    {"linear", "bisection"}};
}  // namespace

std::string_view search_name(ChannelSearch search) {
  return kSearchNames(search);
}

ChannelSearch parse_search(std::string_view text) {
  if (const auto search = kSearchNames.find(text)) return *search;
  fail("--search '{}' is not a channel search; use {}", text, kSearchNames.choices());
}

SearchResult find_channels(const std::vector<std::int64_t>& descending,
                           const std::function<double(std::int64_t)>& resource, double constraint,
                           ChannelSearch search, int threshold, Confirm confirm) {
  require(threshold >= 1, "internal: bisection threshold {} is below 1", threshold);
  SearchResult result;
  double last = 0.0;
  const auto meets = [&](std::size_t i) {
    ++result.evaluations;
    last = resource(descending[i]);
    return last < constraint;
  };
  if (descending.empty()) return result;
  std::size_t left = 0, right = descending.size() - 1;
  if (search == ChannelSearch::Bisection) {
    // As the reference: `right` ends at a count that meets the constraint (or the last one),
    // `left` at one that does not (or the first one).
    while (right - left > static_cast<std::size_t>(threshold)) {
      const std::size_t mid = (left + right) / 2;
      (meets(mid) ? right : left) = mid;
    }
  }
  for (std::size_t i = left; i <= right; ++i) {
    if (!meets(i)) continue;
    double figure = last;
    if (confirm == Confirm::Twice) {
      if (!meets(i)) {
        ++result.unconfirmed;
        continue;
      }
      figure = (figure + last) / 2.0;
    }
    result.channels = descending[i];
    result.resource = figure;
    break;
  }
  return result;
}

}  // namespace telar::adapt
