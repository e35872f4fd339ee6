#pragma once
// A progress bar for long work: redrawn in place on a terminal, a plain line every ~10%
// otherwise (logs and CI). Writes to stderr; silent when logging is quiet.
#include <cstdint>
#include <string>

namespace telar {

class ProgressBar {
 public:
  ProgressBar(std::string label, std::int64_t total);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;
  // Sets the number of completed units; `status` is shown after the bar (e.g. "loss 0.41").
  void update(std::int64_t done, const std::string& status = "");
  void finish(const std::string& status = "");

 private:
  void draw(const std::string& status, bool final_line);
  std::string label_;
  std::int64_t total_;
  std::int64_t done_ = 0;
  std::int64_t start_ns_;
  std::int64_t last_draw_ns_ = 0;
  int last_decile_ = -1;
  bool tty_;
  bool finished_ = false;
};

}  // namespace telar
