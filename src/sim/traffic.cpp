// Global Buffer traffic in closed form. The controllers decide what to read and write from the
// tile loops alone, so the counts follow from the loop bounds and STONNE's rules for partial
// tiles (a padding lane is still sent, but its read is not counted):
//  * weights: one read per real weight per output-channel iteration;
//  * inputs: per fold step, the window rows/columns inside the padded tile window and real
//    channels; with the multipliers' forwarding links on, only the newest column after the
//    first window of a row;
//  * partial sums (no accumulation buffer, no FEN): every fold but the last is written back and
//    read again; every output pixel is written once per fold.
#include <algorithm>

#include "sim/engine.hpp"

namespace telar::sim {

GlobalBufferTraffic maeri_traffic(const HardwareConfig& hw, const DenseOp& op, const Tile& t) {
  const TileGeometry g = tile_geometry(hw, op, t);
  const long long R = op.R, S = op.S, Cg = op.c_per_group(), Kg = op.k_per_group();
  GlobalBufferTraffic traffic;
  traffic.weight_reads =
      static_cast<std::uint64_t>(1LL * g.iter_N * g.iter_G * t.T_G * Kg * Cg * R * S);
  const int x_inputs = t.T_R + (t.T_X - 1) * op.stride;
  const int y_inputs = t.T_S + (t.T_Y - 1) * op.stride;
  const int out_x_inputs = t.T_X + op.R - 1;
  const int out_y_inputs = t.T_Y + op.S - 1;
  long long rows = 0;  // Σ over R folds of the window rows counted
  for (int r = 0; r < g.iter_R; ++r) rows += std::clamp(out_x_inputs - r * t.T_R, 0, x_inputs);
  auto columns = [&](int y_init) {
    long long cols = 0;
    for (int s = 0; s < g.iter_S; ++s)
      cols += std::clamp(out_y_inputs - s * t.T_S - y_init, 0, y_inputs - y_init);
    return cols;
  };
  const bool links = t.T_Y == 1 && t.T_S > 1 && op.stride == 1 && op.S % t.T_S == 0;
  const long long first_window = columns(0);
  const long long later_windows = links ? columns(y_inputs - 1) : first_window;
  const long long per_row =
      1LL * t.T_N * t.T_G * Cg * rows * (first_window + (g.iter_Y - 1) * later_windows);
  traffic.input_reads =
      static_cast<std::uint64_t>(1LL * g.iter_N * g.iter_G * g.iter_K * g.iter_X * per_row);
  const long long folds = g.folding ? g.n_folding : 1;
  const long long outputs =
      1LL * g.iter_N * g.iter_G * g.iter_K * g.iter_X * g.iter_Y * folds * g.num_vns;
  traffic.psum_reads = static_cast<std::uint64_t>(outputs - outputs / folds);
  traffic.psum_writes =
      static_cast<std::uint64_t>(folds * op.N * op.G * Kg * op.out_x() * op.out_y());
  return traffic;
}

GlobalBufferTraffic mesh_traffic(const HardwareConfig& /*hw*/, const DenseOp& op, const Tile& t) {
  // TPU_OS_DENSE: per tile of T_M rows × T_N columns, K steps each read one value per row and
  // one per column.
  const long long M = op.X, N = op.K, K = op.S;
  const long long T_M = t.T_X, T_N = t.T_K;
  GlobalBufferTraffic traffic;
  for (long long m = 0; m < M; m += T_M) {
    const long long rows = std::min(T_M, M - m);
    for (long long n = 0; n < N; n += T_N) {
      const long long cols = std::min(T_N, N - n);
      traffic.weight_reads += static_cast<std::uint64_t>(K * cols);
      traffic.input_reads += static_cast<std::uint64_t>(K * rows);
    }
  }
  traffic.psum_writes = static_cast<std::uint64_t>(M * N);
  return traffic;
}

}  // namespace telar::sim
