#include "core/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "core/clock.hpp"
#include "core/log.hpp"

namespace telar {

ProgressBar::ProgressBar(std::string label, std::int64_t total)
    : label_(std::move(label)),
      total_(std::max<std::int64_t>(total, 1)),
      start_ns_(now_ns()),
      tty_(::isatty(STDERR_FILENO) == 1) {}

ProgressBar::~ProgressBar() {
  if (!finished_ && tty_ && done_ > 0 && log::level() != log::Level::Quiet) std::fputs("\n", stderr);
}

void ProgressBar::update(std::int64_t done, const std::string& status) {
  done_ = std::clamp<std::int64_t>(done, 0, total_);
  if (log::level() == log::Level::Quiet) return;
  const std::int64_t t = now_ns();
  if (tty_) {
    if (t - last_draw_ns_ < 100'000'000 && done_ < total_) return;  // 10 redraws per second
    last_draw_ns_ = t;
    draw(status, false);
  } else {
    int decile = static_cast<int>(done_ * 10 / total_);
    if (decile == last_decile_ || decile == 10) return;
    last_decile_ = decile;
    if (decile > 0) draw(status, true);
  }
}

void ProgressBar::finish(const std::string& status) {
  if (finished_) return;
  done_ = total_;
  finished_ = true;
  if (log::level() == log::Level::Quiet) return;
  draw(status, true);
}

void ProgressBar::draw(const std::string& status, bool final_line) {
  const double elapsed = static_cast<double>(now_ns() - start_ns_) * 1e-9;
  const double fraction = static_cast<double>(done_) / static_cast<double>(total_);
  std::string eta;
  if (done_ > 0 && done_ < total_)
    eta = fmt::format(" eta {:.0f}s", elapsed / fraction - elapsed);
  if (tty_) {
    constexpr int kWidth = 28;
    int filled = static_cast<int>(fraction * kWidth);
    std::string bar(filled, '#');
    bar.resize(kWidth, '.');
    fmt::print(stderr, "\r\033[K{} [{}] {}/{} {:.1f}s{} {}", label_, bar, done_, total_, elapsed,
               eta, status);
    if (final_line) std::fputs("\n", stderr);
  } else {
    fmt::print(stderr, "{} {:3.0f}% ({}/{}) {:.1f}s{} {}\n", label_, fraction * 100.0, done_,
               total_, elapsed, eta, status);
  }
  std::fflush(stderr);
}

}  // namespace telar
