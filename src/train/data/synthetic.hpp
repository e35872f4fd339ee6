#pragma once
// A synthetic classification data set for tests and quick runs: each class has a prototype
// drawn from N(0, 1); a sample is its class prototype plus N(0, noise^2) noise. Learnable by
// any model that can separate Gaussian clusters, deterministic by seed, any sample shape.
#include <cstdint>
#include <string>

#include "train/data/dataset.hpp"

namespace telar::train {

struct SyntheticSpec {
  std::int64_t samples = 1024;
  Shape sample_shape = {1, 8, 8};  // C x H x W, or {features}
  std::int64_t num_classes = 4;
  float noise = 0.5f;  // standard deviation of the per-sample noise
  std::uint64_t seed = 0;
  std::string name = "synthetic";
};

// Labels cycle through the classes (sample i has class i % num_classes) so that every class
// is equally represented; the loader shuffles. The prototypes depend only on (seed, class),
// so sets made with the same seed share their classes: make a "train" and a "test" set from
// one spec with different `noise_stream`s.
Dataset make_synthetic_classification(const SyntheticSpec& spec, std::uint64_t noise_stream = 0);

}  // namespace telar::train
