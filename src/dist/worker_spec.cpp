#include "dist/worker_spec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

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

void assign_threads(std::vector<WorkerSpec>& workers) {
  // A cpu worker's threads=N, read once; the others share what is left.
  std::vector<std::optional<int>> given(workers.size());
  int free_cores = hardware_threads(), sharing = 0;
  for (std::size_t i = 0; i < workers.size(); ++i) {
    const backend::BackendSpec& d = workers[i].device;
    if (d.kind == "cpu" && d.options.count("threads")) {
      given[i] = static_cast<int>(parse_int(d.options.at("threads"), "cpu:threads"));
      free_cores -= *given[i];
    } else {
      ++sharing;
    }
  }
  const int share = std::max(1, free_cores / std::max(1, sharing));
  for (std::size_t i = 0; i < workers.size(); ++i) {
    WorkerSpec& w = workers[i];
    w.host_threads = given[i].value_or(share);
    if (w.device.kind == "cpu" && !given[i]) {
      w.device.options["threads"] = std::to_string(share);
      w.device.text = spec_text(w.device);
    }
  }
}

}  // namespace telar::dist
