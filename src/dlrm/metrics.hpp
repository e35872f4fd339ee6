#pragma once
// Click-prediction metrics: accuracy as DLRM computes it (round(p) == target), the area under
// the ROC curve, and the mean loss over samples.
#include <cstdint>
#include <vector>

namespace telar::dlrm {

// Number of samples with round(p) == target (DLRM's accuracy count).
std::int64_t count_correct(const float* probabilities, const float* targets, std::int64_t n);

// Area under the ROC curve of scores against 0/1 labels (ties share ranks). Returns NaN when
// one class is absent.
double roc_auc(const std::vector<float>& scores, const std::vector<float>& labels);

}  // namespace telar::dlrm
