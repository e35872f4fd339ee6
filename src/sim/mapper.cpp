#include "sim/mapper.hpp"

#include <algorithm>
#include <set>

#include "core/enum_names.hpp"
#include "core/error.hpp"
#include "core/parse.hpp"
#include "sim/energy.hpp"

namespace telar::sim {

namespace {

// Tile sizes considered for a dimension: its divisors and the powers of two below it.
std::vector<int> sizes_for(int dim, int cap) {
  std::set<int> s;
  for (int d = 1; d <= dim && d <= cap; ++d)
    if (dim % d == 0) s.insert(d);
  for (int p = 1; p <= dim && p <= cap; p *= 2) s.insert(p);
  return {s.begin(), s.end()};
}

std::vector<int> divisors_for(int dim, int cap) {
  std::vector<int> d;
  for (int v = 1; v <= dim && v <= cap; ++v)
    if (dim % v == 0) d.push_back(v);
  return d;
}

long long ceil_div(long long a, long long b) {
  return (a + b - 1) / b;
}

// An estimate of the cycles of a tile, used only to rank candidates before simulating the
// most promising: read-port, write-port and multiplier throughput; a fill-and-drain per
// output-channel iteration (the controller waits for it); and, when partial sums travel back
// through the Global Buffer, the round trip each fold of an output waits for.
double cycle_bound(const HardwareConfig& hw, const DenseOp& op, const Tile& t) {
  if (hw.mn == MultiplierNetwork::OsMesh) {
    const double tiles = static_cast<double>(ceil_div(op.X, t.T_X) * ceil_div(op.K, t.T_K));
    return tiles * (op.S + t.T_X + t.T_K + 4);
  }
  const TileGeometry g = tile_geometry(hw, op, t);
  int levels = 0;
  while ((1 << levels) < hw.ms_size) ++levels;
  const double latency = levels + 6.0;  // multiplier -> tree -> bus -> memory -> port
  const double iterations = static_cast<double>(g.iter_N) * g.iter_G * g.iter_K;
  const double steps = iterations * g.iter_X * g.iter_Y * g.n_folding;
  const double per_step_packets = static_cast<double>(t.T_N * t.T_G * t.T_C) *
                                  (t.T_R + (t.T_X - 1) * op.stride) *
                                  (t.T_S + (t.T_Y - 1) * op.stride);
  const double weight_packets =
      static_cast<double>(g.n_folding) * t.T_R * t.T_S * t.T_C * t.T_K * t.T_G;
  const double read_bound = (steps * per_step_packets + iterations * weight_packets) / hw.dn_bw;
  const double outputs_per_vn = iterations * g.iter_X * g.iter_Y * (g.folding ? g.n_folding : 1);
  const double write_bound = outputs_per_vn * g.num_vns / hw.rn_bw;
  const double fold_chain = g.folding ? outputs_per_vn * latency : 0.0;
  return std::max({read_bound, write_bound, steps, fold_chain}) + iterations * latency;
}

}  // namespace

constexpr EnumNames<MapObjective, MapObjective::Edp> kObjectives{{"performance", "energy", "edp"}};

MapObjective parse_objective(std::string_view text, std::string_view what) {
  const std::string s = to_lower(text);
  if (s.empty() || s == "perf" || s == "cycles") return MapObjective::Performance;
  if (auto o = kObjectives.find(s)) return *o;
  fail("{}: unknown mapping objective '{}'; use {}", what, text, kObjectives.choices());
}

std::string_view name(MapObjective o) {
  return kObjectives(o);
}

std::vector<Tile> candidate_tiles(const HardwareConfig& hw, const DenseOp& op) {
  std::vector<Tile> out;
  if (hw.mn == MultiplierNetwork::OsMesh) {
    for (int m : sizes_for(op.X, hw.ms_rows))
      for (int n : sizes_for(op.K, hw.ms_cols)) {
        Tile t = make_gemm_tile(m, n, 1);
        if (tile_violation(hw, op, t).empty()) out.push_back(t);
      }
    return out;
  }
  const int budget = hw.ms_size;
  for (int tr : sizes_for(op.R, budget))
    for (int ts : sizes_for(op.S, budget / tr))
      for (int tc : sizes_for(op.c_per_group(), budget / (tr * ts)))
        for (int tk : sizes_for(op.k_per_group(), budget / (tr * ts * tc)))
          for (int tg : sizes_for(op.G, budget / (tr * ts * tc * tk))) {
            if (op.G % tg) continue;
            for (int tn : sizes_for(op.N, budget / (tr * ts * tc * tk * tg))) {
              if (op.N % tn) continue;
              const int used = tr * ts * tc * tk * tg * tn;
              // Output rows and columns only in exact divisions: with a partial output tile the
              // controller starts the next iteration before the last one has finished.
              for (int tx : divisors_for(op.out_x(), budget / used))
                for (int ty : divisors_for(op.out_y(), budget / (used * tx))) {
                  Tile t{tr, ts, tc, tk, tg, tn, tx, ty};
                  if (tile_violation(hw, op, t).empty() && wrong_result_reason(hw, op, t).empty())
                    out.push_back(t);
                }
            }
          }
  return out;
}

double objective_score(MapObjective objective, const Stats& stats, double energy) {
  switch (objective) {
    case MapObjective::Performance:
      return static_cast<double>(stats.cycles);
    case MapObjective::Energy:
      return energy;
    case MapObjective::Edp:
      return energy * static_cast<double>(stats.cycles);
  }
  return 0.0;
}

MapChoice map_tile(const Accelerator& accelerator, const DenseOp& op, MapObjective objective,
                   const MapBudget& budget) {
  const HardwareConfig& hw = accelerator.config();
  std::vector<Tile> candidates = candidate_tiles(hw, op);
  if (!budget.batch_tiles && op.kind == OpKind::Conv)
    std::erase_if(candidates, [](const Tile& t) { return t.T_N > 1; });
  require(!candidates.empty(),
          "no legal tile maps this {} onto {} (ms_size={}); use a larger "
          "configuration",
          name(op.kind), hw.name, hw.multipliers());
  // Rank by the throughput bound; ties prefer tiles that map more multipliers.
  std::vector<std::pair<double, Tile>> ranked;
  for (const Tile& t : candidates) {
    const double used = hw.mn == MultiplierNetwork::OsMesh
                            ? t.T_X * t.T_K
                            : tile_geometry(hw, op, t).multipliers_used();
    ranked.emplace_back(cycle_bound(hw, op, t) * (1.0 + 1e-6 / used), t);
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  // Simulate the best-ranked candidates, plus the best-ranked ones that need no folding (the
  // estimate is weakest on how folding trades against parallelism).
  std::vector<Tile> shortlist;
  const std::size_t first = static_cast<std::size_t>(std::max(1, budget.ranked));
  for (std::size_t i = 0; i < ranked.size() && shortlist.size() < first; ++i)
    shortlist.push_back(ranked[i].second);
  int unfolded = 0;
  for (std::size_t i = first; i < ranked.size() && unfolded < budget.unfolded; ++i)
    if (hw.mn == MultiplierNetwork::Linear &&
        tile_geometry(hw, op, ranked[i].second).n_folding == 1) {
      shortlist.push_back(ranked[i].second);
      ++unfolded;
    }
  MapChoice best;
  bool have = false;
  RunOptions timing_only;
  timing_only.compute_values = false;
  for (const Tile& t : shortlist) {
    OpResult r;
    try {
      r = accelerator.run(op, t, timing_only);
    } catch (const Error&) {
      continue;  // a mapping the fabric cannot reduce (two neurons meeting in one adder)
    }
    const Stats& s = r.stats;
    const double e = compute_energy(default_energy_table(), s.counters).total();
    const double score = objective_score(objective, s, e);
    ++best.evaluated;
    if (!have || score < best.score) {
      best.tile = t;
      best.stats = s;
      best.result = std::move(r);
      best.energy = e;
      best.score = score;
      have = true;
    }
  }
  require(have, "no candidate tile could be simulated for this {} on {}", name(op.kind), hw.name);
  return best;
}

Tile suggest_legal_tile(const HardwareConfig& hw, const DenseOp& op) {
  const std::vector<Tile> candidates = candidate_tiles(hw, op);
  require(!candidates.empty(), "no legal tile fits this configuration");
  const Tile* best = &candidates.front();
  double best_bound = cycle_bound(hw, op, *best);
  for (const Tile& t : candidates) {
    const double b = cycle_bound(hw, op, t);
    if (b < best_bound) {
      best_bound = b;
      best = &t;
    }
  }
  return *best;
}

SparseDenseChoice map_sparse_dense_tile(const Accelerator& accelerator, const SparseDenseOp& op,
                                        MapObjective objective) {
  const int ms = accelerator.config().ms_size;
  std::set<int> t_n;
  for (int p = 1; p <= op.N && p <= ms; p *= 2) t_n.insert(p);
  if (op.N <= ms) t_n.insert(op.N);
  // Without the dense values the timing-only run needs a copy of the pattern only.
  SparseDenseOp pattern;
  pattern.layer_name = op.layer_name;
  pattern.M = op.M, pattern.N = op.N, pattern.K = op.K;
  pattern.mk = op.mk;
  RunOptions options;
  options.compute_values = false;
  SparseDenseChoice best;
  bool have = false;
  for (int n : t_n) {
    std::set<int> t_k;
    for (int p = 1; p * n <= ms; p *= 2) t_k.insert(p);
    t_k.insert(ms / n);
    for (int k : t_k) {
      const SparseDenseTile tile{n, k};
      if (!tile_violation(ms, pattern, tile).empty()) continue;
      const OpResult r = accelerator.run(pattern, tile, options);
      const double energy = objective == MapObjective::Performance
                                ? 0.0
                                : compute_energy(default_energy_table(), r.stats.counters).total();
      const double score = objective_score(objective, r.stats, energy);
      ++best.evaluated;
      if (!have || score < best.score) {
        best.tile = tile;
        best.stats = r.stats;
        best.energy = energy;
        best.score = score;
        have = true;
      }
    }
  }
  require(have, "no SparseDense tile fits {} multipliers", ms);
  return best;
}

}  // namespace telar::sim
