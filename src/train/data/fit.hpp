#pragma once
// Samples fitted to a model's input of another shape: a 1x28x28 Fashion-MNIST image fed to
// AlexNet at 1x64x64 or to a torchvision network at 3x32x32. One channel is replicated to the
// model's channels; the image is resized bilinearly (PyTorch's interpolate with
// align_corners=False, no antialiasing) or centred in zeros (a larger image cannot be padded).
// A data set keeps its samples as they were loaded and fits each as it is read into a batch
// (Dataset::read_sample): 60,000 images fitted to 3x224x224 would take 36 GB.
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/shape.hpp"

namespace telar::train {

enum class FitMode : std::uint8_t { Resize, Pad };
std::string_view fit_mode_name(FitMode mode);  // "resize", "pad"
FitMode parse_fit_mode(std::string_view text, std::string_view what);

// How samples of one shape (C x H x W) become samples of another.
class SampleFit {
 public:
  // Throws telar::Error (naming the data set `name`, the shapes and what to do) when samples of
  // `from` cannot be fitted to `to` this way.
  SampleFit(const Shape& from, const Shape& to, FitMode mode, std::string_view name);

  const Shape& from() const { return from_; }
  const Shape& to() const { return to_; }
  FitMode mode() const { return mode_; }
  // One sample: numel(from) floats in, numel(to) floats out. Allocates nothing.
  void apply(const float* in, float* out) const;

 private:
  // Where an output position reads its two input neighbours, and the second one's weight.
  struct Tap {
    std::int64_t lo, hi;
    float weight;
  };
  static std::vector<Tap> taps(std::int64_t in, std::int64_t out);

  Shape from_, to_;
  FitMode mode_;
  std::vector<Tap> rows_, columns_;  // Resize only
};

struct Dataset;
// `data` read fitted to `input` (C x H x W): the same samples (shared, not copied) with its
// fit set; the data set itself when its samples are `input` already. Throws as SampleFit does.
Dataset fit_samples(const Dataset& data, const Shape& input, FitMode mode);

}  // namespace telar::train
