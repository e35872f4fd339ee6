#include "sim/sparse_machine.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace telar::sim::sparse {

SparseMachine::SparseMachine(const HardwareConfig& hw, const SparseEngineOptions& options)
    : hw_(hw), fast_(options.fast), values_(options.values) {
  ms_ = hw.ms_size;
  ports_ = hw.dn_bw;
  per_port_ = ms_ / ports_;
  dn_levels_ = log2_of(per_port_);
  dn_tree_ = per_port_ > 1;
  acc_ = hw.accumulation_buffer;
  lines_ = hw.rn_bw;
  levels_ = log2_of(ms_);

  in_fifo_.resize(ports_);
  psum_fifo_.resize(ports_);
  in_dests_.resize(ports_);
  psum_dests_.resize(ports_);
  latch_full_.assign(ports_, 0);
  latch_kind_.assign(ports_, kWeight);
  latch_value_.assign(ports_, 0.0f);
  latch_dests_.resize(ports_);

  ms_vn_.assign(ms_, -1);
  ms_nf_.assign(ms_, 1);
  ms_direct_.assign(ms_, 0);
  ms_act_.resize(ms_);
  ms_w_.resize(ms_);
  ms_in_.resize(ms_);

  const int nodes = ms_ - 1;
  nd_.resize(nodes);
  node_fw_link_.assign(nodes, -1);
  nd_even_.assign(nodes, 0);
  for (int l = 0; l < levels_; ++l)
    for (int j = 0; j < (1 << l); ++j) nd_even_[ReduceTree::index(l, j)] = j % 2 == 0;
  for (int l = 1; l < levels_; ++l)
    for (int j = 2; j < (1 << l); j += 2) {
      const int id = static_cast<int>(fw_link_.size());
      fw_link_.emplace_back();
      node_fw_link_[ReduceTree::index(l, j - 1)] = id;
      node_fw_link_[ReduceTree::index(l, j)] = id;
    }
  parent_link_.assign(nodes, -1);
  for (int l = 1; l < levels_; ++l)
    for (int j = 0; j < (1 << l); ++j)
      parent_link_[ReduceTree::index(l, j)] = ReduceTree::index(l - 1, j / 2) * 2 + (j % 2);
  nd_out_.assign(nodes, Out::Parent);
  nd_out_index_.assign(nodes, -1);

  wiring_ = wire_collection_bus(ReduceNetwork::Art, ms_, lines_);
  bus_ports_ = wiring_.ports_per_line;
  bus_.resize(lines_, bus_ports_);
  acc_of_node_.assign(nodes, -1);
  for (int k = 0; k < static_cast<int>(wiring_.order.size()); ++k)
    acc_of_node_[wiring_.order[k]] = k;
  if (acc_) {
    acc_in_.resize(nodes);
    acc_fifo_.resize(nodes);
    acc_reg_.assign(nodes, Psum{0, 0});
    acc_count_.assign(nodes, 0);
    acc_bus_.assign(nodes, 0);
    for (int k = 0; k < nodes; ++k) {
      const int node = wiring_.order[k];
      acc_bus_[k] = wiring_.line[node] * bus_ports_ + wiring_.port[node];
    }
  }

  const int dn_switches = per_port_ - 1;
  std::size_t off = 0;
  auto take = [&](std::size_t n) {
    const std::size_t o = off;
    off += n;
    return o;
  };
  c_dn_top_ = take(ports_);
  c_dn_wire_ = take(static_cast<std::size_t>(ports_) * 2 * dn_switches);
  c_dn_uni_ = take(static_cast<std::size_t>(ports_) * dn_switches);
  c_dn_bc_ = take(static_cast<std::size_t>(ports_) * dn_switches);
  c_mn_wire_ = take(ms_ - 1);
  c_mult_ = take(ms_);
  c_fwd_psum_ = take(ms_);
  c_ms_conf_ = take(ms_);
  c_rn_wire_ = take(2 * static_cast<std::size_t>(nodes));
  c_rn_fw_ = take(nodes);
  c_add21_ = take(nodes);
  c_add31_ = take(nodes);
  c_add_conf_ = take(nodes);
  c_acc_wire_ = take(acc_ ? nodes : 0);
  c_acc_rd_ = take(acc_ ? nodes : 0);
  c_acc_wr_ = take(acc_ ? nodes : 0);
  c_acc_add_ = take(acc_ ? nodes : 0);
  c_cb_in_ = take(static_cast<std::size_t>(lines_) * bus_ports_);
  c_cb_out_ = take(lines_);
  c_gb_w_ = take(1);
  c_gb_i_ = take(1);
  c_gb_pr_ = take(1);
  c_gb_pw_ = take(1);
  c_end_ = off;
  cnt_.assign(c_end_, 0);
}

// ------------------------------------------------------------------------------------------
// Fabric

// Reconfigures the array for contiguous neurons of the given sizes from multiplier 0 on. A
// neuron whose `psum_first` is set keeps its first multiplier for the partial sum read back
// from the Global Buffer. Every multiplier reuses `n_folding` weights; with the accumulation
// buffer every neuron's output accumulates `n_folding` partial sums.
void SparseMachine::configure(const std::vector<int>& sizes,
                              const std::vector<std::uint8_t>& psum_first, int n_folding) {
  std::fill(ms_vn_.begin(), ms_vn_.end(), -1);
  std::fill(ms_direct_.begin(), ms_direct_.end(), 0);
  std::fill(ms_nf_.begin(), ms_nf_.end(), n_folding);
  for (int i = 0; i < ms_; ++i) {
    ms_act_[i].clear();
    ms_w_[i].clear();
  }
  int ms = 0;
  for (std::size_t v = 0; v < sizes.size(); ++v)
    for (int j = 0; j < sizes[v]; ++j, ++ms) {
      ms_vn_[ms] = static_cast<int>(v);
      ms_direct_[ms] = psum_first[v] && j == 0;
      ++cnt_[c_ms_conf_ + ms];
    }
  acc_folds_ = n_folding;
  ++reconfigurations_;
  if (acc_) std::fill(acc_count_.begin(), acc_count_.end(), 0);
  if (sizes != configured_sizes_) {
    configured_sizes_ = sizes;
    tree_ = compile_reduce_tree(ReduceNetwork::Art, ms_, sizes);
    const int nodes = tree_.node_count();
    for (int id = 0; id < nodes; ++id) {
      const AdderConfig& c = tree_.nodes[id];
      if (c.to_memory) {
        nd_out_[id] = Out::Memory;
        nd_out_index_[id] =
            acc_ ? acc_of_node_[id] : wiring_.line[id] * bus_ports_ + wiring_.port[id];
      } else if (id == 0) {
        nd_out_[id] = Out::Lookup;
      } else {
        nd_out_[id] = Out::Parent;
        nd_out_index_[id] = parent_link_[id];
      }
    }
    // Adders run root first, then level by level; a pair joined by an active augmented link
    // runs receiver first.
    node_order_.assign(1, 0);
    for (int l = 1; l < levels_; ++l) {
      int j = 0;
      while (j < (1 << l)) {
        const int id = ReduceTree::index(l, j);
        const AdderConfig& c = tree_.nodes[id];
        if (c.link != LinkDir::None && j + 1 < (1 << l)) {
          const int next = ReduceTree::index(l, j + 1);
          if (c.link == LinkDir::Send) {
            node_order_.push_back(next);
            node_order_.push_back(id);
          } else {
            node_order_.push_back(id);
            node_order_.push_back(next);
          }
          j += 2;
        } else {
          node_order_.push_back(id);
          ++j;
        }
      }
    }
  }
  for (int id = 0; id < tree_.node_count(); ++id)
    if (tree_.nodes[id].configured) ++cnt_[c_add_conf_ + id];
}

// A packet the controller sends, split over the read ports of its destinations (ascending).
void SparseMachine::push_to_ports(Kind kind, float value, const int* dests, std::uint32_t count) {
  std::uint32_t i = 0;
  while (i < count) {
    const int port = dests[i] / per_port_;
    std::uint32_t j = i;
    while (j < count && dests[j] / per_port_ == port) ++j;
    Ring<PortPacket>& fifo = kind == kPsum ? psum_fifo_[port] : in_fifo_[port];
    Ring<int>& ring = kind == kPsum ? psum_dests_[port] : in_dests_[port];
    fifo.push(PortPacket{kind, value, j - i});
    for (std::uint32_t k = i; k < j; ++k) ring.push(dests[k]);
    i = j;
  }
}

void SparseMachine::receive_results() {
  if (mem_in_.pending) mem_in_.take([&](const Psum& p) { write_fifo_.push(p); });
  for (int l = 0; l < lines_; ++l)
    if (bus_.out[l].pending) bus_.out[l].take([&](const Psum& p) { write_fifo_.push(p); });
}

void SparseMachine::send_ports() {
  for (int port = 0; port < ports_; ++port) {
    Ring<PortPacket>* fifo = !psum_fifo_[port].empty() ? &psum_fifo_[port] : &in_fifo_[port];
    Ring<int>* ring = fifo == &psum_fifo_[port] ? &psum_dests_[port] : &in_dests_[port];
    if (fifo->empty()) continue;
    const PortPacket p = fifo->pop();
    std::vector<int>& dests = latch_dests_[port];
    dests.resize(p.count);
    for (std::uint32_t k = 0; k < p.count; ++k) dests[k] = ring->pop();
    ++cnt_[c_dn_top_ + port];
    if (dn_tree_) {
      count_dn_route(port, dests.data(), p.count);
      latch_full_[port] = 1;
      latch_kind_[port] = p.kind;
      latch_value_[port] = p.value;
    } else {
      deliver(p.kind, p.value, dests.data(), p.count);
    }
  }
}

void SparseMachine::deliver(Kind kind, float value, const int* dests, std::uint32_t count) {
  for (std::uint32_t i = 0; i < count; ++i) {
    MsInput& in = ms_in_[dests[i]];
    in.pending = true;
    in.kind = kind;
    in.value = value;
  }
}

void SparseMachine::count_dn_route(int port, const int* dests, std::uint32_t count) {
  // A switch of the port's binary tree routes left and/or right where a destination lies.
  const int base = port * per_port_;
  const int switches = per_port_ - 1;
  struct Frame {
    int level, j;
    std::uint32_t lo, hi;
  };
  Frame stack[64];
  int top = 0;
  stack[top++] = {0, 0, 0, count};
  while (top) {
    const Frame f = stack[--top];
    const int span = per_port_ >> f.level;
    const int mid = base + f.j * span + span / 2;
    std::uint32_t split = f.lo;
    while (split < f.hi && dests[split] < mid) ++split;
    const bool left = split > f.lo, right = f.hi > split;
    const int sw = (1 << f.level) - 1 + f.j;
    const std::size_t at = static_cast<std::size_t>(port) * switches + sw;
    ++cnt_[(left && right ? c_dn_bc_ : c_dn_uni_) + at];
    const std::size_t wire = c_dn_wire_ + static_cast<std::size_t>(port) * 2 * switches +
                             static_cast<std::size_t>(2 * sw);
    if (left) {
      ++cnt_[wire];
      if (f.level + 1 < dn_levels_) stack[top++] = {f.level + 1, 2 * f.j, f.lo, split};
    }
    if (right) {
      ++cnt_[wire + 1];
      if (f.level + 1 < dn_levels_) stack[top++] = {f.level + 1, 2 * f.j + 1, split, f.hi};
    }
  }
}

void SparseMachine::bus_cycle() { bus_.cycle(cnt_.data() + c_cb_out_); }

void SparseMachine::accumulator_cycle(int k) {
  Link& in = acc_in_[k];
  if (in.pending) in.take([&](const Psum& v) { acc_fifo_[k].push(v); });
  if (acc_fifo_[k].empty()) return;
  const Psum v = acc_fifo_[k].pop();
  if (acc_count_[k] == 0) {
    acc_reg_[k] = v;
    ++cnt_[c_acc_wr_ + k];
  } else {
    if (acc_reg_[k].vn != v.vn) internal("two neurons meet in one accumulator");
    acc_reg_[k].value += v.value;
    ++cnt_[c_acc_add_ + k];
    ++cnt_[c_acc_rd_ + k];
    ++cnt_[c_acc_wr_ + k];
  }
  if (acc_count_[k] == acc_folds_ - 1) {
    acc_count_[k] = 0;
    bus_.in[acc_bus_[k]].send_one(acc_reg_[k]);
    ++cnt_[c_cb_in_ + acc_bus_[k]];
  } else {
    ++acc_count_[k];
  }
}

void SparseMachine::node_cycle(int id) {
  const AdderConfig& c = tree_.nodes[id];
  Node& nd = nd_[id];
  const int fw = node_fw_link_[id];
  if (nd.in[0].pending) nd.in[0].take([&](const Psum& v) { nd.left.push(v); });
  if (nd.in[1].pending) nd.in[1].take([&](const Psum& v) { nd.right.push(v); });
  if (c.link == LinkDir::Receive && fw >= 0 && fw_link_[fw].pending)
    fw_link_[fw].take([&](const Psum& v) { nd.fw.push(v); });
  if (nd.left.empty() && nd.right.empty()) return;
  out_fw_.clear();
  out_ps_.clear();
  Ring<Psum>& L = nd.left;
  Ring<Psum>& Rt = nd.right;
  const bool fw_enabled = c.link != LinkDir::None;
  std::vector<Psum>& straight = fw_enabled ? out_fw_ : out_ps_;
  switch (c.mode) {
    case AdderMode::Add21:
      if (!L.empty() && Rt.empty() && !c.right_enabled) straight.push_back(L.pop());
      if (!Rt.empty() && L.empty() && !c.left_enabled) straight.push_back(Rt.pop());
      if (!L.empty() && !Rt.empty()) {
        Psum a = L.pop();
        const Psum b = Rt.pop();
        if (a.vn != b.vn) internal("two neurons meet in one adder");
        a.value += b.value;
        ++cnt_[c_add21_ + id];
        straight.push_back(a);
      }
      break;
    case AdderMode::Add31:
      if (!L.empty() && !Rt.empty() && !nd.fw.empty()) {
        Psum a = L.pop();
        const Psum b = Rt.pop(), f = nd.fw.pop();
        if (a.vn != b.vn || a.vn != f.vn) internal("two neurons meet in one adder");
        a.value += b.value;
        a.value += f.value;
        ++cnt_[c_add31_ + id];
        out_ps_.push_back(a);
      }
      break;
    case AdderMode::Add11Fw11:
      if (nd_even_[id]) {
        if (!L.empty()) out_fw_.push_back(L.pop());
        if (!Rt.empty()) out_ps_.push_back(Rt.pop());
      } else {
        if (!L.empty()) out_ps_.push_back(L.pop());
        if (!Rt.empty()) out_fw_.push_back(Rt.pop());
      }
      break;
    case AdderMode::Fw22:
      while (!L.empty()) out_ps_.push_back(L.pop());
      while (!Rt.empty()) out_ps_.push_back(Rt.pop());
      break;
    case AdderMode::Fold:
      internal("folding node in an ART");
  }
  if (!out_fw_.empty() && fw >= 0) {
    fw_link_[fw].send(out_fw_.data(), out_fw_.size());
    ++cnt_[c_rn_fw_ + id];
  }
  if (out_ps_.empty()) return;
  switch (nd_out_[id]) {
    case Out::Memory:
      if (acc_) {
        acc_in_[nd_out_index_[id]].send(out_ps_.data(), out_ps_.size());
        ++cnt_[c_acc_wire_ + nd_out_index_[id]];
      } else {
        bus_.in[nd_out_index_[id]].send(out_ps_.data(), out_ps_.size());
        ++cnt_[c_cb_in_ + nd_out_index_[id]];
      }
      break;
    case Out::Lookup:
      lookup_in_.send(out_ps_.data(), out_ps_.size());
      break;
    case Out::Parent:
      child_link(nd_out_index_[id]).send(out_ps_.data(), out_ps_.size());
      ++cnt_[c_rn_wire_ + nd_out_index_[id]];
      break;
  }
}

void SparseMachine::multiplier_cycle(int i) {
  MsInput& in = ms_in_[i];
  if (in.pending) {
    in.pending = false;
    if (ms_vn_[i] < 0) internal("a value reached an unconfigured multiplier");
    if (in.kind == kInput) {
      ms_act_[i].push(Act{in.value, false});
    } else if (in.kind == kWeight) {
      if (static_cast<int>(ms_w_[i].size()) == ms_nf_[i]) ms_w_[i].clear();
      ms_w_[i].push(in.value);
    } else {
      ms_act_[i].push(Act{in.value, true});
      ++cnt_[c_fwd_psum_ + i];
    }
  }
  if (ms_act_[i].empty()) return;
  const int leaf = ReduceTree::index(levels_ - 1, i / 2) * 2 + (i % 2);
  if (ms_direct_[i]) {  // passes the partial sum from the Global Buffer into its neuron
    child_link(leaf).send_one(Psum{ms_act_[i].pop().value, ms_vn_[i]});
    ++cnt_[c_rn_wire_ + leaf];
    return;
  }
  if (static_cast<int>(ms_w_[i].size()) < ms_nf_[i]) return;
  const float activation = ms_act_[i].pop().value;
  const float weight = ms_w_[i].front();
  ms_w_[i].rotate();
  child_link(leaf).send_one(Psum{activation * weight, ms_vn_[i]});
  ++cnt_[c_rn_wire_ + leaf];
  ++cnt_[c_mult_ + i];
}

void SparseMachine::fabric_cycle() {
  bus_cycle();
  if (acc_)
    for (int k = 0; k < ms_ - 1; ++k) accumulator_cycle(k);
  for (int id : node_order_) node_cycle(id);
  if (lookup_in_.pending) {  // the lookup table passes the root's results to the controller
    std::swap(mem_in_, lookup_in_);
    lookup_in_.pending = false;
  }
  for (int i = 0; i < ms_; ++i) multiplier_cycle(i);
  if (dn_tree_)
    for (int port = 0; port < ports_; ++port) {
      if (!latch_full_[port]) continue;
      latch_full_[port] = 0;
      deliver(latch_kind_[port], latch_value_[port], latch_dests_[port].data(),
              static_cast<std::uint32_t>(latch_dests_[port].size()));
    }
}

// Nothing in flight anywhere (only the bus arbiters' positions carry over).
bool SparseMachine::idle() const {
  if (!write_fifo_.empty() || lookup_in_.pending || mem_in_.pending) return false;
  for (int p = 0; p < ports_; ++p)
    if (!in_fifo_[p].empty() || !psum_fifo_[p].empty() || latch_full_[p]) return false;
  for (int i = 0; i < ms_; ++i)
    if (ms_in_[i].pending || !ms_act_[i].empty()) return false;
  for (const Node& n : nd_)
    if (n.in[0].pending || n.in[1].pending || !n.left.empty() || !n.right.empty() || !n.fw.empty())
      return false;
  for (const Link& l : fw_link_)
    if (l.pending) return false;
  for (std::size_t k = 0; k < acc_in_.size(); ++k)
    if (acc_in_[k].pending || !acc_fifo_[k].empty()) return false;
  return bus_.idle();
}

EngineRun SparseMachine::finish(std::uint64_t stepped, int skips) {
  EngineRun out;
  out.cycles = cycle_;
  out.simulated_cycles = stepped;
  out.skips = skips;
  out.reconfigurations = reconfigurations_;
  out.gb = traffic();
  for (int i = 0; i < ms_; ++i) out.multiplications += cnt_[c_mult_ + i];
  out.counters = counters_file();
  out.output_from_fabric = skips == 0;
  if (values_) {
    out.output = std::move(output_);
    out.from_fabric = std::move(from_fabric_);
  }
  return out;
}

CountersFile SparseMachine::counters_file() const {
  CountersFile f;
  f.cycles = cycle_;
  auto line = [](std::string comp, OpList ops) {
    return CounterLine{std::move(comp), std::move(ops)};
  };
  const int dn_switches = per_port_ - 1;
  CounterSection dn{"DSNetwork", {}};
  for (int p = 0; p < ports_; ++p)
    dn.lines.push_back(line("DN_WIRE", {{"WRITE", cnt_[c_dn_top_ + p]}, {"READ", 0}}));
  for (int p = 0; p < ports_; ++p) {
    for (int w = 0; w < 2 * dn_switches; ++w)
      dn.lines.push_back(
          line("DN_WIRE",
               {{"WRITE", cnt_[c_dn_wire_ + static_cast<std::size_t>(p) * 2 * dn_switches + w]},
                {"READ", 0}}));
    for (int s = 0; s < dn_switches; ++s)
      dn.lines.push_back(line(
          "SWITCH",
          {{"ROUTE_UNICAST", cnt_[c_dn_uni_ + static_cast<std::size_t>(p) * dn_switches + s]},
           {"ROUTE_BROADCAST", cnt_[c_dn_bc_ + static_cast<std::size_t>(p) * dn_switches + s]}}));
  }
  CounterSection mn{"MSNetwork", {}};
  for (int i = 0; i < ms_ - 1; ++i)
    mn.lines.push_back(line("MN_WIRE", {{"WRITE", cnt_[c_mn_wire_ + i]}, {"READ", 0}}));
  for (int i = 0; i < ms_; ++i)
    mn.lines.push_back(line("MULTIPLIER", {{"MULTIPLICATION", cnt_[c_mult_ + i]},
                                           {"FORWARD_PSUM", cnt_[c_fwd_psum_ + i]},
                                           {"CONFIGURATION", cnt_[c_ms_conf_ + i]}}));
  CounterSection rn{"ReduceNetwork", {}};
  const int nodes = ms_ - 1;
  for (int w = 0; w < 2 * nodes; ++w)
    rn.lines.push_back(line("RN_WIRE", {{"WRITE", cnt_[c_rn_wire_ + w]}, {"READ", 0}}));
  for (std::size_t link = 0; link < fw_link_.size(); ++link) {
    std::uint64_t writes = 0;
    for (int id = 0; id < nodes; ++id)
      if (node_fw_link_[id] == static_cast<int>(link)) writes += cnt_[c_rn_fw_ + id];
    rn.lines.push_back(line("RN_WIRE", {{"WRITE", writes}, {"READ", 0}}));
  }
  for (int id = 0; id < nodes; ++id)
    rn.lines.push_back(line("ADDER", {{"ADD_2_1", cnt_[c_add21_ + id]},
                                      {"ADD_3_1", cnt_[c_add31_ + id]},
                                      {"CONFIGURATION", cnt_[c_add_conf_ + id]}}));
  if (acc_) {
    for (int k = 0; k < nodes; ++k)
      rn.lines.push_back(line("RN_WIRE", {{"WRITE", cnt_[c_acc_wire_ + k]}, {"READ", 0}}));
    for (int k = 0; k < nodes; ++k)
      rn.lines.push_back(line("ACCUMULATOR", {{"READ", cnt_[c_acc_rd_ + k]},
                                              {"WRITE", cnt_[c_acc_wr_ + k]},
                                              {"ADD", cnt_[c_acc_add_ + k]}}));
  }
  const GlobalBufferTraffic gb = traffic();
  CounterSection buffer{"GlobalBuffer",
                        {line("GLOBALBUFFER", {{"READ", gb.reads()}, {"WRITE", gb.writes()}})}};
  CounterSection cb{"CollectionBus", {}};
  for (int l = 0; l < lines_; ++l) {
    for (int p = 0; p < bus_ports_; ++p)
      cb.lines.push_back(line(
          "CB_WIRE",
          {{"WRITE", cnt_[c_cb_in_ + static_cast<std::size_t>(l) * bus_ports_ + p]}, {"READ", 0}}));
    cb.lines.push_back(line("CB_WIRE", {{"WRITE", cnt_[c_cb_out_ + l]}, {"READ", 0}}));
  }
  for (CounterSection* s : {&dn, &mn, &rn, &buffer, &cb}) f.sections.push_back(std::move(*s));
  return f;
}


}  // namespace telar::sim::sparse
