#include "dist/balance.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.hpp"
#include "core/parse.hpp"

namespace telar::dist {

namespace {
constexpr const char* kForms = "equal, factor:F, factor:F@RANK, weights:A/B/..., auto or dynamic";

double parse_positive(const std::string& text, const std::string& spec, const char* what) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v) || v <= 0)
    fail("--balance {}: {} '{}' must be a positive number", spec, what, text);
  return v;
}
}  // namespace

Balance Balance::parse(const std::string& text) {
  Balance b;
  b.text = text;
  const auto colon = text.find(':');
  const std::string kind = text.substr(0, colon);
  const std::string arg = colon == std::string::npos ? "" : text.substr(colon + 1);
  auto no_argument = [&](Kind k) {
    require(colon == std::string::npos, "--balance {}: '{}' takes no argument; use {}", text, kind, kForms);
    b.kind = k;
    return b;
  };
  if (kind == "equal") return no_argument(Kind::Equal);
  if (kind == "auto") return no_argument(Kind::Auto);
  if (kind == "dynamic") return no_argument(Kind::Dynamic);
  if (kind == "factor") {
    require(!arg.empty(), "--balance {}: give the factor, e.g. factor:12", text);
    b.kind = Kind::Factor;
    const auto at = arg.find('@');
    b.factor = parse_positive(arg.substr(0, at), text, "factor");
    if (at != std::string::npos) {
      b.factor_rank = static_cast<int>(parse_int(arg.substr(at + 1), "--balance " + text));
      require(b.factor_rank >= 0, "--balance {}: the rank must be 0 or more", text);
    }
    return b;
  }
  if (kind == "weights") {
    require(!arg.empty(), "--balance {}: give one weight per worker, e.g. weights:4/1", text);
    b.kind = Kind::Weights;
    for (const std::string& w : split(arg, '/')) b.weights.push_back(parse_positive(w, text, "weight"));
    return b;
  }
  const std::string near = closest_match(kind, {"equal", "factor", "weights", "auto", "dynamic"});
  fail("--balance {}: unknown balance{}; use {}", text,
       near.empty() ? "" : fmt::format(" (did you mean '{}'?)", near), kForms);
}

std::vector<double> Balance::initial_shares(int workers) const {
  std::vector<double> w(static_cast<std::size_t>(workers), 1.0);
  if (kind == Kind::Factor) {
    const int r = factor_rank < 0 ? workers - 1 : factor_rank;
    require(r < workers, "--balance {}: rank {} is not one of the {} workers", text, r, workers);
    w[static_cast<std::size_t>(r)] = 1.0 / factor;
  } else if (kind == Kind::Weights) {
    require(static_cast<int>(weights.size()) == workers,
            "--balance {}: {} weights for {} workers; give one per worker", text, weights.size(),
            workers);
    w = weights;
  }
  return normalize_shares(w);
}

std::vector<double> normalize_shares(std::span<const double> weights) {
  double total = 0.0;
  for (double w : weights) {
    require(w >= 0.0 && std::isfinite(w), "internal: work weight {} is not a non-negative number", w);
    total += w;
  }
  require(total > 0.0, "internal: every worker has weight 0");
  std::vector<double> shares;
  for (double w : weights) shares.push_back(w / total);
  return shares;
}

std::string slower_than_alone_warning(double group_samples_per_s,
                                      std::span<const double> alone_samples_per_s) {
  if (alone_samples_per_s.size() < 2) return "";
  const auto fastest = std::max_element(alone_samples_per_s.begin(), alone_samples_per_s.end());
  if (!(group_samples_per_s < kSlowerThanAloneWarning * *fastest)) return "";
  return fmt::format(
      "the {} workers trained {:.0f} samples/s together, less than worker {} alone ({:.0f} "
      "samples/s in the warm-up): exchanging gradients costs more than the other workers add; "
      "train on worker {}'s device alone, or with a larger --batch-size",
      alone_samples_per_s.size(), group_samples_per_s,
      fastest - alone_samples_per_s.begin(), *fastest, fastest - alone_samples_per_s.begin());
}

std::vector<std::int64_t> split_count(std::int64_t total, std::span<const double> shares) {
  const std::size_t n = shares.size();
  std::vector<std::int64_t> parts(n, 0);
  if (n == 0 || total <= 0) return parts;
  std::vector<double> remainder(n, 0.0);
  std::int64_t given = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double exact = static_cast<double>(total) * shares[i];
    parts[i] = static_cast<std::int64_t>(std::floor(exact));
    remainder[i] = exact - static_cast<double>(parts[i]);
    given += parts[i];
  }
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return remainder[a] > remainder[b]; });
  for (std::size_t k = 0; given < total; k = (k + 1) % n, ++given) ++parts[order[k]];
  while (given > total) {  // rounding of shares that sum to slightly more than 1
    for (std::size_t k = n; k-- > 0 && given > total;)
      if (parts[order[k]] > 0) {
        --parts[order[k]];
        --given;
      }
  }
  return parts;
}

}  // namespace telar::dist
