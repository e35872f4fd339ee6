#include "train/data/fit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/enum_names.hpp"
#include "core/error.hpp"
#include "train/data/dataset.hpp"

namespace telar::train {

namespace {

inline constexpr EnumNames<FitMode, FitMode::Pad> kFitModeNames{{"resize", "pad"}};

}  // namespace

std::string_view fit_mode_name(FitMode mode) {
  return kFitModeNames(mode);
}

FitMode parse_fit_mode(std::string_view text, std::string_view what) {
  if (const auto mode = kFitModeNames.find(text)) return *mode;
  fail("{} '{}' is not a way to fit samples; use {}", what, text, kFitModeNames.choices());
}

// PyTorch's bilinear interpolation with align_corners=False: output position o reads the
// source coordinate (o + 0.5)·in/out − 0.5, clamped at 0, from its two neighbours.
std::vector<SampleFit::Tap> SampleFit::taps(std::int64_t in, std::int64_t out) {
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

SampleFit::SampleFit(const Shape& from, const Shape& to, FitMode mode, std::string_view name)
    : from_(from), to_(to), mode_(mode) {
  const bool images = from.size() == 3 && to.size() == 3;
  require(images && (from[0] == to[0] || from[0] == 1),
          "the samples of {} are {} and the model takes {}: telar replicates one channel and "
          "fits images (C x H x W) to another height and width, no more; give data with the "
          "model's channels, or a model made for the data's (--input when it is built)",
          name, shape_str(from), shape_str(to));
  require(mode != FitMode::Pad || (from[1] <= to[1] && from[2] <= to[2]),
          "the samples of {} are {}, larger than the model's input {}: --fit pad cannot shrink "
          "them; use --fit resize, or a model with a larger input",
          name, shape_str(from), shape_str(to));
  if (mode == FitMode::Resize) {
    rows_ = taps(from[1], to[1]);
    columns_ = taps(from[2], to[2]);
  }
}

void SampleFit::apply(const float* in, float* out) const {
  const std::int64_t h = from_[1], w = from_[2], oh = to_[1], ow = to_[2];
  // Channel c of the output from `src`, one channel of the input.
  const auto fit_channel = [&](const float* src, float* plane) {
    if (mode_ == FitMode::Pad) {
      std::fill(plane, plane + oh * ow, 0.0f);
      const std::int64_t top = (oh - h) / 2, left = (ow - w) / 2;
      for (std::int64_t y = 0; y < h; ++y)
        std::copy_n(src + y * w, w, plane + (top + y) * ow + left);
      return;
    }
    for (std::int64_t y = 0; y < oh; ++y) {
      const Tap& a = rows_[static_cast<std::size_t>(y)];
      for (std::int64_t x = 0; x < ow; ++x) {
        const Tap& b = columns_[static_cast<std::size_t>(x)];
        const float top = src[a.lo * w + b.lo] * (1 - b.weight) + src[a.lo * w + b.hi] * b.weight;
        const float bottom =
            src[a.hi * w + b.lo] * (1 - b.weight) + src[a.hi * w + b.hi] * b.weight;
        plane[y * ow + x] = top * (1 - a.weight) + bottom * a.weight;
      }
    }
  };
  for (std::int64_t c = 0; c < to_[0]; ++c) {
    float* plane = out + c * oh * ow;
    if (from_[0] == 1 && c > 0)
      std::copy_n(out, oh * ow, plane);  // one channel replicated
    else
      fit_channel(in + c * h * w, plane);
  }
}

Dataset fit_samples(const Dataset& data, const Shape& input, FitMode mode) {
  const Shape from = data.stored_sample_shape();
  Dataset out = data;
  if (from == input) {
    out.fit.reset();
    return out;
  }
  out.fit = std::make_shared<const SampleFit>(from, input, mode, data.name);
  return out;
}

}  // namespace telar::train
