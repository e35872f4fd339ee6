#include "dlrm/thesis.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "core/error.hpp"

namespace telar::dlrm {

namespace {

std::string dashes(std::int64_t value, std::int64_t count) {
  std::string s;
  for (std::int64_t i = 0; i < count; ++i) s += (i ? "-" : "") + std::to_string(value);
  return s;
}

// "DLRM(1)" -> "dlrm1", "Group 1" -> "group1".
std::string normalized(std::string_view s) {
  std::string out;
  for (char c : s)
    if (c != '(' && c != ')' && c != ' ' && c != '_')
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::vector<ThesisWorkload> make_workloads() {
  const std::string bot = "128-64-64-32", top = "128-64-1";
  auto run = [&](std::string group, std::int64_t tables, std::int64_t rows, std::int64_t samples,
                 std::int64_t lookups, std::string share) {
    ThesisWorkload w;
    w.name = fmt::format("{}-{}M-{}-{}", tables, rows / 1000000, samples, lookups);
    w.group = std::move(group);
    w.tables = tables;
    w.rows = rows;
    w.data_size = samples;
    w.lookups = lookups;
    w.bottom = bot;
    w.top = top;
    w.thesis_eb_share = std::move(share);
    return w;
  };
  std::vector<ThesisWorkload> v;
  // Validation (Table 14). DLRM(6)'s top MLP: Table 14's "256-256-128 128-64-64-1" read as one
  // list (the annex's command drops the final 1, which the sigmoid output needs).
  for (const auto& [name, samples, b, t] :
       {std::tuple{"DLRM(1)", 20, bot, top}, std::tuple{"DLRM(3)", 80, bot, top},
        std::tuple{"DLRM(6)", 2, std::string("512-256-32"),
                   std::string("256-256-128-128-64-64-1")}}) {
    ThesisWorkload w = run("validation", 5, 1000000, samples, 100, "35-40 %");
    w.name = name;
    w.bottom = b;
    w.top = t;
    if (w.name == "DLRM(6)") w.thesis_eb_share = "";  // "practically insignificant" traffic
    v.push_back(w);
  }
  // Table 15. Group 1's third run has 50 tables (the text and the annex; Table 15 says 100).
  for (std::int64_t t : {10, 25, 50}) v.push_back(run("group 1", t, 1000000, 20, 100, "40-45 %"));
  for (std::int64_t t : {10, 25, 50}) v.push_back(run("group 2", t, 1000000, 80, 100, ""));
  v.push_back(run("group 3", 50, 10000000, 20, 100, "46 %"));
  v.push_back(run("group 3", 50, 10000000, 80, 100, "47 %"));
  v.push_back(run("group 3", 50, 10000000, 20, 1000, "89 %"));
  v.push_back(run("group 3", 50, 10000000, 80, 1000, "87 %"));
  return v;
}

}  // namespace

DlrmConfig ThesisWorkload::config() const {
  return make_config(kEmbeddingDim, dashes(rows, tables), bottom, top, "dot", false);
}

std::string ThesisWorkload::flags() const {
  const std::string sizes = tables <= 3 ? dashes(rows, tables) : fmt::format("{}x{}", tables, rows);
  return fmt::format(
      "--arch-embedding-size={} --arch-sparse-feature-size={} --arch-mlp-bot={} "
      "--arch-mlp-top={} --data-size={} --mini-batch-size={} --num-indices-per-lookup={}",
      sizes, kEmbeddingDim, bottom, top, data_size, kMiniBatch, lookups);
}

const std::vector<ThesisWorkload>& thesis_workloads() {
  static const std::vector<ThesisWorkload> all = make_workloads();
  return all;
}

std::vector<ThesisWorkload> select_thesis_workloads(std::string_view list) {
  const auto& all = thesis_workloads();
  if (list.empty() || list == "all") return all;
  std::vector<bool> chosen(all.size(), false);
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    const std::string want = normalized(list.substr(start, comma - start));
    start = comma + 1;
    if (want.empty()) continue;
    bool found = false;
    for (std::size_t i = 0; i < all.size(); ++i)
      if (normalized(all[i].name) == want || normalized(all[i].group) == want) {
        chosen[i] = true;
        found = true;
      }
    if (!found) {
      std::string names;
      for (const auto& w : all) names += (names.empty() ? "" : ", ") + w.name;
      fail(
          "--workloads: '{}' is not a thesis workload; use all, validation, group1, group2, "
          "group3 or names among {}",
          want, names);
    }
  }
  std::vector<ThesisWorkload> out;
  for (std::size_t i = 0; i < all.size(); ++i)
    if (chosen[i]) out.push_back(all[i]);
  require(!out.empty(), "--workloads: no workload named");
  return out;
}

backend::sim::SimTarget thesis_hybrid_target() {
  telar::sim::HardwareConfig maeri;
  maeri.name = "maeri_256mses_128_bw";
  maeri.ms_size = 256;
  maeri.dn_bw = maeri.rn_bw = 128;
  maeri.accumulation_buffer = true;
  maeri.controller = telar::sim::Controller::MaeriDense;
  telar::sim::HardwareConfig magma;
  magma.name = "magma_128mses_128_bw";
  magma.ms_size = 128;
  magma.dn_bw = magma.rn_bw = 128;
  magma.accumulation_buffer = true;
  magma.controller = telar::sim::Controller::MagmaSparseDense;
  telar::sim::validate(maeri);
  telar::sim::validate(magma);
  backend::sim::SimTarget t;
  t.name = kThesisTargetName;
  t.dense = backend::sim::AcceleratorChoice{maeri, telar::sim::MapObjective::Performance, {}};
  t.sparse = backend::sim::AcceleratorChoice{magma, telar::sim::MapObjective::Performance, {}};
  return t;
}

}  // namespace telar::dlrm
