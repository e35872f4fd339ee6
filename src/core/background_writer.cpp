#include "core/background_writer.hpp"

#include "core/files.hpp"

namespace telar {

BackgroundWriter::BackgroundWriter(std::size_t max_queued_bytes)
    : max_bytes_(max_queued_bytes), thread_([this] { run(); }) {}

BackgroundWriter::~BackgroundWriter() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void BackgroundWriter::write(std::filesystem::path path, std::string content) {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] {
    return failure_ || queued_bytes_ == 0 || queued_bytes_ + content.size() <= max_bytes_;
  });
  rethrow_failure();
  queued_bytes_ += content.size();
  queue_.emplace_back(std::move(path), std::move(content));
  lock.unlock();
  changed_.notify_all();
}

void BackgroundWriter::finish() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return failure_ || (queue_.empty() && !busy_); });
  rethrow_failure();
}

void BackgroundWriter::rethrow_failure() {
  if (!failure_) return;
  std::exception_ptr failure = failure_;
  queue_.clear();
  queued_bytes_ = 0;
  std::rethrow_exception(failure);
}

void BackgroundWriter::run() {
  std::unique_lock lock(mutex_);
  while (true) {
    changed_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    auto [path, content] = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    lock.unlock();
    std::exception_ptr failure;
    try {
      write_file_atomic(path, content);
    } catch (...) {
      failure = std::current_exception();
    }
    lock.lock();
    busy_ = false;
    queued_bytes_ -= content.size();
    if (failure && !failure_) {  // nothing after a failed file is written
      failure_ = failure;
      queue_.clear();
      queued_bytes_ = 0;
    }
    changed_.notify_all();
  }
}

}  // namespace telar
