#include "train/data/fit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/enum_names.hpp"
#include "core/error.hpp"
#include "core/memory.hpp"
#include "core/parallel.hpp"

namespace telar::train {

namespace {

inline constexpr EnumNames<FitMode, FitMode::Pad> kFitModeNames{{"resize", "pad"}};

// Where output position o of `out` positions reads the `in` input positions, as PyTorch's
// bilinear interpolation with align_corners=False: the source coordinate (o + 0.5)·in/out − 0.5,
// clamped at 0; the two neighbours and the weight of the second.
struct Tap {
  std::int64_t lo, hi;
  float weight;
};

std::vector<Tap> taps(std::int64_t in, std::int64_t out) {
  std::vector<Tap> t(static_cast<std::size_t>(out));
  const double scale = static_cast<double>(in) / static_cast<double>(out);
  for (std::int64_t o = 0; o < out; ++o) {
    const double src = std::max(0.0, (static_cast<double>(o) + 0.5) * scale - 0.5);
    const auto lo = std::min(static_cast<std::int64_t>(src), in - 1);
    t[static_cast<std::size_t>(o)] = {lo, std::min(lo + 1, in - 1),
                                      static_cast<float>(src - static_cast<double>(lo))};
  }
  return t;
}

void check_fit(const Shape& from, const Shape& to, FitMode mode, std::string_view name) {
  const bool images = from.size() == 3 && to.size() == 3;
  require(images && (from[0] == to[0] || from[0] == 1),
          "the samples of {} are {} and the model takes {}: telar replicates one channel and "
          "fits images (C x H x W) to another height and width, no more; give --input with "
          "the data's channels",
          name, shape_str(from), shape_str(to));
  require(mode != FitMode::Pad || (from[1] <= to[1] && from[2] <= to[2]),
          "the samples of {} are {}, larger than the model's input {}: --fit pad cannot shrink "
          "them; use --fit resize or a larger --input",
          name, shape_str(from), shape_str(to));
}

}  // namespace

std::string_view fit_mode_name(FitMode mode) {
  return kFitModeNames(mode);
}

FitMode parse_fit_mode(std::string_view text, std::string_view what) {
  if (const auto mode = kFitModeNames.find(text)) return *mode;
  fail("{} '{}' is not a way to fit samples; use {}", what, text, kFitModeNames.choices());
}

void fit_sample(const float* in, const Shape& from, float* out, const Shape& to, FitMode mode) {
  const std::int64_t h = from[1], w = from[2], oh = to[1], ow = to[2];
  // One channel of the output from channel `c` of the input.
  std::vector<float> plane(static_cast<std::size_t>(oh * ow));
  const auto fit_channel = [&](const float* src) {
    if (mode == FitMode::Pad) {
      std::fill(plane.begin(), plane.end(), 0.0f);
      const std::int64_t top = (oh - h) / 2, left = (ow - w) / 2;
      for (std::int64_t y = 0; y < h; ++y)
        std::copy_n(src + y * w, w, plane.data() + (top + y) * ow + left);
      return;
    }
    const std::vector<Tap> ty = taps(h, oh), tx = taps(w, ow);
    for (std::int64_t y = 0; y < oh; ++y) {
      const Tap& a = ty[static_cast<std::size_t>(y)];
      for (std::int64_t x = 0; x < ow; ++x) {
        const Tap& b = tx[static_cast<std::size_t>(x)];
        const float top = src[a.lo * w + b.lo] * (1 - b.weight) + src[a.lo * w + b.hi] * b.weight;
        const float bottom =
            src[a.hi * w + b.lo] * (1 - b.weight) + src[a.hi * w + b.hi] * b.weight;
        plane[static_cast<std::size_t>(y * ow + x)] = top * (1 - a.weight) + bottom * a.weight;
      }
    }
  };
  for (std::int64_t c = 0; c < to[0]; ++c) {
    if (c == 0 || from[0] != 1) fit_channel(in + (from[0] == 1 ? 0 : c) * h * w);
    std::copy(plane.begin(), plane.end(), out + c * oh * ow);
  }
}

Dataset fit_samples(const Dataset& data, const Shape& input, FitMode mode) {
  const Shape from = data.sample_shape();
  if (from == input) return data;
  check_fit(from, input, mode, data.name);
  const std::int64_t bytes = data.size() * shape_numel(input) * 4;
  const auto available = available_memory_bytes();
  require(!available || bytes < *available * 3 / 4,
          "fitting the {} samples of {} to {} needs {:.1f} GB, more than this machine has free "
          "({:.1f} GB); give a smaller --input",
          data.size(), data.name, shape_str(input), static_cast<double>(bytes) / 1e9,
          static_cast<double>(available.value_or(0)) / 1e9);
  Dataset out = data;
  Shape shape{data.size()};
  shape.insert(shape.end(), input.begin(), input.end());
  out.images = Tensor(shape);
  const std::int64_t in_numel = shape_numel(from), out_numel = shape_numel(input);
  const float* src = data.images.f32();
  float* dst = out.images.f32();
  parallel_for(0, data.size(), data.size() > 64, [&](std::int64_t i) {
    fit_sample(src + i * in_numel, from, dst + i * out_numel, input, mode);
  });
  return out;
}

}  // namespace telar::train
