#include "report/run_record.hpp"

#include <exception>

namespace telar::report {

RunRecord::RunRecord(const RunDirectory& dir, std::string command, nlohmann::json config)
    : dir_(dir),
      command_(std::move(command)),
      config_(std::move(config)),
      exceptions_at_start_(std::uncaught_exceptions()) {
  write({{"status", "running"}});
}

RunRecord::~RunRecord() {
  if (closed_ || std::uncaught_exceptions() <= exceptions_at_start_) return;
  try {
    write({{"status", "failed"}});
  } catch (...) {  // a destructor must not throw; run.json keeps saying "running"
  }
}

void RunRecord::finish(const nlohmann::json& result) {
  write({{"status", "finished"}, {"result", result}});
}

void RunRecord::stop(const std::string& why) {
  write({{"status", "stopped: " + why}});
}

void RunRecord::interrupt(const nlohmann::json& details) {
  write({{"status", "interrupted"}, {"interrupted", details}});
}

void RunRecord::fail(const std::string& why) {
  write({{"status", "failed: " + why}});
}

void RunRecord::write(const nlohmann::json& extra) {
  dir_.write_run_json(command_, config_, extra);
  closed_ = extra.at("status") != "running";
}

}  // namespace telar::report
