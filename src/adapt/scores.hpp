#pragma once
// Training-free candidate scores (seed 003, §5.6): what hybrid NetAdapt chooses candidates by in
// its early iterations instead of fine-tuning and evaluating each one. Higher is better.
//   naswot     Mellor et al. 2021: over a batch, each ReLU's on/off pattern is a binary code
//              per sample; K[i][j] counts the units where samples i and j agree; the score is
//              log |det K| (networks that tell inputs apart score higher).
//   grad-norm  Abdelfattah et al. 2021: the sum over parameters of the L2 norm of the loss's
//              gradient on one batch.
//   synflow    Tanaka et al. 2020 (a zero-cost proxy in Abdelfattah et al. 2021): every parameter
//              replaced by its magnitude, BatchNorm and Dropout left out, one all-ones sample
//              through; R is the sum of the outputs, the score Σ θ·∂R/∂θ over every parameter,
//              as its natural log (it grows as a product over the layers). Data-free.
//   params     the candidate's parameter count (the least pruned wins).
//   naswot-layers  telar's variant of naswot: each rectifier's kernel K_l on its own, the score
//              Σ_l log det(K_l + I). naswot's one kernel sums over every unit, so a layer of a
//              few units (a bottleneck the network can no longer tell its inputs apart
//              through) barely moves it; here such a layer's kernel is nearly singular and
//              costs the score as much as a wide layer's.
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/tensor.hpp"
#include "graph/graph.hpp"
#include "graph/loss.hpp"
#include "graph/parameters.hpp"

namespace telar::adapt {

// finetune: NetAdapt's own choice by accuracy after a short-term fine-tune.
enum class CandidateScore : std::uint8_t {
  FineTune,
  Naswot,
  GradNorm,
  Synflow,
  Params,
  NaswotLayers
};
// "finetune", "naswot", "grad-norm", "synflow", "params", "naswot-layers"
std::string_view score_name(CandidateScore score);
CandidateScore parse_score(std::string_view text);

// The score of a model (its weights as they are) on one batch of `images` and `labels`.
double training_free_score(CandidateScore score, const graph::Graph& model,
                           const graph::ParameterSet& weights, graph::LossKind loss,
                           const Tensor& images, const Tensor& labels);

}  // namespace telar::adapt
