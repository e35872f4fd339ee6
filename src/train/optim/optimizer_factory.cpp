// make_optimizer: from the options a user typed to an optimizer, rejecting options the chosen
// optimizer would silently ignore.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.hpp"
#include "core/parse.hpp"
#include "train/optim/adagrad.hpp"
#include "train/optim/adam.hpp"
#include "train/optim/optimizer.hpp"
#include "train/optim/sgd.hpp"

namespace telar::train {

const std::vector<std::string>& optimizer_names() {
  static const std::vector<std::string> names = {"sgd", "adagrad", "adam"};
  return names;
}

namespace {

void reject_unused(const OptimizerOptions& o, std::string_view option, bool is_set) {
  if (is_set)
    fail("{} does not use {}; leave it out{}", o.name, option,
         option == "--momentum" ? fmt::format(" or choose --optimizer sgd") : std::string());
}

}  // namespace

std::unique_ptr<Optimizer> make_optimizer(const OptimizerOptions& o) {
  const OptimizerOptions defaults;
  const bool momentum_set = o.momentum != defaults.momentum || o.nesterov;
  const bool betas_set = o.beta1 != defaults.beta1 || o.beta2 != defaults.beta2;
  const bool adagrad_set =
      o.lr_decay != defaults.lr_decay || o.initial_accumulator != defaults.initial_accumulator;
  if (o.name == "sgd") {
    reject_unused(o, "betas", betas_set);
    reject_unused(o, "eps", o.eps >= 0.0f);
    reject_unused(o, "adagrad's lr decay and initial accumulator", adagrad_set);
    return std::make_unique<Sgd>(SgdOptions{o.momentum, o.nesterov, o.weight_decay});
  }
  if (o.name == "adagrad") {
    reject_unused(o, "--momentum", momentum_set);
    reject_unused(o, "betas", betas_set);
    AdagradOptions a;
    a.lr_decay = o.lr_decay;
    a.weight_decay = o.weight_decay;
    a.initial_accumulator = o.initial_accumulator;
    if (o.eps >= 0.0f) a.eps = o.eps;
    return std::make_unique<Adagrad>(a);
  }
  if (o.name == "adam") {
    reject_unused(o, "--momentum", momentum_set);
    reject_unused(o, "adagrad's lr decay and initial accumulator", adagrad_set);
    AdamOptions a;
    a.beta1 = o.beta1;
    a.beta2 = o.beta2;
    a.weight_decay = o.weight_decay;
    if (o.eps >= 0.0f) a.eps = o.eps;
    return std::make_unique<Adam>(a);
  }
  const std::string suggestion = closest_match(o.name, optimizer_names());
  fail("unknown optimizer '{}'{}; choose one of: {}", o.name,
       suggestion.empty() ? std::string() : fmt::format(" (did you mean '{}'?)", suggestion),
       fmt::join(optimizer_names(), ", "));
}

}  // namespace telar::train
