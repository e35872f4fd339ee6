// Fast mode against the oracle (--exact-cycle-loop) on random small shapes, tiles and
// configurations: cycles, traffic, every activity counter and the outputs must be identical.
// Also checks the closed-form traffic against the cycle loop's own counts.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "core/rng.hpp"
#include "sim/accelerator.hpp"
#include "sim/engine.hpp"
#include "sim/mapper.hpp"

namespace telar::sim {
namespace {

struct Case {
  HardwareConfig hw;
  DenseOp op;
  Tile tile;
};

int pick(Rng& rng, std::initializer_list<int> values) {
  const std::vector<int> v(values);
  return v[rng.below(v.size())];
}

// A random legal (configuration, operation, tile); tiles come from the mapper's candidate set
// plus random partial tiles.
Case random_maeri_case(Rng& rng) {
  for (;;) {
    Case c;
    c.hw.ms_size = pick(rng, {8, 16, 32, 64});
    c.hw.dn_bw = 1 << rng.below(1 + static_cast<std::uint64_t>(__builtin_ctz(c.hw.ms_size)));
    c.hw.rn_bw = pick(rng, {1, 2, 4, 8, 16});
    c.hw.rn = rng.below(3) == 0 ? ReduceNetwork::Fen : ReduceNetwork::Art;
    c.hw.accumulation_buffer = rng.below(2) == 1;
    if (rng.below(2)) {
      const int G = pick(rng, {1, 1, 2});
      c.op = make_conv(1 + static_cast<int>(rng.below(3)), 1 + static_cast<int>(rng.below(3)),
                       G * (1 + static_cast<int>(rng.below(4))),
                       G * (1 + static_cast<int>(rng.below(6))), G, 1, 0, 0,
                       1 + static_cast<int>(rng.below(2)));
      c.op.X = c.op.R + static_cast<int>(rng.below(6));
      c.op.Y = c.op.S + static_cast<int>(rng.below(6));
    } else {
      c.op = make_gemm(rng.below(2) ? OpKind::Fc : OpKind::DenseGemm,
                       1 + static_cast<int>(rng.below(12)), 1 + static_cast<int>(rng.below(12)),
                       1 + static_cast<int>(rng.below(40)));
    }
    const std::vector<Tile> candidates = candidate_tiles(c.hw, c.op);
    if (candidates.empty()) continue;
    c.tile = candidates[rng.below(candidates.size())];
    // Sometimes a partial tile (a size that does not divide its dimension), or more output
    // pixels per tile than the mapper would take.
    if (rng.below(4) == 0) {
      Tile t = c.tile;
      t.T_X = std::min(c.op.out_x(), t.T_X + 1);
      if (tile_violation(c.hw, c.op, t).empty()) c.tile = t;
    }
    if (rng.below(3) == 0) {
      Tile t = c.tile;
      if (c.op.kind == OpKind::Conv)
        t.T_K = std::min(c.op.k_per_group(), t.T_K + 1);
      else
        t.T_S = std::min(c.op.S, t.T_S + static_cast<int>(rng.below(3)));
      if (tile_violation(c.hw, c.op, t).empty()) c.tile = t;
    }
    return c;
  }
}

Case random_mesh_case(Rng& rng) {
  Case c;
  c.hw.mn = MultiplierNetwork::OsMesh;
  c.hw.rn = ReduceNetwork::Temporal;
  c.hw.controller = Controller::TpuOsDense;
  c.hw.accumulation_buffer = true;
  // The read ports split the mesh edge (rows + columns) into power-of-two groups, so a square
  // mesh: a 2^a + 2^b edge with a != b has an odd factor.
  c.hw.ms_rows = c.hw.ms_cols = pick(rng, {2, 4, 8});
  c.hw.dn_bw = 1 << rng.below(static_cast<std::uint64_t>(__builtin_ctz(2 * c.hw.ms_rows)) + 1);
  c.hw.rn_bw = pick(rng, {1, 2, 4, 16, 64});
  c.op = make_gemm(OpKind::DenseGemm, 1 + static_cast<int>(rng.below(20)),
                   1 + static_cast<int>(rng.below(20)), 1 + static_cast<int>(rng.below(12)));
  c.tile = make_gemm_tile(1 + static_cast<int>(rng.below(c.hw.ms_rows)),
                          1 + static_cast<int>(rng.below(c.hw.ms_cols)), 1);
  return c;
}

void compare_modes(const Case& c, const std::string& label) {
  validate(c.hw);
  ASSERT_EQ(tile_violation(c.hw, c.op, c.tile), "") << label;
  const Accelerator acc(c.hw);
  RunOptions exact_options, fast_options;
  exact_options.exact_cycle_loop = true;
  exact_options.seed = fast_options.seed = 7;
  const OpResult exact = acc.run(c.op, c.tile, exact_options);
  const OpResult fast = acc.run(c.op, c.tile, fast_options);
  // Tiles on which STONNE's controller computes a wrong result (and so does its model here)
  // are compared on timing and counts only; everything else must compute the right output.
  if (wrong_result_reason(c.hw, c.op, c.tile).empty()) {
    EXPECT_TRUE(exact.output_correct) << label;
    EXPECT_TRUE(fast.output_correct) << label;
    EXPECT_EQ(exact.output, fast.output) << label;
  }
  EXPECT_EQ(fast.stats.cycles, exact.stats.cycles) << label;
  EXPECT_EQ(fast.stats.gb, exact.stats.gb) << label;
  EXPECT_EQ(fast.stats.multiplications, exact.stats.multiplications) << label;
  EXPECT_EQ(format_counters(fast.stats.counters), format_counters(exact.stats.counters)) << label;
  // The closed form agrees with what the cycle loop counted packet by packet.
  const GlobalBufferTraffic closed = c.hw.mn == MultiplierNetwork::OsMesh
                                         ? mesh_traffic(c.hw, c.op, c.tile)
                                         : maeri_traffic(c.hw, c.op, c.tile);
  EXPECT_EQ(closed, exact.stats.gb) << label;
}

std::string label_of(const Case& c, int i) {
  return fmt::format(
      "case {}: ms={} {}x{} dn={} rn={} {} acc={} op {} R={} S={} C={} K={} G={} "
      "X={} Y={} s={} tile {}",
      i, c.hw.ms_size, c.hw.ms_rows, c.hw.ms_cols, c.hw.dn_bw, c.hw.rn_bw, name(c.hw.rn),
      c.hw.accumulation_buffer, name(c.op.kind), c.op.R, c.op.S, c.op.C, c.op.K, c.op.G, c.op.X,
      c.op.Y, c.op.stride, describe(c.tile, OpKind::Conv));
}

// TELAR_SIM_SWEEP=N runs N random cases per engine (and a seed from TELAR_SIM_SWEEP_SEED), for
// soak runs; the default keeps the suite quick.
int sweep_cases(int fallback) {
  const char* env = std::getenv("TELAR_SIM_SWEEP");
  return env ? std::atoi(env) : fallback;
}
std::uint64_t sweep_seed(std::uint64_t fallback) {
  const char* env = std::getenv("TELAR_SIM_SWEEP_SEED");
  return env ? std::strtoull(env, nullptr, 10) : fallback;
}

TEST(FastForward, MatchesTheCycleLoopOnRandomMaeriCases) {
  Rng rng(sweep_seed(20250601));
  int skipped = 0;
  const int n = sweep_cases(80);
  for (int i = 0; i < n; ++i) {
    const Case c = random_maeri_case(rng);
    compare_modes(c, label_of(c, i));
    RunOptions o;
    o.compute_values = false;
    skipped += Accelerator(c.hw).run(c.op, c.tile, o).skips > 0;
  }
  EXPECT_GT(skipped, n / 4) << "the sweep should exercise the skipping path";
}

TEST(FastForward, MatchesTheCycleLoopOnRandomMeshCases) {
  Rng rng(sweep_seed(77));
  for (int i = 0, n = sweep_cases(40); i < n; ++i) {
    const Case c = random_mesh_case(rng);
    compare_modes(c, label_of(c, i));
  }
}

TEST(FastForward, MatchesTheCycleLoopWithPartialOutputTiles) {
  // X'=5 with T_X'=2: the iteration gate opens before the previous iteration has finished, so
  // iterations overlap; the skip logic must still reproduce the cycle loop exactly.
  for (int dn : {4, 16}) {
    Case c;
    c.hw.ms_size = 32;
    c.hw.dn_bw = dn;
    c.hw.rn_bw = 8;
    c.hw.accumulation_buffer = true;
    c.op = make_conv(2, 2, 2, 16, 1, 1, 6, 4, 1);
    c.tile = Tile{2, 2, 2, 1, 1, 1, 2, 1};
    compare_modes(c, fmt::format("partial X' tile, dn_bw {}", dn));
  }
}

TEST(FastForward, MatchesTheCycleLoopWithManyIterations) {
  // Long output-channel loops, where whole iterations repeat and are skipped.
  Rng rng(3);
  for (int i = 0; i < 12; ++i) {
    Case c;
    c.hw.ms_size = 64;
    c.hw.dn_bw = pick(rng, {8, 16, 64});
    c.hw.rn_bw = pick(rng, {4, 16});
    c.hw.rn = i % 3 == 0 ? ReduceNetwork::Fen : ReduceNetwork::Art;
    c.hw.accumulation_buffer = i % 2 == 0;
    c.op = make_conv(3, 3, 4, 12, 1, 1, 7, 6, 1);
    c.tile = Tile{3, 3, pick(rng, {1, 2, 4}), pick(rng, {1, 2}), 1, 1, 1, 1};
    if (!tile_violation(c.hw, c.op, c.tile).empty()) c.tile.T_C = 1;
    compare_modes(c, label_of(c, i));
  }
}

TEST(FastForward, MatchesTheCycleLoopWhenTheControllerRunsAhead) {
  // Pointwise layers with folding: the controller emits a fold step per cycle but the fabric
  // takes two, so the controller runs further ahead every row and its loop points never repeat
  // (MobileNet's pointwise layers). The backlog points skip them; before those, every cycle of
  // these runs was stepped.
  struct Shape {
    int ms, dn, rn;
    bool acc;
    ReduceNetwork rn_type;
    int C, K, X, T_C, T_K;
  };
  for (const Shape& s : {Shape{64, 32, 32, true, ReduceNetwork::Art, 32, 16, 12, 2, 16},
                         Shape{64, 32, 32, true, ReduceNetwork::Art, 32, 32, 12, 2, 16},
                         Shape{32, 16, 8, true, ReduceNetwork::Fen, 16, 8, 12, 2, 8}}) {
    Case c;
    c.hw.ms_size = s.ms;
    c.hw.dn_bw = s.dn;
    c.hw.rn_bw = s.rn;
    c.hw.accumulation_buffer = s.acc;
    c.hw.rn = s.rn_type;
    c.op = make_conv(1, 1, s.C, s.K, 1, 1, s.X, s.X, 1);
    c.tile = Tile{1, 1, s.T_C, s.T_K, 1, 1, 1, 1};
    const std::string label = label_of(c, 0);
    compare_modes(c, label);
    RunOptions o;
    o.compute_values = false;
    const OpResult fast = Accelerator(c.hw).run(c.op, c.tile, o);
    EXPECT_LT(fast.simulated_cycles * 3, fast.stats.cycles) << label;
  }
}

}  // namespace
}  // namespace telar::sim
