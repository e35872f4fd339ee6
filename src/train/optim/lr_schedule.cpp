#include "train/optim/lr_schedule.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.hpp"
#include "core/parse.hpp"

namespace telar::train {

namespace {

constexpr const char* kForms =
    "constant, step:EPOCHS:GAMMA (e.g. step:30:0.1) or exp:DECAY_STEPS:RATE[:staircase] "
    "(e.g. exp:100000:0.96)";

void check_base_lr(double base_lr) {
  require(std::isfinite(base_lr) && base_lr > 0.0,
          "learning rate {} must be a positive number; give --lr (e.g. 0.01)", base_lr);
}

}  // namespace

LrSchedule LrSchedule::constant(double base_lr) {
  check_base_lr(base_lr);
  return LrSchedule(Kind::Constant, base_lr);
}

LrSchedule LrSchedule::step(double base_lr, std::int64_t step_epochs, double gamma) {
  check_base_lr(base_lr);
  require(step_epochs >= 1, "learning-rate schedule step: {} epochs per decay must be 1 or more",
          step_epochs);
  require(std::isfinite(gamma) && gamma > 0.0,
          "learning-rate schedule step: factor {} must be positive (e.g. 0.1)", gamma);
  LrSchedule s(Kind::Step, base_lr);
  s.period_ = step_epochs;
  s.factor_ = gamma;
  return s;
}

LrSchedule LrSchedule::exponential(double base_lr, std::int64_t decay_steps, double decay_rate,
                                   bool staircase) {
  check_base_lr(base_lr);
  require(decay_steps >= 1, "learning-rate schedule exp: {} decay steps must be 1 or more",
          decay_steps);
  require(std::isfinite(decay_rate) && decay_rate > 0.0,
          "learning-rate schedule exp: rate {} must be positive (e.g. 0.96)", decay_rate);
  LrSchedule s(Kind::Exponential, base_lr);
  s.period_ = decay_steps;
  s.factor_ = decay_rate;
  s.staircase_ = staircase;
  return s;
}

LrSchedule LrSchedule::parse(std::string_view spec, double base_lr) {
  const std::vector<std::string> parts = split(trim(spec), ':');
  const std::string& kind = parts[0];
  const auto arity = [&](std::size_t min_args, std::size_t max_args) {
    const std::size_t args = parts.size() - 1;
    require(args >= min_args && args <= max_args,
            "learning-rate schedule '{}': {} takes {} arguments, got {}; use {}", spec, kind,
            min_args == max_args ? fmt::format("{}", min_args)
                                 : fmt::format("{} or {}", min_args, max_args),
            args, kForms);
  };
  const std::string what = fmt::format("learning-rate schedule '{}'", spec);
  if (kind == "constant") {
    arity(0, 0);
    return constant(base_lr);
  }
  if (kind == "step") {
    arity(2, 2);
    return step(base_lr, parse_int(parts[1], what), parse_double(parts[2], what));
  }
  if (kind == "exp") {
    arity(2, 3);
    bool staircase = false;
    if (parts.size() == 4) {
      require(parts[3] == "staircase",
              "learning-rate schedule '{}': the optional third argument is 'staircase', got '{}'",
              spec, parts[3]);
      staircase = true;
    }
    return exponential(base_lr, parse_int(parts[1], what), parse_double(parts[2], what), staircase);
  }
  const std::string suggestion = closest_match(kind, {"constant", "step", "exp"});
  fail("unknown learning-rate schedule '{}'{}; use {}", spec,
       suggestion.empty() ? std::string() : fmt::format(" (did you mean '{}'?)", suggestion),
       kForms);
}

double LrSchedule::at(std::int64_t global_step, std::int64_t epoch) const {
  switch (kind_) {
    case Kind::Constant:
      return base_lr_;
    case Kind::Step:
      return base_lr_ *
             std::pow(factor_, static_cast<double>(std::max<std::int64_t>(epoch, 0) / period_));
    case Kind::Exponential: {
      double exponent = static_cast<double>(std::max<std::int64_t>(global_step, 0)) /
                        static_cast<double>(period_);
      if (staircase_) exponent = std::floor(exponent);
      return base_lr_ * std::pow(factor_, exponent);
    }
  }
  return base_lr_;
}

std::string LrSchedule::spec() const {
  switch (kind_) {
    case Kind::Constant:
      return "constant";
    case Kind::Step:
      return fmt::format("step:{}:{}", period_, factor_);
    case Kind::Exponential:
      return fmt::format("exp:{}:{}{}", period_, factor_, staircase_ ? ":staircase" : "");
  }
  return "constant";
}

}  // namespace telar::train
