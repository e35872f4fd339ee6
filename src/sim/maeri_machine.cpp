// The MAERI machine built (fabric, templates of the controller's packets, counter layout), its
// state captured and restored for the steady-state skips of fast mode, and its counters file.
// The cycle-by-cycle stepping and the run loop are in maeri.cpp, one translation unit, so that
// the per-cycle calls inline.
#include "sim/maeri_machine.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace telar::sim::maeri {

MaeriMachine::MaeriMachine(const DenseJob& job)
    : DenseMachine(job, static_cast<std::size_t>(job.op.output_elements())) {
  const auto& [hw, op, tile, options] = job;
  g_ = tile_geometry(hw, op, tile);
  R_ = op.R, S_ = op.S, Cg_ = op.c_per_group(), Kg_ = op.k_per_group(), G_ = op.G, N_ = op.N;
  Xo_ = op.out_x(), Yo_ = op.out_y(), stride_ = op.stride;
  ms_ = hw.ms_size;
  ports_ = hw.dn_bw;
  per_port_ = ms_ / ports_;
  shift_ = g_.folding ? 1 : 0;
  window_ = t_.T_R * t_.T_S * t_.T_C + shift_;
  const int vnat_iters = g_.folding ? g_.n_folding : 1;
  vnat_psums_ = vnat_iters;
  per_channel_ = 1LL * Xo_ * Yo_ * vnat_iters;
  total_outputs_ =
      1LL * g_.iter_N * g_.iter_G * g_.iter_K * g_.iter_X * g_.iter_Y * vnat_iters * g_.num_vns;
  acc_ = hw.accumulation_buffer && hw.rn == ReduceNetwork::Art;
  lines_ = hw.rn_bw;

  cursor_.resize(ports_);
  port_psum_.resize(ports_);
  latch_full_.assign(ports_, false);
  latch_.resize(ports_);
  latch_psum_dest_.assign(ports_, 0);
  dest_scratch_.resize(std::max(1, t_.T_N * t_.T_G * t_.T_C));

  vnat_count_.assign(g_.num_vns, 0);
  vnat_psum_.assign(g_.num_vns, 0);

  // Counter layout.
  CounterLayout layout;
  dn_.build(ports_, ms_, layout);
  array_.build(ms_, layout);
  build_reduction(layout);  // sets bus geometry
  build_templates();
  // Packets sent per template part and partial sums sent per multiplier: the distribution
  // network's counters follow from these at the end (each part always takes the same route).
  part_base_[0] = layout.take(weight_template_.parts.size());
  part_base_[1] = layout.take(input_template_[0].parts.size());
  part_base_[2] = layout.take(input_template_[1].parts.size());
  c_psum_to_ = layout.take(ms_);
  c_end_ = layout.size();
  cnt_.assign(c_end_, 0);
  rn_.count_configuration(cnt_.data());
  build_multipliers();
  port_relevant_.assign(ports_, 0);
  for (const Template* t : {&weight_template_, &input_template_[0], &input_template_[1]})
    for (int port = 0; port < ports_; ++port)
      if (!t->by_port[port].empty()) port_relevant_[port] = 1;
}

void MaeriMachine::build_reduction(CounterLayout& layout) {
  wiring_ = wire_collection_bus(hw_.rn, ms_, lines_);
  bus_ports_ = wiring_.ports_per_line;
  bus_.build(lines_, bus_ports_, layout);
  rn_.build(hw_.rn, ms_, wiring_, acc_, layout);
  rn_.configure(compile_reduce_tree(hw_.rn, ms_, g_.vn_size, g_.num_vns));
  if (acc_) {
    acc_buf_.build(ms_ - 1, layout);
    for (int k = 0; k < ms_ - 1; ++k) {
      const int node = wiring_.order[k];
      acc_buf_.bus_input[k] = wiring_.line[node] * bus_ports_ + wiring_.port[node];
    }
  }
  bus_line_sources_.assign(lines_, {});
  for (int id = 0; id < rn_.tree.node_count(); ++id)
    if (rn_.tree.nodes[id].to_memory)
      bus_line_sources_[wiring_.line[id]].push_back(wiring_.port[id]);
  for (auto& v : bus_line_sources_) std::sort(v.begin(), v.end());
}

void MaeriMachine::build_multipliers() {
  ms_vn_.assign(ms_, -1);
  ms_nf_.assign(ms_, 0);
  ms_fwd_psum_.assign(ms_, 0);
  ms_fw_send_.assign(ms_, 0);
  ms_fw_recv_.assign(ms_, 0);
  ms_fold_.assign(ms_, 0);
  ms_win_.assign(ms_, 0);
  ms_act_.resize(ms_);
  ms_fwin_.resize(ms_);
  ms_w_.resize(ms_);
  ms_in_.resize(ms_);
  ms_fw_link_.resize(ms_);
  n_windows_ = Yo_;
  for (int v = 0; v < g_.num_vns; ++v)
    for (int j = 0; j < g_.vn_size; ++j) {
      const int ms = v * g_.vn_size + j;
      ms_vn_[ms] = v;
      ms_nf_[ms] = g_.n_folding;
      ms_fwd_psum_[ms] = g_.folding && j == 0;
      cnt_[array_.c_conf + ms] = 1;  // configured once
    }
  const bool links = t_.T_Y == 1 && stride_ == 1 && S_ % t_.T_S == 0;
  if (links)
    for (int v = 0; v < g_.num_vns; ++v)
      for (int c = 0; c < t_.T_C; ++c)
        for (int r = 0; r < t_.T_R; ++r)
          for (int s = 0; s < t_.T_S; ++s) {
            const int ms = v * g_.vn_size + c * t_.T_R * t_.T_S + r * t_.T_S + s + shift_;
            ms_fw_send_[ms] = s > 0;
            ms_fw_recv_[ms] = s < t_.T_S - 1;
          }
}

void MaeriMachine::build_templates() {
  std::vector<int> dests;
  auto add = [&](Template& t, int a, int b, int c, int d, int e) {
    t.packets.push_back(
        TemplatePacket{a, b, c, d, e, static_cast<std::uint32_t>(t.parts.size()), 0});
    if (!std::is_sorted(dests.begin(), dests.end())) std::sort(dests.begin(), dests.end());
    dests.erase(std::unique(dests.begin(), dests.end()), dests.end());
    std::size_t i = 0;
    while (i < dests.size()) {
      const int port = dests[i] / per_port_;
      std::size_t j = i;
      while (j < dests.size() && dests[j] / per_port_ == port) ++j;
      t.parts.push_back(TemplatePart{port, static_cast<std::uint32_t>(j - i),
                                     static_cast<std::uint32_t>(t.dests.size())});
      t.dests.insert(t.dests.end(), dests.begin() + static_cast<std::ptrdiff_t>(i),
                     dests.begin() + static_cast<std::ptrdiff_t>(j));
      i = j;
    }
    t.packets.back().part_count =
        static_cast<std::uint32_t>(t.parts.size()) - t.packets.back().first_part;
  };
  const bool multicast = t_.T_N * t_.T_X * t_.T_Y > 1;
  for (int g = 0; g < t_.T_G; ++g)
    for (int k = 0; k < t_.T_K; ++k)
      for (int c = 0; c < t_.T_C; ++c)
        for (int r = 0; r < t_.T_R; ++r)
          for (int s = 0; s < t_.T_S; ++s) {
            const int base = c * t_.T_S * t_.T_R + r * t_.T_S + s + shift_;
            dests.clear();
            if (multicast) {
              for (int n = 0; n < t_.T_N; ++n)
                for (int x = 0; x < t_.T_X; ++x)
                  for (int y = 0; y < t_.T_Y; ++y)
                    dests.push_back(n * t_.T_G * t_.T_K * t_.T_X * t_.T_Y * window_ +
                                    g * t_.T_K * t_.T_X * t_.T_Y * window_ +
                                    k * t_.T_X * t_.T_Y * window_ + x * t_.T_Y * window_ +
                                    y * window_ + base);
            } else {
              dests.push_back(g * t_.T_K * window_ + k * window_ + base);
            }
            add(weight_template_, g, k, c, r, s);
          }
  const int T_R = t_.T_R, T_S = t_.T_S, T_X = t_.T_X, T_Y = t_.T_Y;
  const int y_inputs = T_S + (T_Y - 1) * stride_;
  const int x_inputs = T_R + (T_X - 1) * stride_;
  const int lanes = t_.T_N * t_.T_G * t_.T_C;
  for (int variant = 0; variant < 2; ++variant) {
    // Variant 1: a later window of a row with the multipliers' forwarding links on: only the
    // newest column is read; the others move between neighbouring multipliers.
    const int y_init = variant == 0 ? 0 : y_inputs - 1;
    Template& tmpl = input_template_[variant];
    for (int x = 0; x < x_inputs; ++x)
      for (int y = y_init; y < y_inputs; ++y) {
        for (int l = 0; l < lanes; ++l) dest_scratch_[l].clear();
        // Virtual neurons (output pixels of the tile) whose window contains input (x, y).
        const int first_i = x - (T_R - 1) < 0 ? 0 : (x - (T_R - 1)) / stride_;
        const int last_i = x / stride_;
        for (int i = first_i; i <= last_i; ++i) {
          const int fx = stride_ * i;
          if (!(fx + (T_R - 1) < x_inputs && x <= fx + T_R - 1 && x >= fx)) continue;
          const int first_j = y - (T_S - 1) < 0 ? 0 : (y - (T_S - 1)) / stride_;
          const int last_j = y / stride_;
          for (int j = first_j; j <= last_j; ++j) {
            const int fy = stride_ * j;
            if (!(fy + (T_S - 1) < y_inputs && y <= fy + T_S - 1 && y >= fy)) continue;
            const int vn = i * T_Y + j;
            const int receiver = vn * g_.vn_size + (x - fx) * T_S + (y - fy) + shift_;
            for (int n = 0; n < t_.T_N; ++n)
              for (int g = 0; g < t_.T_G; ++g)
                for (int k = 0; k < t_.T_K; ++k)
                  for (int c = 0; c < t_.T_C; ++c)
                    dest_scratch_[(n * t_.T_G + g) * t_.T_C + c].push_back(
                        n * t_.T_K * T_X * T_Y * window_ + g * t_.T_K * T_X * T_Y * window_ +
                        k * T_X * T_Y * window_ + c * T_R * T_S + receiver);
          }
        }
        for (int n = 0; n < t_.T_N; ++n)
          for (int g = 0; g < t_.T_G; ++g)
            for (int c = 0; c < t_.T_C; ++c) {
              dests = dest_scratch_[(n * t_.T_G + g) * t_.T_C + c];
              add(tmpl, x, y, n, g, c);
            }
      }
  }
  for (Template* t : {&weight_template_, &input_template_[0], &input_template_[1]}) {
    t->by_port.assign(ports_, {});
    for (std::uint32_t k = 0; k < t->packets.size(); ++k)
      for (std::uint32_t q = 0; q < t->packets[k].part_count; ++q)
        t->by_port[t->parts[t->packets[k].first_part + q].port].emplace_back(k, q);
  }
}

// ------------------------------------------------------------------------------------------
// Steady-state capture and restore

void MaeriMachine::jump(long long to_point, long long periods, std::uint64_t d_cycles,
                        const std::vector<std::uint64_t>& d_counters, long long d_opix,
                        const std::vector<long long>& d_vnat) {
  cycle_ += periods * d_cycles;
  for (std::size_t i = 0; i < cnt_.size(); ++i) cnt_[i] += periods * d_counters[i];
  opix_ += periods * d_opix;
  for (std::size_t v = 0; v < vnat_count_.size(); ++v) vnat_count_[v] += periods * d_vnat[v];
  const long long iteration = to_point / g_.iter_X;
  cX_ = static_cast<int>(to_point % g_.iter_X);
  cK_ = static_cast<int>(iteration % g_.iter_K);
  cG_ = static_cast<int>((iteration / g_.iter_K) % g_.iter_G);
  cN_ = static_cast<int>(iteration / (1LL * g_.iter_K * g_.iter_G));
  cY_ = cR_ = cS_ = cC_ = 0;
  weights_done_ = cX_ > 0;
  values_valid_ = false;
}

MaeriMachine::ControllerState MaeriMachine::controller_state() const {
  return ControllerState{cN_, cG_,          cK_,          cX_,           cY_,
                         cR_, cS_,          cC_,          weights_done_, input_finished_,
                         gb_, gate_stalls_, steps_.size()};
}

void MaeriMachine::restore_controller(const ControllerState& c) {
  cN_ = c.n, cG_ = c.g, cK_ = c.k, cX_ = c.x, cY_ = c.y, cR_ = c.r, cS_ = c.s, cC_ = c.c;
  weights_done_ = c.weights_done;
  input_finished_ = c.input_finished;
  gb_ = c.gb;
  gate_stalls_ = c.stalls;
  steps_.resize(c.steps);
}

bool MaeriMachine::replay_controller(long long cycles, long long opix_lo, long long opix_hi) {
  // memory_cycle()'s emission: the gate is open when opix_ >= iter * per_channel_.
  for (long long t = 0; t < cycles; ++t) {
    if (input_finished_) return true;
    const long long iter = 1LL * cG_ * t_.T_G * Kg_ + 1LL * cK_ * t_.T_K * t_.T_G;
    if (iter <= opix_lo / per_channel_) {
      if (!weights_done_)
        generate_weights();
      else
        generate_inputs();
    } else if (iter * per_channel_ > opix_hi) {
      gate_stalls_ += static_cast<std::uint64_t>(cycles - t);  // closed all along
      return true;
    } else {
      return false;
    }
  }
  return true;
}

CountersFile MaeriMachine::counters_file(const GlobalBufferTraffic& gb) const {
  // Each template part and each partial sum always takes the same route: the distribution
  // network's counters follow from how often each was sent.
  std::vector<std::uint64_t> routes(c_end_, 0);
  if (dn_.has_switches()) {
    const Template* templates[3] = {&weight_template_, &input_template_[0], &input_template_[1]};
    for (int t = 0; t < 3; ++t)
      for (std::size_t q = 0; q < templates[t]->parts.size(); ++q) {
        const std::uint64_t times = cnt_[part_base_[t] + q];
        if (!times) continue;
        const auto& part = templates[t]->parts[q];
        dn_.count_route(part.port, templates[t]->dests.data() + part.begin, part.count, times,
                        routes.data());
      }
    for (int ms = 0; ms < ms_; ++ms)
      if (cnt_[c_psum_to_ + ms])
        dn_.count_route(ms / per_port_, &ms, 1, cnt_[c_psum_to_ + ms], routes.data());
  }
  const std::uint64_t* c = cnt_.data();
  return assemble_counters(cycle_, dn_.section(c, routes.data()), array_.section(c),
                           rn_.section(c, acc_ ? &acc_buf_ : nullptr), gb, bus_.section(c));
}

}  // namespace telar::sim::maeri
