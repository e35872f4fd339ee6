#include "report/training_recorder.hpp"

#include <fmt/format.h>

#include <map>

#include "report/html_report.hpp"
#include "report/svg_chart.hpp"

namespace telar::report {

TrainingRecorder::TrainingRecorder(const RunDirectory& run, std::string title,
                                   std::vector<std::pair<std::string, std::string>> summary,
                                   int resume_at_epoch)
    : run_(run), title_(std::move(title)), summary_(std::move(summary)) {
  if (resume_at_epoch < 0 || !std::filesystem::exists(run.file("metrics.csv"))) return;
  const MetricsTable earlier = MetricsTable::read(run.file("metrics.csv"));
  for (const auto& r : earlier.rows())
    if (r.epoch < resume_at_epoch) metrics_.add(r.epoch, r.batch, r.phase, r.metric, r.value);
}

void TrainingRecorder::on_batch_end(const train::TrainState& s) {
  metrics_.add(s.epoch, s.batch, "train", "loss", s.batch_loss);
  metrics_.add(s.epoch, s.batch, "train", "accuracy", s.batch_accuracy);
  metrics_.add(s.epoch, s.batch, "train", "lr", s.lr);
}

void TrainingRecorder::on_epoch_end(const train::TrainState& s) {
  metrics_.add(s.epoch, -1, "train", "loss", s.train.loss);
  metrics_.add(s.epoch, -1, "train", "accuracy", s.train.accuracy);
  const double secs = s.epoch_seconds.empty() ? 0.0 : s.epoch_seconds.back();
  metrics_.add(s.epoch, -1, "train", "seconds", secs);
  if (secs > 0)
    metrics_.add(s.epoch, -1, "train", "samples_per_s", static_cast<double>(s.train.samples) / secs);
  if (s.eval.samples > 0) {
    metrics_.add(s.epoch, -1, "test", "loss", s.eval.loss);
    metrics_.add(s.epoch, -1, "test", "accuracy", s.eval.accuracy);
    metrics_.add(s.epoch, -1, "test", "seconds", s.eval.seconds);
  }
  metrics_.write(run_.file("metrics.csv"));
}

void TrainingRecorder::on_train_end(const train::TrainState&) { write_report(); }

void TrainingRecorder::write_report() const {
  HtmlReport html(title_);
  html.key_values(summary_);
  // Per-batch curves on a fractional-epoch axis, per-epoch points for the test set.
  std::map<std::int64_t, std::int64_t> batches;  // epoch -> number of batches seen
  for (const auto& r : metrics_.rows())
    if (r.batch >= 0 && r.metric == "loss") batches[r.epoch] = std::max(batches[r.epoch], r.batch + 1);
  auto x_of = [&](std::int64_t epoch, std::int64_t batch) {
    const auto n = batches.count(epoch) ? batches.at(epoch) : 1;
    return static_cast<double>(epoch) + (batch < 0 ? 1.0 : static_cast<double>(batch + 1) / n);
  };
  Series train_loss{"train (batch)", {}, {}}, train_acc{"train (batch)", {}, {}},
      epoch_loss{"train (epoch)", {}, {}},
      epoch_acc{"train (epoch)", {}, {}}, test_loss{"test", {}, {}}, test_acc{"test", {}, {}};
  std::vector<std::vector<std::string>> rows;
  std::map<std::int64_t, std::map<std::string, double>> per_epoch;
  for (const auto& r : metrics_.rows()) {
    const double x = x_of(r.epoch, r.batch);
    if (r.batch >= 0) {
      if (r.metric == "loss") train_loss.x.push_back(x), train_loss.y.push_back(r.value);
      if (r.metric == "accuracy") train_acc.x.push_back(x), train_acc.y.push_back(r.value);
      continue;
    }
    per_epoch[r.epoch][r.phase + " " + r.metric] = r.value;
    Series* target = nullptr;
    if (r.phase == "train" && r.metric == "loss") target = &epoch_loss;
    if (r.phase == "train" && r.metric == "accuracy") target = &epoch_acc;
    if (r.phase == "test" && r.metric == "loss") target = &test_loss;
    if (r.phase == "test" && r.metric == "accuracy") target = &test_acc;
    if (target) target->x.push_back(x), target->y.push_back(r.value);
  }
  html.heading("Loss");
  html.svg(LineChart{"loss", "epoch", "loss", {train_loss, epoch_loss, test_loss}}.render());
  html.heading("Accuracy");
  html.svg(LineChart{"accuracy", "epoch", "accuracy", {train_acc, epoch_acc, test_acc}}.render());
  html.heading("Epochs");
  for (const auto& [epoch, m] : per_epoch) {
    auto get = [&](const char* key) {
      auto it = m.find(key);
      return it == m.end() ? std::string("") : fmt::format("{:.4f}", it->second);
    };
    auto get0 = [&](const char* key) {
      auto it = m.find(key);
      return it == m.end() ? std::string("") : fmt::format("{:.1f}", it->second);
    };
    rows.push_back({std::to_string(epoch + 1), get("train loss"), get("train accuracy"),
                    get("test loss"), get("test accuracy"), get0("train seconds"),
                    get0("train samples_per_s")});
  }
  html.table({"epoch", "train loss", "train accuracy", "test loss", "test accuracy",
              "train seconds", "samples/s"},
             rows);
  html.paragraph("Raw figures: metrics.csv (tidy: epoch, batch, phase, metric, value; batch -1 "
                 "marks whole-epoch values). Configuration: run.json.");
  html.write(run_.file("report.html"));
}

}  // namespace telar::report
