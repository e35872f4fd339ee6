#include "train/data/synthetic.hpp"

#include "core/error.hpp"
#include "core/rng.hpp"

namespace telar::train {

namespace {
// Stream labels that keep the prototype and noise streams apart from each other and from
// other users of the same seed.
constexpr std::uint64_t kPrototypeStream = 0x70726f746fULL;  // "proto"
constexpr std::uint64_t kNoiseStream = 0x6e6f697365ULL;      // "noise"
}  // namespace

Dataset make_synthetic_classification(const SyntheticSpec& spec, std::uint64_t noise_stream) {
  require(spec.samples >= 1, "synthetic data: {} samples requested; give at least 1", spec.samples);
  require(spec.num_classes >= 1, "synthetic data: {} classes requested; give at least 1",
          spec.num_classes);
  require(!spec.sample_shape.empty() && shape_is_concrete(spec.sample_shape) &&
              shape_numel(spec.sample_shape) > 0,
          "synthetic data: sample shape {} must have positive sizes", shape_str(spec.sample_shape));
  require(spec.noise >= 0.0f, "synthetic data: noise {} must not be negative", spec.noise);

  const std::int64_t features = shape_numel(spec.sample_shape);
  std::vector<float> prototypes(static_cast<std::size_t>(spec.num_classes * features));
  for (std::int64_t c = 0; c < spec.num_classes; ++c) {
    Rng rng = Rng::derive(spec.seed, kPrototypeStream + static_cast<std::uint64_t>(c));
    for (std::int64_t f = 0; f < features; ++f)
      prototypes[static_cast<std::size_t>(c * features + f)] = rng.normal(0.0f, 1.0f);
  }

  Shape shape = spec.sample_shape;
  shape.insert(shape.begin(), spec.samples);
  Dataset out{spec.name, Tensor(shape, DType::F32), Tensor({spec.samples}, DType::I64),
              spec.num_classes, nullptr};
  float* x = out.images.f32();
  std::int64_t* y = out.labels.data<std::int64_t>();
  Rng noise = Rng::derive(spec.seed ^ mix64(noise_stream), kNoiseStream);
  for (std::int64_t i = 0; i < spec.samples; ++i) {
    const std::int64_t c = i % spec.num_classes;
    y[i] = c;
    const float* prototype = &prototypes[static_cast<std::size_t>(c * features)];
    for (std::int64_t f = 0; f < features; ++f)
      x[i * features + f] = prototype[f] + spec.noise * static_cast<float>(noise.normal());
  }
  return out;
}

}  // namespace telar::train
