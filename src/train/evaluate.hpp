#pragma once
// One evaluation pass of a compiled training graph (inputs: images, labels; outputs: logits,
// loss) over a data loader: mean loss and accuracy, no parameter change.
#include <functional>

#include "backend/executable.hpp"
#include "train/callback.hpp"
#include "train/data/batch_source.hpp"

namespace telar::train {

// `on_batch` (optional) is called before each batch with its index and size.
PhaseMetrics evaluate_classifier(backend::Executable& exe, BatchSource& data,
                                 const std::function<void(std::int64_t, std::int64_t)>& on_batch = {});

// Number of rows of `logits` [B,C] whose argmax equals `labels` [B].
std::int64_t count_correct(const Tensor& logits, const Tensor& labels);

}  // namespace telar::train
