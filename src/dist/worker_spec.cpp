#include "dist/worker_spec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/parse.hpp"
#include "core/threads.hpp"

namespace telar::dist {

namespace {

std::string spec_text(const backend::BackendSpec& s) {
  std::string t = s.kind;
  if (!s.target.empty()) t += ":" + s.target;
  for (const auto& [k, v] : s.options) t += ":" + k + "=" + v;
  return t;
}

WorkerSpec parse_one(const std::string& text) {
  require(!text.empty(), "--workers: an empty worker in the list; give devices such as "
                         "cpu:threads=1,cpu:threads=1");
  WorkerSpec w;
  w.text = text;
  w.device = backend::parse_backend_spec(text);
  auto& o = w.device.options;
  if (auto it = o.find("slowdown"); it != o.end()) {
    char* end = nullptr;
    w.handicap.slowdown = std::strtod(it->second.c_str(), &end);
    require(!it->second.empty() && end == it->second.c_str() + it->second.size() &&
                std::isfinite(w.handicap.slowdown) && w.handicap.slowdown >= 1.0,
            "--workers {}: slowdown={} must be a number of at least 1", text, it->second);
    o.erase(it);
  }
  if (auto it = o.find("fail_at_step"); it != o.end()) {
    w.handicap.fail_at_step = parse_int(it->second, "--workers fail_at_step");
    require(w.handicap.fail_at_step >= 0, "--workers {}: fail_at_step must be 0 or more", text);
    o.erase(it);
  }
  w.device.text = spec_text(w.device);
  return w;
}

}  // namespace

WorkerList parse_workers(const std::string& text) {
  WorkerList list;
  list.text = text;
  require(!trim(text).empty(), "--workers is empty; give devices such as cpu:threads=1,cpu:threads=1 "
                               "or mpi");
  std::string rest = text;
  if (text == "mpi" || text.rfind("mpi:", 0) == 0) {
    list.mpi = true;
    rest = text == "mpi" ? "cpu" : text.substr(4);
  }
  for (const std::string& item : split(rest, ',')) {
    require(item != "mpi" && item.rfind("mpi:", 0) != 0,
            "--workers {}: 'mpi' starts the list (mpi, mpi:DEVICE or mpi:DEVICE0,DEVICE1,...)", text);
    list.workers.push_back(parse_one(item));
  }
  return list;
}

WorkerSpec WorkerList::for_rank(int rank, int size) const {
  if (!mpi) return workers.at(static_cast<std::size_t>(rank));
  if (workers.size() == 1) return workers[0];
  require(static_cast<int>(workers.size()) == size,
          "--workers {}: {} devices listed for {} MPI ranks; list one per rank (or one for all)",
          text, workers.size(), size);
  return workers[static_cast<std::size_t>(rank)];
}

backend::BackendSpec with_default_threads(backend::BackendSpec device, int workers_on_machine) {
  if (device.kind != "cpu" || device.options.count("threads")) return device;
  const int threads = std::max(1, hardware_threads() / std::max(1, workers_on_machine));
  device.options["threads"] = std::to_string(threads);
  device.text = spec_text(device);
  return device;
}

}  // namespace telar::dist
