// The TPU-like engine: an output-stationary ms_rows×ms_cols mesh (OS_MESH), one accumulator
// per processing element (TEMPORALRN) and the TPU_OS_DENSE controller.
//
// Per tile of T_M output rows × T_N output columns the controller reconfigures the mesh (one
// cycle), then streams K steps, one per cycle: a weight into the top of every used column and
// an activation into the left of every used row. Weights move down and activations right one
// element per cycle (the mesh runs from the bottom-right corner, so a value forwarded in a cycle
// is taken in the next); every product goes to its element's accumulator, which emits the sum
// after K products. The next tile starts after every output of this one has been written.
#include <algorithm>
#include <numeric>

#include "core/error.hpp"
#include "sim/dense_machine.hpp"
#include "sim/engine.hpp"
#include "sim/fabric/accumulation_buffer.hpp"
#include "sim/fabric/collection_bus.hpp"
#include "sim/fabric/controller_state.hpp"
#include "sim/fabric/counters.hpp"
#include "sim/fabric/distribution_tree.hpp"
#include "sim/fabric/link.hpp"
#include "sim/ring.hpp"
#include "sim/steady_state.hpp"

namespace telar::sim {

namespace {

using namespace fabric;

struct OneLink {
  bool pending = false;
  Psum item{0, 0};
};

using State = ControllerState;

class MeshMachine : DenseMachine {
 public:
  explicit MeshMachine(const DenseJob& job);
  EngineRun run();

 private:
  int rows_, cols_, M_, N_, K_, T_M_, T_N_, iter_M_, iter_N_;
  int ports_, per_port_;
  DistributionTree dn_;

  // Distribution.
  std::vector<Ring<PortPacket>> port_q_;  // dest: edge index, columns (weights) then rows
  std::vector<bool> latch_full_;
  std::vector<PortPacket> latch_;
  // Mesh: link into the top (weights) and the left (activations) of every element.
  std::vector<OneLink> top_in_, left_in_;
  std::vector<Ring<Psum>> top_fifo_, left_fifo_;
  std::vector<std::uint8_t> fwd_right_, fwd_bottom_;
  std::vector<int> vn_;
  // Accumulators and bus.
  AccumulationBuffer acc_;
  int acc_psums_ = 0;
  int lines_, bus_ports_;
  CollectionBus bus_;

  // Controller.
  State state_ = State::Configuring;
  int cur_M_ = 0, cur_N_ = 0, cur_K_ = 0;
  int rows_used_ = 0, cols_used_ = 0;
  bool iteration_completed_ = false;
  long long outputs_done_ = 0, outputs_in_tile_ = 0, tiles_done_ = 0;
  bool finished_ = false;
  Ring<Psum> write_fifo_;

  std::size_t c_v_wire_, c_h_wire_, c_mult_, c_cfg_;

  void step();
  void memory_cycle();
  void configure();
  void process_writes();
  void deliver(int port, const PortPacket& p);
  void mesh_cycle();
  void canonical_state(std::vector<std::uint64_t>& s) const;
  CountersFile counters_file(const GlobalBufferTraffic& gb) const;
};

MeshMachine::MeshMachine(const DenseJob& job)
    : DenseMachine(job, static_cast<std::size_t>(job.op.X) * job.op.K) {
  const auto& [hw, op, tile, options] = job;
  rows_ = hw.ms_rows, cols_ = hw.ms_cols;
  M_ = op.X, N_ = op.K, K_ = op.S;  // DenseGEMM mapped as STONNE's loadDenseGEMM does
  T_M_ = tile.T_X, T_N_ = tile.T_K;
  iter_M_ = (M_ + T_M_ - 1) / T_M_;
  iter_N_ = (N_ + T_N_ - 1) / T_N_;
  ports_ = hw.dn_bw;
  per_port_ = (rows_ + cols_) / ports_;
  lines_ = hw.rn_bw;
  const int pes = rows_ * cols_;
  bus_ports_ = std::max(hw.ms_size / lines_ + 1, (pes - 1) / lines_ + 1);

  port_q_.resize(ports_);
  latch_full_.assign(ports_, false);
  latch_.resize(ports_);
  top_in_.resize(pes), left_in_.resize(pes);
  top_fifo_.resize(pes), left_fifo_.resize(pes);
  fwd_right_.assign(pes, 0), fwd_bottom_.assign(pes, 0);
  vn_.assign(pes, 0);

  CounterLayout layout;
  dn_.build(ports_, rows_ + cols_, layout);
  c_v_wire_ = layout.take(pes);
  c_h_wire_ = layout.take(pes);
  c_mult_ = layout.take(pes);
  c_cfg_ = layout.take(1);
  acc_.build(pes, layout);
  for (int k = 0; k < pes; ++k) acc_.bus_input[k] = (k % lines_) * bus_ports_ + k / lines_;
  bus_.build(lines_, bus_ports_, layout);
  cnt_.assign(layout.size(), 0);
}

void MeshMachine::configure() {
  const int remaining_M = M_ - cur_M_ * T_M_;
  const int remaining_N = N_ - cur_N_ * T_N_;
  cols_used_ = std::min(remaining_N, T_N_);
  rows_used_ = std::min(remaining_M, T_M_);
  for (int i = 0; i < rows_; ++i)
    for (int j = 0; j < cols_; ++j) {
      const int e = i * cols_ + j;
      top_fifo_[e].clear();
      left_fifo_[e].clear();
      vn_[e] = (i < rows_used_ && j < cols_used_) ? i * cols_used_ + j : 0;
      fwd_bottom_[e] = i < rows_used_ - 1 && j < cols_used_;
      fwd_right_[e] = j < cols_used_ - 1 && i < rows_used_;
    }
  ++cnt_[c_cfg_];
  std::fill(acc_.count.begin(), acc_.count.end(), 0);
  acc_psums_ = K_;
  iteration_completed_ = false;
}

void MeshMachine::memory_cycle() {
  if (state_ == State::Configuring) configure();
  if (state_ == State::DistStr) {
    const int n0 = cur_N_ * T_N_, m0 = cur_M_ * T_M_;
    for (int i = 0; i < cols_used_; ++i) {
      ++gb_.weight_reads;
      const float w = data_ ? data_->weights[static_cast<std::size_t>(n0 + i) * K_ + cur_K_] : 0.0f;
      port_q_[i / per_port_].push(PortPacket{w, i});
    }
    for (int i = 0; i < rows_used_; ++i) {
      ++gb_.input_reads;
      const float a = data_ ? data_->input[static_cast<std::size_t>(m0 + i) * K_ + cur_K_] : 0.0f;
      const int dest = i + cols_;
      port_q_[dest / per_port_].push(PortPacket{a, dest});
    }
    if (++cur_K_ == K_) {
      cur_K_ = 0;
      iteration_completed_ = true;
      if (++cur_N_ == iter_N_) {
        cur_N_ = 0;
        ++cur_M_;
      }
    }
  }
  for (int l = 0; l < lines_; ++l)
    if (bus_.out[l].pending) bus_.out[l].take([&](const Psum& p) { write_fifo_.push(p); });
  process_writes();
  // All sent once the last iteration is complete.
  step_controller(state_, iteration_completed_, iteration_completed_ && cur_M_ >= iter_M_, false);
  for (int port = 0; port < ports_; ++port) {
    if (port_q_[port].empty()) continue;
    const PortPacket p = port_q_[port].pop();
    ++cnt_[dn_.c_top + port];
    if (dn_.has_switches()) {
      latch_full_[port] = true;
      latch_[port] = p;
    } else {
      deliver(port, p);
    }
  }
}

void MeshMachine::process_writes() {
  const std::size_t n = (write_fifo_.size() + 1) / 2;  // STONNE's shrinking-size loop
  for (std::size_t i = 0; i < n; ++i) {
    const Psum p = write_fifo_.pop();
    ++gb_.psum_writes;
    const long long tile_m = (tiles_done_ / iter_N_) * T_M_;
    const long long tile_n = (tiles_done_ % iter_N_) * T_N_;
    const long long m = tile_m + p.vn / cols_used_, n_col = tile_n + p.vn % cols_used_;
    if (values_valid_ && m < M_ && n_col < N_) {
      const std::size_t at = static_cast<std::size_t>(m) * N_ + static_cast<std::size_t>(n_col);
      output_[at] = p.value;
      from_fabric_[at] = 1;
    }
    if (++outputs_done_ == 1LL * M_ * N_) finished_ = true;
    if (++outputs_in_tile_ == 1LL * rows_used_ * cols_used_) {
      outputs_in_tile_ = 0;
      ++tiles_done_;
      if (state_ == State::Waiting) iteration_completed_ = true;
    }
  }
}

void MeshMachine::deliver(int port, const PortPacket& p) {
  if (dn_.has_switches()) dn_.count_route(port, &p.dest, 1, 1, cnt_.data());  // one path
  OneLink& in = p.dest < cols_ ? top_in_[p.dest] : left_in_[(p.dest - cols_) * cols_];
  in.pending = true;
  in.item = Psum{p.value, 0};
}

void MeshMachine::mesh_cycle() {
  for (int i = rows_ - 1; i >= 0; --i)
    for (int j = cols_ - 1; j >= 0; --j) {
      const int e = i * cols_ + j;
      if (left_in_[e].pending) {
        left_fifo_[e].push(left_in_[e].item);
        left_in_[e].pending = false;
      }
      if (top_in_[e].pending) {
        top_fifo_[e].push(top_in_[e].item);
        top_in_[e].pending = false;
      }
      if (left_fifo_[e].empty() || top_fifo_[e].empty()) continue;
      const Psum a = left_fifo_[e].pop();
      const Psum w = top_fifo_[e].pop();
      ++cnt_[c_mult_ + e];
      if (fwd_bottom_[e]) {
        top_in_[e + cols_] = OneLink{true, w};
        ++cnt_[c_v_wire_ + e];
      }
      if (fwd_right_[e]) {
        left_in_[e + 1] = OneLink{true, a};
        ++cnt_[c_h_wire_ + e];
      }
      acc_.in[e].send_one(Psum{a.value * w.value, vn_[e]});
      ++cnt_[acc_.c_wire + e];
    }
}

void MeshMachine::step() {
  ++cycle_;
  memory_cycle();
  bus_.cycle(cnt_.data());
  for (int k = 0; k < rows_ * cols_; ++k)
    acc_.cycle(k, acc_psums_, cnt_.data(), bus_,
               []() { fail("internal error in the mesh: two outputs meet in one accumulator"); });
  mesh_cycle();
  if (dn_.has_switches())
    for (int port = 0; port < ports_; ++port)
      if (latch_full_[port]) {
        latch_full_[port] = false;
        deliver(port, latch_[port]);
      }
}

void MeshMachine::canonical_state(std::vector<std::uint64_t>& s) const {
  s.clear();
  auto put = [&](std::uint64_t v) { s.push_back(v); };
  // The tile about to be configured.
  put(static_cast<std::uint64_t>(std::min(M_ - cur_M_ * T_M_, T_M_)));
  put(static_cast<std::uint64_t>(std::min(N_ - cur_N_ * T_N_, T_N_)));
  for (const auto& q : port_q_) {
    put(q.size());
    for (std::size_t i = 0; i < q.size(); ++i) put(static_cast<std::uint64_t>(q.at(i).dest));
  }
  for (std::size_t e = 0; e < top_in_.size(); ++e) {
    put(top_in_[e].pending | (left_in_[e].pending << 1) | (acc_.in[e].pending << 2));
    put(acc_.fifo[e].size());
    put(static_cast<std::uint64_t>(acc_.count[e]));
  }
  for (std::size_t k = 0; k < bus_.in.size(); ++k) {
    put(bus_.in[k].pending);
    put(bus_.fifo[k].size());
  }
  for (int l = 0; l < lines_; ++l) {
    put(static_cast<std::uint64_t>(bus_.rr[l]));
    put(bus_.out[l].pending);
  }
  put(write_fifo_.size());
}

EngineRun MeshMachine::run() {
  struct Point {
    long long tile;
    std::uint64_t cycle;
    std::vector<std::uint64_t> counters;
    long long outputs;
    GlobalBufferTraffic gb;
  };
  StateMemory<Point> seen(0x5eed);
  std::vector<std::uint64_t> state;
  const long long tiles = 1LL * iter_M_ * iter_N_;
  auto shape = [&](long long tile) {
    const long long m = tile / iter_N_, n = tile % iter_N_;
    return std::make_pair(std::min<long long>(M_ - m * T_M_, T_M_),
                          std::min<long long>(N_ - n * T_N_, T_N_));
  };
  std::uint64_t stepped = 0;
  int skips = 0;
  bool skipped = false;
  while (!finished_) {
    if (fast_ && state_ == State::Configuring && !skipped) {
      canonical_state(state);
      const long long here = 1LL * cur_M_ * iter_N_ + cur_N_;
      const std::uint64_t key = seen.key(state);
      if (const Point* seen_here = seen.find(key, state)) {
        const Point& a = *seen_here;
        const long long p = here - a.tile;
        long long periods = 0;
        for (long long next = here + p; next < tiles; next += p) {
          bool ok = true;
          for (long long t = next - p + 1; t <= next && ok; ++t)
            ok = shape(t) == shape(a.tile + (t - a.tile) % p);
          if (!ok) break;
          ++periods;
        }
        if (periods > 0) {
          repeat_change(cycle_, a.cycle, periods);
          repeat_change(cnt_, a.counters, periods);
          repeat_change(outputs_done_, a.outputs, periods);
          tiles_done_ += periods * p;
          const long long target = here + periods * p;
          cur_M_ = static_cast<int>(target / iter_N_);
          cur_N_ = static_cast<int>(target % iter_N_);
          values_valid_ = false;
          ++skips;
          skipped = true;
        }
      }
      if (!skipped) seen.remember(key, state, Point{here, cycle_, cnt_, outputs_done_, gb_});
    }
    step();
    ++stepped;
    require(stepped < 4'000'000'000ULL, "simulation exceeded 4e9 cycles");
  }
  const GlobalBufferTraffic gb = skips ? mesh_traffic(hw_, op_, t_) : gb_;
  const auto mult = cnt_.begin() + static_cast<std::ptrdiff_t>(c_mult_);
  return result(stepped, skips, gb, std::accumulate(mult, mult + rows_ * cols_, std::uint64_t{0}),
                counters_file(gb));
}

CountersFile MeshMachine::counters_file(const GlobalBufferTraffic& gb) const {
  CounterSection mn{"MSNetwork", {}};
  reserve_lines(mn, 3 * static_cast<std::size_t>(rows_) * cols_);
  for (int i = 1; i < rows_; ++i)
    add_wires(mn, "MN_WIRE", cnt_.data() + c_v_wire_ + (i - 1) * cols_,
              static_cast<std::size_t>(cols_));
  for (int i = 0; i < rows_; ++i)
    add_wires(mn, "MN_WIRE", cnt_.data() + c_h_wire_ + i * cols_,
              static_cast<std::size_t>(cols_ - 1));
  for (int e = 0; e < rows_ * cols_; ++e)
    mn.lines.push_back(CounterLine{
        "MULTIPLIER", {{"MULTIPLICATION", cnt_[c_mult_ + e]}, {"CONFIGURATION", cnt_[c_cfg_]}}});
  CounterSection rn{"ReduceNetwork", {}};
  acc_.add_lines(rn, cnt_.data());
  return assemble_counters(cycle_, dn_.section(cnt_.data(), cnt_.data()), std::move(mn),
                           std::move(rn), gb, bus_.section(cnt_.data()));
}

}  // namespace

EngineRun run_mesh(const HardwareConfig& hw, const DenseOp& op, const Tile& tile,
                   const EngineOptions& options) {
  MeshMachine machine({hw, op, tile, options});
  return machine.run();
}

}  // namespace telar::sim
