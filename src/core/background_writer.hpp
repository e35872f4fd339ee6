#pragma once
// Files written by a thread of their own while the caller goes on: for runs that emit thousands
// of small files (telar simulate writes STONNE's two files per simulator call), so that the
// file system's time overlaps the computation. Files are written in order, each atomically
// (core/files.hpp). At most `max_queued_bytes` wait at a time; a caller that gets ahead waits.
// A write that fails is reported by the next call (write or finish) as the error it was.
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

namespace telar {

class BackgroundWriter {
 public:
  explicit BackgroundWriter(std::size_t max_queued_bytes = std::size_t{64} << 20);
  // Waits for the file being written, drops the rest (call finish() to write them all).
  ~BackgroundWriter();
  BackgroundWriter(const BackgroundWriter&) = delete;
  BackgroundWriter& operator=(const BackgroundWriter&) = delete;

  void write(std::filesystem::path path, std::string content);
  // Waits until every queued file is written; rethrows the first failure.
  void finish();

 private:
  void run();
  void rethrow_failure();  // with the lock held

  std::size_t max_bytes_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::pair<std::filesystem::path, std::string>> queue_;
  std::size_t queued_bytes_ = 0;
  bool busy_ = false, stop_ = false;
  std::exception_ptr failure_;
  std::thread thread_;
};

}  // namespace telar
