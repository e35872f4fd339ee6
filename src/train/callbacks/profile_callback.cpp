#include "train/callbacks/profile_callback.hpp"

namespace telar::train {

void ProfileCallback::on_train_begin(const TrainState&) {
  profiler_.on_train_begin();
  in_run_ = true;
}
void ProfileCallback::on_train_end(const TrainState&) {
  profiler_.on_train_end();
  in_run_ = false;
}
void ProfileCallback::on_epoch_begin(const TrainState& s) { profiler_.on_epoch_begin(s.epoch); }
void ProfileCallback::on_epoch_end(const TrainState&) { profiler_.on_epoch_end(); }
void ProfileCallback::on_batch_begin(const TrainState& s) { profiler_.on_batch_begin(s.batch); }
void ProfileCallback::on_batch_end(const TrainState&) { profiler_.on_batch_end(); }
void ProfileCallback::on_eval_begin(const TrainState&) {
  if (in_run_) profiler_.on_eval_begin();
}
void ProfileCallback::on_eval_end(const TrainState&) {
  if (in_run_) profiler_.on_eval_end();
}
void ProfileCallback::on_node_begin(const TrainState&, const graph::Node& node, backend::Pass pass) {
  if (in_run_) profiler_.on_node_begin(node.name, pass == backend::Pass::Backward);
}
void ProfileCallback::on_node_end(const TrainState&, const graph::Node&, backend::Pass) {
  if (in_run_) profiler_.on_node_end();
}

}  // namespace telar::train
