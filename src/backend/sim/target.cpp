#include "backend/sim/target.hpp"

#include <toml++/toml.h>

#include <set>

#include "core/error.hpp"
#include "core/files.hpp"

namespace telar::backend::sim {

namespace fs = std::filesystem;
using telar::sim::Controller;

SimTarget target_from_config(const telar::sim::HardwareConfig& hw, std::string name) {
  SimTarget t;
  t.name = std::move(name);
  AcceleratorChoice c;
  c.hw = hw;
  switch (hw.controller) {
    case Controller::MaeriDense:
    case Controller::TpuOsDense:
      t.dense = c;
      break;
    case Controller::SigmaSparseGemm:
      t.dense = c;
      t.pruned = c;
      break;
    case Controller::MagmaSparseDense:
      t.sparse = c;
      break;
  }
  return t;
}

namespace {

void require_controller(const AcceleratorChoice& c, const std::string& where,
                        std::initializer_list<Controller> allowed, const char* what) {
  for (Controller a : allowed)
    if (c.hw.controller == a) return;
  std::string names;
  for (Controller a : allowed) names += (names.empty() ? "" : " or ") + std::string(name(a));
  fail("{}: the configuration has controller {}, which cannot run {}; use {}", where,
       name(c.hw.controller), what, names);
}

}  // namespace

SimTarget load_target(const fs::path& path) {
  const std::string origin = path.string();
  if (path.extension() != ".toml") {
    telar::sim::HardwareConfig hw = telar::sim::load_config(path);
    telar::sim::validate(hw);
    return target_from_config(hw, path.stem().string());
  }
  std::error_code ec;
  require(fs::exists(path, ec),
          "no simulated target '{}'; give a .cfg or .toml file that exists (e.g. "
          "configs/tpu_16_16_pes.cfg)",
          origin);
  const std::string text = read_file(path);
  toml::table root;
  try {
    root = toml::parse(text, origin);
  } catch (const toml::parse_error& e) {
    fail("{}:{}: {}", origin, e.source().begin.line, e.description());
  }
  SimTarget t;
  t.name = path.stem().string();
  const fs::path base = path.parent_path();
  const std::set<std::string> classes = {"dense", "sparse", "pruned"};
  for (const auto& [key, node] : root) {
    const std::string section(key.str());
    if (section == "tiles") {
      const toml::table* tiles = node.as_table();
      require(tiles, "{}: [tiles] must be a table of \"layer\" = \"tile file\"", origin);
      for (const auto& [layer, file] : *tiles) {
        const auto* s = file.as_string();
        require(s, "{}: [tiles] \"{}\" must name a tile file", origin, layer.str());
        const fs::path p = base / fs::path(s->get());
        require(is_file(p), "{}: [tiles] \"{}\": tile file '{}' does not exist", origin,
                layer.str(), p.string());
        t.tile_files[std::string(layer.str())] = p;
      }
      continue;
    }
    require(classes.count(section),
            "{}: unknown section [{}]; use [dense], [sparse], [pruned] and [tiles]", origin,
            section);
    const toml::table* tab = node.as_table();
    require(tab, "{}: [{}] must be a table", origin, section);
    AcceleratorChoice c;
    std::optional<std::string> config;
    std::optional<std::int64_t> t_n, t_k;
    for (const auto& [k, v] : *tab) {
      const std::string name(k.str());
      const std::string where = fmt::format("{}: [{}] {}", origin, section, name);
      if (name == "config") {
        require(v.is_string(), "{} must be a file name in quotes", where);
        config = v.as_string()->get();
      } else if (name == "tiles") {
        require(v.is_string(), "{} must be \"auto\" or \"auto:performance|energy|edp\"", where);
        const std::string s = v.as_string()->get();
        require(s == "auto" || s.rfind("auto:", 0) == 0,
                "{}: '{}' is not a tile policy; use \"auto\" or \"auto:energy\" (tile files per "
                "layer go in [tiles])",
                where, s);
        c.objective = telar::sim::parse_objective(s == "auto" ? "performance" : s.substr(5), where);
      } else if ((name == "T_N" || name == "T_K") && section == "sparse") {
        require(v.is_integer() && v.as_integer()->get() > 0, "{} must be a positive integer",
                where);
        (name == "T_N" ? t_n : t_k) = v.as_integer()->get();
      } else {
        fail("{}: unknown key '{}'; [{}] takes config, tiles{}", origin, name, section,
             section == "sparse" ? ", T_N and T_K" : "");
      }
    }
    require(config.has_value(), "{}: [{}] needs config = \"FILE.cfg\"", origin, section);
    const fs::path cfg = base / fs::path(*config);
    require(is_file(cfg), "{}: [{}] config '{}' does not exist", origin, section, cfg.string());
    c.hw = telar::sim::load_config(cfg);
    telar::sim::validate(c.hw);
    const std::string where = fmt::format("{}: [{}] {}", origin, section, cfg.filename().string());
    require(t_n.has_value() == t_k.has_value(), "{}: give both T_N and T_K, or neither", where);
    if (t_n)
      c.sparse_tile = telar::sim::SparseDenseTile{static_cast<int>(*t_n), static_cast<int>(*t_k)};
    if (section == "dense") {
      require_controller(
          c, where, {Controller::MaeriDense, Controller::TpuOsDense, Controller::SigmaSparseGemm},
          "dense layers");
      t.dense = c;
    } else if (section == "sparse") {
      require_controller(c, where, {Controller::MagmaSparseDense},
                         "EmbeddingBags (CSR sparse x dense)");
      t.sparse = c;
    } else {
      require_controller(c, where, {Controller::SigmaSparseGemm},
                         "pruned layers (bitmap sparse GEMM)");
      t.pruned = c;
    }
  }
  require(t.dense || t.sparse || t.pruned,
          "{}: names no accelerator; give at least one of [dense], [sparse], [pruned]", origin);
  return t;
}

}  // namespace telar::backend::sim
