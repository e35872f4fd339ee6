#include "train/evaluate.hpp"

#include <fmt/format.h>

#include <cmath>

#include "core/clock.hpp"
#include "core/error.hpp"

namespace telar::train {

std::int64_t count_correct(const Tensor& logits, const Tensor& labels) {
  const std::int64_t rows = logits.dim(0), classes = logits.dim(1);
  const float* p = logits.f32();
  const std::int64_t* y = labels.data<std::int64_t>();
  std::int64_t correct = 0;
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* row = p + r * classes;
    std::int64_t best = 0;
    for (std::int64_t c = 1; c < classes; ++c)
      if (row[c] > row[best]) best = c;
    correct += best == y[r];
  }
  return correct;
}

PhaseMetrics evaluate_classifier(backend::Executable& exe, BatchSource& data,
                                 const std::function<void(std::int64_t, std::int64_t)>& on_batch) {
  Stopwatch sw;
  double loss_sum = 0.0;
  std::int64_t correct = 0, samples = 0;
  std::vector<Tensor> inputs(2);
  for (std::int64_t i = 0; i < data.batches_per_epoch(); ++i) {
    const Batch& b = data.batch(0, i);
    if (on_batch) on_batch(i, b.size);
    inputs[0] = b.images;
    inputs[1] = b.labels;
    exe.forward(inputs, backend::Mode::Eval);
    const double loss = exe.output(1).f32()[0];
    if (!std::isfinite(loss))
      fail("the evaluation loss is {} on batch {} of {}; the model's parameters are not finite "
           "(was it trained with too high a learning rate?)",
           loss, i, data.source_name());
    loss_sum += loss * static_cast<double>(b.size);
    correct += count_correct(exe.output(0), b.labels);
    samples += b.size;
  }
  PhaseMetrics m;
  m.samples = samples;
  m.loss = samples ? loss_sum / static_cast<double>(samples) : 0.0;
  m.accuracy = samples ? static_cast<double>(correct) / static_cast<double>(samples) : 0.0;
  m.seconds = sw.seconds();
  return m;
}

}  // namespace telar::train
