#pragma once
// The life of a run as its run.json tells it: "running" from the start, then "finished" with
// the result, "stopped: WHY", or "failed: MESSAGE" when the work threw. Commands hold one
// RunRecord per run instead of writing that sequence by hand.
#include <exception>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "report/run_dir.hpp"

namespace telar::report {

class RunRecord {
 public:
  // Writes run.json with status "running".
  RunRecord(const RunDirectory& dir, std::string command, nlohmann::json config);
  // Left by an exception before the run was finished or stopped: run.json says "failed" (the
  // message is there when the work ran inside guard()).
  ~RunRecord();
  RunRecord(const RunRecord&) = delete;
  RunRecord& operator=(const RunRecord&) = delete;

  // Runs `work`; if it throws before the run was finished or stopped, run.json says
  // "failed: <message>" and the exception goes on.
  template <typename Work>
  decltype(auto) guard(Work&& work) {
    try {
      return std::forward<Work>(work)();
    } catch (const std::exception& e) {
      if (!closed_) fail(e.what());
      throw;
    }
  }

  void finish(const nlohmann::json& result);  // "finished", with the result
  void stop(const std::string& why);          // "stopped: <why>"
  // "interrupted" (by a signal; the run can be resumed), with `details` (where it stopped).
  void interrupt(const nlohmann::json& details);
  void fail(const std::string& why);          // "failed: <why>"

  const RunDirectory& dir() const { return dir_; }
  const nlohmann::json& config() const { return config_; }

 private:
  void write(const nlohmann::json& extra);
  const RunDirectory& dir_;
  std::string command_;
  nlohmann::json config_;
  bool closed_ = false;
  int exceptions_at_start_;
};

}  // namespace telar::report
