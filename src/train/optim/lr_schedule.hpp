#pragma once
// Learning-rate schedules, a pure function of the position in training, so a resumed run gets
// the same rates as an uninterrupted one:
//   constant                  lr
//   step:EPOCHS:GAMMA         lr * GAMMA^floor(epoch / EPOCHS)   (PyTorch StepLR, per epoch)
//   exp:DECAY_STEPS:RATE      lr * RATE^(step / DECAY_STEPS)     (Keras ExponentialDecay,
//   exp:DECAY_STEPS:RATE:staircase   ... with floor(step / DECAY_STEPS))   staircase=False/True)
// where `step` is the number of optimizer steps taken before this one (Keras' iterations)
// and `epoch` counts from 0. The seed-001 schedule is ExponentialDecay(0.05, 100000, 0.96):
// --lr 0.05 --lr-schedule exp:100000:0.96.
#include <cstdint>
#include <string>
#include <string_view>

namespace telar::train {

class LrSchedule {
 public:
  enum class Kind { Constant, Step, Exponential };

  static LrSchedule constant(double base_lr);
  static LrSchedule step(double base_lr, std::int64_t step_epochs, double gamma);
  static LrSchedule exponential(double base_lr, std::int64_t decay_steps, double decay_rate,
                                bool staircase = false);
  // Parses the forms above; `base_lr` comes from --lr. Throws telar::Error naming the schedule
  // and the accepted forms.
  static LrSchedule parse(std::string_view spec, double base_lr);

  // The rate for the optimizer step after `global_step` steps, in epoch `epoch`.
  double at(std::int64_t global_step, std::int64_t epoch) const;

  Kind kind() const { return kind_; }
  double base_lr() const { return base_lr_; }
  // The spec, in the form parse() reads (for run.json), e.g. "exp:100000:0.96".
  std::string spec() const;

 private:
  LrSchedule(Kind kind, double base_lr) : kind_(kind), base_lr_(base_lr) {}
  Kind kind_ = Kind::Constant;
  double base_lr_ = 0.0;
  std::int64_t period_ = 1;  // step: epochs per decay; exponential: decay_steps
  double factor_ = 1.0;      // step: gamma; exponential: decay_rate
  bool staircase_ = false;
};

}  // namespace telar::train
