#pragma once
// Samples fitted to a model's input of another shape: a 1x28x28 Fashion-MNIST image fed to
// AlexNet at 1x64x64 or to a torchvision network at 3x32x32. One channel is replicated to the
// model's channels; the image is resized bilinearly (PyTorch's interpolate with
// align_corners=False, no antialiasing) or centred in zeros (a larger image cannot be padded).
#include <cstdint>
#include <string_view>

#include "core/shape.hpp"
#include "train/data/dataset.hpp"

namespace telar::train {

enum class FitMode : std::uint8_t { Resize, Pad };
std::string_view fit_mode_name(FitMode mode);  // "resize", "pad"
FitMode parse_fit_mode(std::string_view text, std::string_view what);

// `data` with every sample fitted to `input` (C x H x W), computed once and held in memory; the
// data set itself when its samples are `input` already. Throws telar::Error (naming the shapes
// and what to do) when the samples cannot be fitted or the result would not fit in memory.
Dataset fit_samples(const Dataset& data, const Shape& input, FitMode mode);

// One sample of `from` (C x H x W) fitted to `to` into `out` (numel(to) floats).
void fit_sample(const float* in, const Shape& from, float* out, const Shape& to, FitMode mode);

}  // namespace telar::train
