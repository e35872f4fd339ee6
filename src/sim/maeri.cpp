// The MAERI machine stepped cycle by cycle (memory controller, collection bus, reduction
// network, multipliers, distribution network, in STONNE's order) and run over a dense
// operation: the plain cycle loop, or in fast mode the loop that detects a repeating steady
// state of the tile loop and skips its repetitions exactly (docs/sim.md, "Exact and fast
// modes"). Building the machine and capturing its state are in maeri_machine.cpp.
#include <algorithm>
#include <numeric>
#include <optional>
#include <unordered_map>

#include "core/error.hpp"
#include "sim/maeri_machine.hpp"
#include "sim/steady_state.hpp"

namespace telar::sim {

namespace maeri {


// ------------------------------------------------------------------------------------------
// Memory controller

long long MaeriMachine::threshold(long long iteration_index) const {
  const long long k = iteration_index % g_.iter_K;
  const long long g = (iteration_index / g_.iter_K) % g_.iter_G;
  return g * t_.T_G * Kg_ + k * t_.T_K * t_.T_G;
}

float MaeriMachine::input_value(int n, int row, int col, int ch) const {
  if (!data_ || n >= N_ || row >= op_.X || col >= op_.Y || ch >= op_.C) return 0.0f;
  return data_->input[((static_cast<std::size_t>(n) * op_.X + row) * op_.Y + col) * op_.C + ch];
}

float MaeriMachine::weight_value(int gk, int r, int s, int c) const {
  if (!data_ || gk >= op_.K) return 0.0f;
  return data_->weights[((static_cast<std::size_t>(gk) * R_ + r) * S_ + s) * Cg_ + c];
}

// The destinations of every packet of a fold step depend only on the tile, so they are worked
// out once: per weight (g, k, c, r, s) and per input (x, y, n, g, c), the multipliers it goes to,
// split by read port. Generation then only fills in values, validity and the iteration tag.

void MaeriMachine::record_step(std::uint8_t tmpl, long long iter) {
  steps_.push_back(Step{tmpl, iter, cN_ * t_.T_N, cG_ * t_.T_G, cK_ * t_.T_K, cX_ * t_.T_X,
                        cY_ * t_.T_Y, cC_ * t_.T_C, cR_ * t_.T_R, cS_ * t_.T_S});
}

float MaeriMachine::step_value(const Step& st, const TemplatePacket& tp) const {
  if (!data_ || !values_valid_) return 0.0f;
  if (st.tmpl == 0) {
    const int g = tp.a, k = tp.b, c = tp.c, r = tp.d, s = tp.e;
    if (st.idxR + r < R_ && st.idxS + s < S_ && st.idxC + c < Cg_ && st.idxK + k < Kg_ &&
        st.idxG + g < G_)
      return weight_value((st.idxG + g) * Kg_ + st.idxK + k, st.idxR + r, st.idxS + s, st.idxC + c);
    return 0.0f;
  }
  const int x = tp.a, y = tp.b, n = tp.c, g = tp.d, c = tp.e;
  if (st.idxR + x < t_.T_X + R_ - 1 && st.idxS + y < t_.T_Y + S_ - 1 && st.idxC + c < Cg_)
    return input_value(st.idxN + n, st.idxX * stride_ + x + st.idxR,
                       st.idxY * stride_ + y + st.idxS, (st.idxG + g) * Cg_ + st.idxC + c);
  return 0.0f;
}

void MaeriMachine::generate_weights() {
  const int idxK = cK_ * t_.T_K, idxC = cC_ * t_.T_C, idxR = cR_ * t_.T_R, idxS = cS_ * t_.T_S;
  const long long iter = 1LL * cG_ * t_.T_G * Kg_ + 1LL * idxK * t_.T_G;
  for (const TemplatePacket& tp : weight_template_.packets)
    if (idxR + tp.d < R_ && idxS + tp.e < S_ && idxC + tp.c < Cg_ && idxK + tp.b < Kg_)
      ++gb_.weight_reads;
  record_step(0, iter);
  if (++cS_ == g_.iter_S) {
    cS_ = 0;
    if (++cR_ == g_.iter_R) {
      cR_ = 0;
      if (++cC_ == g_.iter_C) {
        cC_ = 0;
        weights_done_ = true;
      }
    }
  }
}

void MaeriMachine::generate_inputs() {
  const bool links = t_.T_Y == 1 && t_.T_S > 1 && stride_ == 1 && S_ % t_.T_S == 0;
  const int variant = links && cY_ > 0 ? 1 : 0;
  const int out_y_inputs = t_.T_Y + S_ - 1;
  const int out_x_inputs = t_.T_X + R_ - 1;
  const int idxC = cC_ * t_.T_C, idxR = cR_ * t_.T_R, idxS = cS_ * t_.T_S;
  const long long iter = 1LL * cG_ * t_.T_G * Kg_ + 1LL * cK_ * t_.T_K * t_.T_G;
  for (const TemplatePacket& tp : input_template_[variant].packets)
    if (idxR + tp.a < out_x_inputs && idxS + tp.b < out_y_inputs && idxC + tp.e < Cg_)
      ++gb_.input_reads;
  record_step(static_cast<std::uint8_t>(1 + variant), iter);
  advance_inputs();
}

void MaeriMachine::advance_inputs() {
  if (++cS_ < g_.iter_S) return;
  cS_ = 0;
  if (++cR_ < g_.iter_R) return;
  cR_ = 0;
  if (++cC_ < g_.iter_C) return;
  cC_ = 0;
  if (++cY_ < g_.iter_Y) return;
  cY_ = 0;
  if (++cX_ < g_.iter_X) return;
  cX_ = 0;
  weights_done_ = false;
  if (++cK_ < g_.iter_K) return;
  cK_ = 0;
  if (++cG_ < g_.iter_G) return;
  cG_ = 0;
  if (++cN_ < g_.iter_N) return;
  cN_ = 0;
  weights_done_ = true;
  input_finished_ = true;
}

void MaeriMachine::memory_cycle() {
  const long long current = opix_ / per_channel_;
  const long long iter = 1LL * cG_ * t_.T_G * Kg_ + 1LL * cK_ * t_.T_K * t_.T_G;
  if (!input_finished_) {
    if (iter <= current) {
      if (!weights_done_)
        generate_weights();
      else
        generate_inputs();
    } else {
      ++gate_stalls_;
    }
  }
  // Results from the lookup table and from every bus line, in that order.
  if (mem_in_.pending) mem_in_.take([&](const Psum& p) { write_fifo_.push(p); });
  for (int l = 0; l < lines_; ++l)
    if (bus_.out[l].pending) bus_.out[l].take([&](const Psum& p) { write_fifo_.push(p); });
  process_writes();
  send_ports();
}

void MaeriMachine::process_writes() {
  // STONNE pops while its index is below the FIFO's (shrinking) size: half of the FIFO.
  const std::size_t n = (write_fifo_.size() + 1) / 2;
  for (std::size_t i = 0; i < n; ++i) {
    const Psum p = write_fifo_.pop();
    const int vn = p.vn;
    // Where this VN's next output goes (STONNE's VN address table).
    long long q = vnat_count_[vn]++;
    q /= vnat_psums_;
    const int y_it = static_cast<int>(q % g_.iter_Y);
    q /= g_.iter_Y;
    const int x_it = static_cast<int>(q % g_.iter_X);
    q /= g_.iter_X;
    const int k_it = static_cast<int>(q % g_.iter_K);
    q /= g_.iter_K;
    const int g_it = static_cast<int>(q % g_.iter_G);
    const int n_it = static_cast<int>(q / g_.iter_G);
    int rest = vn;
    const int vy = rest % t_.T_Y;
    rest /= t_.T_Y;
    const int vx = rest % t_.T_X;
    rest /= t_.T_X;
    const int vk = rest % t_.T_K;
    rest /= t_.T_K;
    const int vg = rest % t_.T_G;
    const int vnn = rest / t_.T_G;
    const int on = vnn + n_it * t_.T_N, og = vg + g_it * t_.T_G, ok = vk + k_it * t_.T_K,
              ox = vx + x_it * t_.T_X, oy = vy + y_it * t_.T_Y;
    const bool last_fold = vnat_psum_[vn] + 1 == vnat_psums_;
    if (ok < Kg_ && on < N_ && og < G_ && ox < Xo_ && oy < Yo_) {
      ++gb_.psum_writes;
      if (values_valid_) {
        const std::size_t at =
            ((static_cast<std::size_t>(on) * Xo_ + ox) * Yo_ + oy) * op_.K + og * Kg_ + ok;
        output_[at] = p.value;
        from_fabric_[at] = last_fold;
      }
    }
    ++opix_;
    if (++vnat_psum_[vn] < vnat_psums_) {
      ++gb_.psum_reads;
      const int dest = vn * g_.vn_size;
      port_psum_[dest / per_port_].push(PortPacket{p.value, dest});
    } else {
      vnat_psum_[vn] = 0;
    }
    if (opix_ == total_outputs_) finished_ = true;
  }
}

void MaeriMachine::send_ports() {
  const long long current = opix_ / per_channel_;
  long long oldest = steps_base_ + static_cast<long long>(steps_.size());
  long long oldest_rel = oldest, newest_rel = steps_base_;
  for (int port = 0; port < ports_; ++port) {
    Outgoing out{kPsum, 0.0f, 0, nullptr};
    bool have = false;
    if (!port_psum_[port].empty()) {  // partial sums go first
      const PortPacket pp = port_psum_[port].pop();
      latch_psum_dest_[port] = pp.dest;
      out = Outgoing{kPsum, pp.value, 1, &latch_psum_dest_[port]};
      ++cnt_[c_psum_to_ + pp.dest];
      have = true;
    } else {
      Cursor& cur = cursor_[port];
      const long long end = steps_base_ + static_cast<long long>(steps_.size());
      while (cur.step < end) {
        const Step& st = steps_[static_cast<std::size_t>(cur.step - steps_base_)];
        const Template& t = step_template(st);
        const auto& mine = t.by_port[port];
        if (cur.pos >= mine.size()) {
          ++cur.step;
          cur.pos = 0;
          continue;
        }
        if (st.iter <= current) {  // packets of a later iteration wait for the earlier outputs
          const TemplatePacket& tp = t.packets[mine[cur.pos].first];
          const TemplatePart& part = t.parts[tp.first_part + mine[cur.pos].second];
          out = Outgoing{st.tmpl == 0 ? kWeight : kInput, step_value(st, tp), part.count,
                         t.dests.data() + part.begin};
          ++cnt_[part_base_[st.tmpl] + tp.first_part + mine[cur.pos].second];
          have = true;
          if (++cur.pos >= mine.size()) {
            ++cur.step;
            cur.pos = 0;
          }
        }
        break;
      }
    }
    oldest = std::min(oldest, cursor_[port].step);
    if (port_relevant_[port]) {
      oldest_rel = std::min(oldest_rel, cursor_[port].step);
      newest_rel = std::max(newest_rel, cursor_[port].step);
    }
    if (!have) continue;
    ++cnt_[dn_.c_top + port];
    if (dn_.has_switches()) {
      latch_full_[port] = true;
      latch_[port] = out;
    } else {
      deliver(out);
    }
  }
  oldest_relevant_ = oldest_rel;
  newest_relevant_ = newest_rel;
  // Forget the steps every port has passed (and no backlog mark needs).
  if (keep_from_ >= 0) oldest = std::min(oldest, keep_from_);
  const long long passed = oldest - steps_base_;
  if (passed > 4096 && passed > static_cast<long long>(steps_.size()) / 2) {
    steps_.erase(steps_.begin(), steps_.begin() + static_cast<std::ptrdiff_t>(passed));
    steps_base_ = oldest;
  }
}

void MaeriMachine::deliver(const Outgoing& p) {
  for (std::uint32_t i = 0; i < p.count; ++i) {
    MsInput& in = ms_in_[p.dests[i]];
    in.pending = true;
    in.kind = p.kind;
    in.value = p.value;
  }
}

// ------------------------------------------------------------------------------------------
// Collection bus, reduction network, multipliers, distribution

void MaeriMachine::bus_cycle() { bus_.cycle(cnt_.data()); }

void MaeriMachine::reduction_cycle() {
  rn_.cycle(g_.n_folding, cnt_.data(), bus_, acc_ ? &acc_buf_ : nullptr,
            [this]() { mixed_neurons(); });
}

void MaeriMachine::multiplier_cycle(int i) {
  if (ms_vn_[i] < 0 && !ms_in_[i].pending) return;  // not mapped: never fed
  auto receive = [&]() __attribute__((always_inline)) {
    fabric::receive(ms_in_[i], ms_act_[i], ms_w_[i], ms_nf_[i], cnt_[array_.c_fwd_psum + i]);
  };
  const int leaf = rn_.leaf_link(i);
  if (ms_fwd_psum_[i]) {
    const int nf = ms_nf_[i];
    if (ms_fold_[i] > 0) {
      receive();
      if (!ms_act_[i].empty()) {
        const Act a = ms_act_[i].pop();
        rn_.child_link(leaf).send_one(Psum{a.value, ms_vn_[i]});
        ++cnt_[rn_.c_wire + leaf];
        if (++ms_fold_[i] == nf) ms_fold_[i] = 0;
      }
    } else {
      // First fold of a window: the accumulating multiplier contributes a zero.
      rn_.child_link(leaf).send_one(Psum{0.0f, ms_vn_[i]});
      ++cnt_[rn_.c_wire + leaf];
      if (++ms_fold_[i] == nf) ms_fold_[i] = 0;
    }
    return;
  }
  receive();
  if (ms_fw_recv_[i]) {
    ValueLink& fl = ms_fw_link_[i];
    if (fl.pending) {
      ms_fwin_[i].push(fl.value);
      fl.pending = false;
    }
  }
  const bool from_neighbour = ms_fw_recv_[i] && ms_win_[i] > 0;
  const int nf = ms_nf_[i];
  if (static_cast<int>(ms_w_[i].size()) < nf) return;
  float activation;
  if (from_neighbour) {
    if (ms_fwin_[i].empty()) return;
    activation = ms_fwin_[i].pop();
  } else {
    if (ms_act_[i].empty()) return;
    activation = ms_act_[i].pop().value;
  }
  const float weight = ms_w_[i].front();
  ms_w_[i].rotate();
  rn_.child_link(leaf).send_one(Psum{activation * weight, ms_vn_[i]});
  ++cnt_[rn_.c_wire + leaf];
  ++cnt_[array_.c_mult + i];
  if (ms_win_[i] < n_windows_ - 1 && ms_fw_send_[i] && i > 0) {
    ms_fw_link_[i - 1].pending = true;
    ms_fw_link_[i - 1].value = activation;
    ++cnt_[array_.c_wire + i - 1];
  }
  if (++ms_fold_[i] == nf) {
    ms_fold_[i] = 0;
    if (++ms_win_[i] == n_windows_) ms_win_[i] = 0;
  }
}

void MaeriMachine::distribution_cycle() {
  if (!dn_.has_switches()) return;
  for (int port = 0; port < ports_; ++port) {
    if (!latch_full_[port]) continue;
    latch_full_[port] = false;
    deliver(latch_[port]);
  }
}

// Flattened: every per-cycle function inlines into it (they have external linkage here, which
// stops GCC from inlining the ones called once on its own).
[[gnu::flatten]] void MaeriMachine::step() {
  ++cycle_;
  memory_cycle();
  bus_cycle();
  reduction_cycle();
  if (rn_.lookup_in.pending) {  // the lookup table passes the root's results to the controller
    std::swap(mem_in_, rn_.lookup_in);
    rn_.lookup_in.pending = false;
  }
  for (int i = 0; i < ms_; ++i) multiplier_cycle(i);
  distribution_cycle();
}

// ------------------------------------------------------------------------------------------
// Steady-state detection

long long MaeriMachine::point_index() const {
  const long long iteration = (1LL * cN_ * g_.iter_G + cG_) * g_.iter_K + cK_;
  return iteration * g_.iter_X + cX_;
}

// The controller is about to start a weight distribution (x = 0) or a new row of output
// pixels (x > 0) with its inner loops at zero.
bool MaeriMachine::at_point() const {
  if (input_finished_ || cY_ != 0 || cR_ != 0 || cS_ != 0 || cC_ != 0) return false;
  if (cX_ == 0) {
    if (weights_done_) return false;
    const long long iter = 1LL * cG_ * t_.T_G * Kg_ + 1LL * cK_ * t_.T_K * t_.T_G;
    return iter <= opix_ / per_channel_;
  }
  return weights_done_;
}

void MaeriMachine::canonical_state(std::vector<std::uint64_t>& s, bool full) const {
  s.clear();
  s.reserve(8192);
  auto put = [&](std::uint64_t v) { s.push_back(v); };
  put(cX_ == 0 ? 1 : 2);
  // Port queues: the recorded steps by their template (all steps of a template carry the same
  // destinations), with each port's position among them; the partial sums in fabric_state().
  long long oldest = steps_base_ + static_cast<long long>(steps_.size());
  for (const Cursor& c : cursor_) oldest = std::min(oldest, c.step);
  const long long pending = steps_base_ + static_cast<long long>(steps_.size()) - oldest;
  put(static_cast<std::uint64_t>(pending));
  for (const Cursor& c : cursor_) put(static_cast<std::uint64_t>(c.step - oldest) << 32 | c.pos);
  if (pending > 0) {
    const std::size_t first = static_cast<std::size_t>(oldest - steps_base_);
    if (full) {
      for (std::size_t i = first; i < steps_.size(); ++i) put(steps_[i].tmpl);
    } else {
      put(steps_[first].tmpl);
      put(steps_.back().tmpl);
    }
  }
  fabric_state(s);
}

void MaeriMachine::fabric_state(std::vector<std::uint64_t>& s) const {
  auto put = [&](std::uint64_t v) { s.push_back(v); };
  for (int port = 0; port < ports_; ++port) {
    const Ring<PortPacket>& q = port_psum_[port];
    put(q.size());
    for (std::size_t i = 0; i < q.size(); ++i) put(static_cast<std::uint64_t>(q.at(i).dest));
  }
  for (int i = 0; i < ms_; ++i) {
    put(ms_in_[i].pending ? 1 + ms_in_[i].kind : 0);
    put(ms_fw_link_[i].pending);
    put(ms_act_[i].size());
    for (std::size_t k = 0; k < ms_act_[i].size(); ++k) put(ms_act_[i].at(k).psum);
    put(ms_fwin_[i].size());
    // A full weight FIFO is flushed by the next weight, exactly like an empty one fills, so a
    // multiplier with nothing else pending holds "no weights" either way.
    const bool idle =
        !ms_in_[i].pending && !ms_fw_link_[i].pending && ms_act_[i].empty() && ms_fwin_[i].empty();
    const std::size_t weights = ms_w_[i].size();
    put(idle && static_cast<int>(weights) == ms_nf_[i] ? 0 : weights);
    put(static_cast<std::uint64_t>(ms_fold_[i]) << 32 | static_cast<std::uint32_t>(ms_win_[i]));
  }
  rn_.state(s);
  acc_buf_.put_state(s);
  bus_.put_inputs(s);
  for (int l = 0; l < lines_; ++l) {
    // The arbiter scans from its position to the first non-empty input; only inputs that some
    // result can use are ever non-empty, so positions with the same next such input behave
    // alike.
    const std::vector<int>& src = bus_line_sources_[l];
    int next = src.empty() ? 0 : src.front();
    for (int p : src)
      if (p >= bus_.rr[l]) {
        next = p;
        break;
      }
    put(static_cast<std::uint64_t>(next));
    put_link(s, bus_.out[l]);
  }
  put_link(s, mem_in_);
  put_ring(s, write_fifo_);
  for (int v : vnat_psum_) put(static_cast<std::uint64_t>(v));
}

EngineRun MaeriMachine::run() {
  // Fast mode. At every loop point (a weight distribution or a new row of output pixels) the
  // fabric state (without data values) is compared with earlier points. Weight points keep
  // their full state, so a repeat is recognised at once; row points keep a fingerprint (their
  // port queues can be long) and a repeat is confirmed with the full state one period later.
  // Once the fabric provably repeats, as many whole periods as the loop structure and the
  // iteration gate allow are skipped, advancing cycles and counters by per-period deltas.
  struct Mark {
    long long index = 0;
    std::uint64_t cycle = 0;
    std::vector<std::uint64_t> counters;
    long long opix = 0;
    std::vector<long long> vnat;
    std::uint64_t stalls = 0;
    std::vector<std::uint64_t> state;  // full state (row-point candidates)
  };
  StateMemory<Mark> weight_points(0x57);
  std::unordered_map<std::uint64_t, long long> row_points;  // fingerprint -> index
  std::optional<std::pair<Mark, long long>> candidate;      // (mark, period)
  std::vector<std::uint64_t> state;
  const long long points = 1LL * g_.iter_N * g_.iter_G * g_.iter_K * g_.iter_X;
  const long long last_point = points - 1;
  std::uint64_t stepped = 0;
  int skips = 0;
  // Row points pay off only when there are too few iterations for whole iterations to repeat.
  bool rows_useful = 1LL * g_.iter_N * g_.iter_G * g_.iter_K < 3;
  auto mark_here = [&](bool with_state) {
    Mark m{point_index(), cycle_, cnt_, opix_, vnat_count_, gate_stalls_, {}};
    if (with_state) m.state = state;
    return m;
  };
  // Output count that opens the gate of the weight point starting iteration `it`; after the
  // last iteration, the count that completes the operation.
  auto gate_outputs = [&](long long it) {
    return it * g_.iter_X >= points ? total_outputs_ : threshold(it) * per_channel_;
  };
  // Whole periods p that can follow point `here`, the period having started at point `a`.
  // Returns the periods and whether the last one ends the operation (the point after the last).
  auto skippable = [&](const Mark& a, long long here, long long p) {
    const bool blocked = gate_stalls_ != a.stalls;
    const long long d_opix = opix_ - a.opix;
    long long periods = 0;
    bool to_end = false;
    for (long long next = here + p; next <= points; next += p) {
      bool ok = true;
      for (long long t = next - p + 1; t <= next && ok; ++t) {
        const long long back = a.index + (t - a.index) % p;  // its counterpart in [a, here)
        const bool weights_point = t % g_.iter_X == 0;
        if (weights_point != (back % g_.iter_X == 0)) ok = false;
        if (ok && weights_point) {
          const long long q = (t - back) / p;
          const long long lhs = gate_outputs(t / g_.iter_X) - gate_outputs(back / g_.iter_X);
          // The end can only be predicted when the period waits for its gate exactly.
          if (t == points ? (!blocked || lhs != q * d_opix)
                          : (blocked ? lhs != q * d_opix : lhs > q * d_opix))
            ok = false;
        }
      }
      if (!ok) break;
      ++periods;
      to_end = next == points;
    }
    return std::make_pair(periods, to_end);
  };
  // Backlog points. When the controller runs ahead of the fabric (it emits a fold step per
  // cycle; the ports may take longer), its position never repeats relative to the fabric and
  // the points above never match. Here points are taken where the ports' oldest cursor passes
  // the first step of a row of output pixels; the state is the fabric's, with the cursors
  // relative to that step. Two equal such states a period apart repeat for as long as (1) the
  // steps the ports read in a period already exist when it starts (then how far ahead the
  // controller is does not matter), (2) those steps repeat, template for template, a period's
  // steps later, (3) none of them waits for the iteration gate, and (4) the operation does not
  // end. The controller itself is replayed alone over the skipped cycles (its emission depends
  // on the fabric only through the gate, which must stay open or shut all along).
  struct BacklogMark {
    long long anchor = 0;  // absolute index of the row's first step
    std::uint64_t cycle = 0;
    std::vector<std::uint64_t> counters;
    long long opix = 0;
    std::vector<long long> vnat;
    long long oldest = 0, end = 0;  // relevant cursors' oldest; steps emitted so far
  };
  StateMemory<BacklogMark> backlog_points(0x59);
  long long anchor_scan = 0;
  std::uint64_t last_backlog_point = 0;
  const bool backlog = fast_;
  auto forget_backlog = [&]() {
    backlog_points.clear();
    keep_from_ = -1;
  };
  auto step_at = [&](long long i) -> const Step& {
    return steps_[static_cast<std::size_t>(i - steps_base_)];
  };
  // Steps [from, to] read within the gate and equal to the steps `period` earlier (those from
  // `first` on).
  auto repeats = [&](long long from, long long to, long long period, long long first,
                     long long gate) {
    for (long long i = from; i <= to; ++i) {
      const Step& st = step_at(i);
      if (st.iter > gate) return false;
      if (i - period >= first && step_at(i - period).tmpl != st.tmpl) return false;
    }
    return true;
  };
  auto try_backlog_skip = [&](const BacklogMark& a, long long anchor) {
    const long long p_steps = anchor - a.anchor;
    const long long p_cycles = static_cast<long long>(cycle_ - a.cycle);
    const long long d_opix = opix_ - a.opix;
    if (p_steps <= 0 || p_cycles <= 0 || d_opix <= 0) return false;
    const long long newest = newest_relevant_;
    if (newest >= a.end || a.oldest < steps_base_) return false;  // (1) for the period seen
    const long long gate = a.opix / per_channel_;
    if (!repeats(a.oldest, newest, p_steps, a.oldest, gate)) return false;
    const long long k_cap = (total_outputs_ - 1 - opix_) / d_opix;  // (4)
    if (k_cap <= 0) return false;
    std::vector<ControllerState> at_period{controller_state()};
    long long k = 0;
    for (long long j = 1; j <= k_cap; ++j) {
      const long long end = steps_base_ + static_cast<long long>(steps_.size());
      const long long need = newest + j * p_steps;
      if (end <= need) break;                                                  // (1)
      if (!repeats(need - p_steps + 1, need, p_steps, a.oldest, gate)) break;  // (2), (3)
      if (!replay_controller(p_cycles, opix_ + (j - 1) * d_opix, opix_ + j * d_opix)) break;
      at_period.push_back(controller_state());
      k = j;
    }
    restore_controller(at_period[static_cast<std::size_t>(k)]);
    if (k == 0) return false;
    cycle_ += static_cast<std::uint64_t>(k * p_cycles);
    repeat_change(cnt_, a.counters, k);
    opix_ += k * d_opix;
    for (std::size_t v = 0; v < vnat_count_.size(); ++v)
      vnat_count_[v] += k * (vnat_count_[v] - a.vnat[v]);
    for (int port = 0; port < ports_; ++port)
      if (port_relevant_[port]) cursor_[port].step += k * p_steps;
    oldest_relevant_ += k * p_steps;
    newest_relevant_ += k * p_steps;
    anchor_scan = oldest_relevant_ + 1;
    values_valid_ = false;
    ++skips;
    return true;
  };
  auto backlog_point = [&]() {
    // The newest row start the oldest relevant cursor has reached, if it passed a new one.
    long long anchor = -1;
    long long i = std::max(anchor_scan, steps_base_);
    for (; i <= oldest_relevant_ && i < steps_base_ + static_cast<long long>(steps_.size()); ++i) {
      const Step& st = step_at(i);
      if (st.tmpl != 0 && st.idxY == 0 && st.idxC == 0 && st.idxR == 0 && st.idxS == 0) anchor = i;
    }
    anchor_scan = i;
    // Points 64 cycles apart at least: a state costs about as much as a few cycles.
    if (anchor < 0 || cycle_ - last_backlog_point < 64) return false;
    last_backlog_point = cycle_;
    state.clear();
    fabric_state(state);
    for (int port = 0; port < ports_; ++port)
      if (port_relevant_[port])
        state.push_back(static_cast<std::uint64_t>(cursor_[port].step - anchor) << 32 |
                        cursor_[port].pos);
    const std::uint64_t key = backlog_points.key(state);
    const BacklogMark* seen = backlog_points.find(key, state);
    if (seen && try_backlog_skip(*seen, anchor)) return true;
    if (backlog_points.size() >= 64) forget_backlog();
    BacklogMark m{anchor,
                  cycle_,
                  cnt_,
                  opix_,
                  vnat_count_,
                  oldest_relevant_,
                  steps_base_ + static_cast<long long>(steps_.size())};
    if (keep_from_ < 0 || m.oldest < keep_from_) keep_from_ = m.oldest;
    backlog_points.remember(key, state, std::move(m));
    return false;
  };
  auto try_skip = [&](const Mark& a, long long here) {
    const long long p = here - a.index;
    const auto [periods, to_end] = skippable(a, here, p);
    if (periods == 0) return false;
    std::vector<std::uint64_t> d_counters(cnt_.size());
    for (std::size_t i = 0; i < cnt_.size(); ++i) d_counters[i] = cnt_[i] - a.counters[i];
    std::vector<long long> d_vnat(vnat_count_.size());
    for (std::size_t v = 0; v < vnat_count_.size(); ++v) d_vnat[v] = vnat_count_[v] - a.vnat[v];
    jump(to_end ? last_point : here + periods * p, periods, cycle_ - a.cycle, d_counters,
         opix_ - a.opix, d_vnat);
    if (to_end) finished_ = true;
    ++skips;
    weight_points.clear();
    row_points.clear();
    candidate.reset();
    forget_backlog();
    return true;
  };
  while (!finished_) {
    if (fast_ && at_point()) {
      const long long here = point_index();
      bool skipped = false;
      if (cX_ == 0) {
        canonical_state(state, true);
        row_points.clear();
        // Row points help only while an iteration is long and the fabric repeats within it;
        // after a whole iteration without such a repeat, stop fingerprinting them.
        if (here > 0 && skips == 0) rows_useful = false;
        const std::uint64_t key = weight_points.key(state);
        if (const Mark* seen = weight_points.find(key, state)) skipped = try_skip(*seen, here);
        if (!skipped) weight_points.remember(key, state, mark_here(false));
      } else if (candidate && here == candidate->first.index + candidate->second) {
        canonical_state(state, true);
        if (state == candidate->first.state) skipped = try_skip(candidate->first, here);
        candidate.reset();
      } else if (rows_useful) {
        if (candidate && here > candidate->first.index + candidate->second) candidate.reset();
        canonical_state(state, false);
        const std::uint64_t h = state_fingerprint(0x58, state);
        auto it = row_points.find(h);
        if (!candidate && it != row_points.end() && it->second < here &&
            here + 2 * (here - it->second) <= points) {
          canonical_state(state, true);
          candidate = std::make_pair(mark_here(true), here - it->second);
        }
        row_points[h] = here;
      }
      if (skipped) continue;  // look at the new position again
    }
    // (The marks of the points above stay: their states are exact after a backlog skip too.)
    if (backlog && stepped > 0 && backlog_point()) {
      forget_backlog();
      continue;
    }
    step();
    ++stepped;
    require(stepped < 4'000'000'000ULL,
            "simulation exceeded 4e9 cycles; the tile is too small for this layer");
  }
  const GlobalBufferTraffic gb = skips ? maeri_traffic(hw_, op_, t_) : gb_;
  const auto mult = cnt_.begin() + static_cast<std::ptrdiff_t>(array_.c_mult);
  return result(stepped, skips, gb, std::accumulate(mult, mult + ms_, std::uint64_t{0}),
                counters_file(gb));
}

}  // namespace maeri

EngineRun run_maeri(const HardwareConfig& hw, const DenseOp& op, const Tile& tile,
                    const EngineOptions& options) {
  maeri::MaeriMachine machine({hw, op, tile, options});
  return machine.run();
}

}  // namespace telar::sim
