#include "sim/sparse_machine.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace telar::sim::sparse {

SparseMachine::SparseMachine(const HardwareConfig& hw, const SparseEngineOptions& options)
    : hw_(hw), fast_(options.fast), values_(options.values) {
  ms_ = hw.ms_size;
  ports_ = hw.dn_bw;
  per_port_ = ms_ / ports_;
  acc_ = hw.accumulation_buffer;
  lines_ = hw.rn_bw;

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

  CounterLayout layout;
  dn_.build(ports_, ms_, layout);
  array_.build(ms_, layout);
  wiring_ = wire_collection_bus(ReduceNetwork::Art, ms_, lines_);
  bus_ports_ = wiring_.ports_per_line;
  bus_.build(lines_, bus_ports_, layout);
  rn_.build(ReduceNetwork::Art, ms_, wiring_, acc_, layout);
  if (acc_) {
    acc_buf_.build(ms_ - 1, layout);
    for (int k = 0; k < ms_ - 1; ++k) {
      const int node = wiring_.order[k];
      acc_buf_.bus_input[k] = wiring_.line[node] * bus_ports_ + wiring_.port[node];
    }
  }
  c_gb_w_ = layout.take(1);
  c_gb_i_ = layout.take(1);
  c_gb_pr_ = layout.take(1);
  c_gb_pw_ = layout.take(1);
  cnt_.assign(layout.size(), 0);
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
      ++cnt_[array_.c_conf + ms];
    }
  acc_folds_ = n_folding;
  ++reconfigurations_;
  if (acc_) std::fill(acc_buf_.count.begin(), acc_buf_.count.end(), 0);
  if (sizes != configured_sizes_) {
    configured_sizes_ = sizes;
    rn_.configure(compile_reduce_tree(ReduceNetwork::Art, ms_, sizes));
  }
  rn_.count_configuration(cnt_.data());
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
    ++cnt_[dn_.c_top + port];
    if (dn_.has_switches()) {
      dn_.count_route(port, dests.data(), p.count, 1, cnt_.data());
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

void SparseMachine::multiplier_cycle(int i) {
  if (ms_in_[i].pending && ms_vn_[i] < 0) internal("a value reached an unconfigured multiplier");
  receive(ms_in_[i], ms_act_[i], ms_w_[i], ms_nf_[i], cnt_[array_.c_fwd_psum + i]);
  if (ms_act_[i].empty()) return;
  const int leaf = rn_.leaf_link(i);
  if (ms_direct_[i]) {  // passes the partial sum from the Global Buffer into its neuron
    rn_.child_link(leaf).send_one(Psum{ms_act_[i].pop().value, ms_vn_[i]});
    ++cnt_[rn_.c_wire + leaf];
    return;
  }
  if (static_cast<int>(ms_w_[i].size()) < ms_nf_[i]) return;
  const float activation = ms_act_[i].pop().value;
  const float weight = ms_w_[i].front();
  ms_w_[i].rotate();
  rn_.child_link(leaf).send_one(Psum{activation * weight, ms_vn_[i]});
  ++cnt_[rn_.c_wire + leaf];
  ++cnt_[array_.c_mult + i];
}

bool SparseMachine::fabric_cycle() {
  send_ports();
  bus_.cycle(cnt_.data());
  rn_.cycle(acc_folds_, cnt_.data(), bus_, acc_ ? &acc_buf_ : nullptr,
            [this]() { internal("two neurons meet in one adder or accumulator"); });
  if (rn_.lookup_in.pending) {  // the lookup table passes the root's results to the controller
    std::swap(mem_in_, rn_.lookup_in);
    rn_.lookup_in.pending = false;
  }
  for (int i = 0; i < ms_; ++i) multiplier_cycle(i);
  if (dn_.has_switches())
    for (int port = 0; port < ports_; ++port) {
      if (!latch_full_[port]) continue;
      latch_full_[port] = 0;
      deliver(latch_kind_[port], latch_value_[port], latch_dests_[port].data(),
              static_cast<std::uint32_t>(latch_dests_[port].size()));
    }
  return execution_finished_;
}

// Nothing in flight anywhere (only the bus arbiters' positions carry over).
bool SparseMachine::idle() const {
  if (!write_fifo_.empty() || mem_in_.pending) return false;
  for (int p = 0; p < ports_; ++p)
    if (!in_fifo_[p].empty() || !psum_fifo_[p].empty() || latch_full_[p]) return false;
  for (int i = 0; i < ms_; ++i)
    if (ms_in_[i].pending || !ms_act_[i].empty()) return false;
  return rn_.idle() && acc_buf_.idle() && bus_.idle();
}

const SparseMachine::PhaseEffect* SparseMachine::repeat_phase(std::vector<std::uint64_t> words) {
  for (int rr : bus_.rr) words.push_back(static_cast<std::uint64_t>(rr));
  const std::uint64_t key = phases_.key(words);
  const PhaseEffect* e = phases_.find(key, words);
  if (!e) {
    recording_ = PhaseRecording{key, std::move(words), cycle_, cnt_};
    return nullptr;
  }
  cycle_ += e->cycles;
  for (std::size_t i = 0; i < cnt_.size(); ++i) cnt_[i] += e->d_counters[i];
  bus_.rr = e->bus_rr_after;
  ++reconfigurations_;
  return e;
}

void SparseMachine::end_phase() {
  if (!recording_) return;
  PhaseEffect e{cycle_ - recording_->cycle, cnt_, bus_.rr};
  for (std::size_t i = 0; i < cnt_.size(); ++i) e.d_counters[i] -= recording_->counters[i];
  phases_.remember(recording_->key, recording_->state, std::move(e));
  recording_.reset();
}

void SparseMachine::fabric_state(std::vector<std::uint64_t>& s) const {
  s.clear();
  s.reserve(8192);
  auto put = [&](std::uint64_t v) { s.push_back(v); };
  auto put_ports = [&](const Ring<PortPacket>& packets, const Ring<int>& dests) {
    put(packets.size());
    for (std::size_t i = 0; i < packets.size(); ++i)
      put(static_cast<std::uint64_t>(packets.at(i).kind) << 32 | packets.at(i).count);
    for (std::size_t i = 0; i < dests.size(); ++i) put(static_cast<std::uint64_t>(dests.at(i)));
  };
  for (int p = 0; p < ports_; ++p) {
    put_ports(in_fifo_[p], in_dests_[p]);
    put_ports(psum_fifo_[p], psum_dests_[p]);
    put(latch_full_[p]);
    if (!latch_full_[p]) continue;
    put(latch_kind_[p]);
    put(latch_dests_[p].size());
    for (int d : latch_dests_[p]) put(static_cast<std::uint64_t>(d));
  }
  for (int i = 0; i < ms_; ++i) {
    put(ms_in_[i].pending ? 1 + ms_in_[i].kind : 0);
    put(ms_w_[i].size());
    put(ms_act_[i].size());
    for (std::size_t k = 0; k < ms_act_[i].size(); ++k) put(ms_act_[i].at(k).psum);
  }
  rn_.state(s);
  acc_buf_.put_state(s);
  bus_.put_inputs(s);
  for (int l = 0; l < lines_; ++l) {
    put(static_cast<std::uint64_t>(bus_.rr[l]));
    put_link(s, bus_.out[l]);
  }
  put_link(s, mem_in_);
  put_ring(s, write_fifo_);
}

EngineRun SparseMachine::finish(std::uint64_t stepped, int skips) {
  EngineRun out;
  out.cycles = cycle_;
  out.simulated_cycles = stepped;
  out.skips = skips;
  out.reconfigurations = reconfigurations_;
  out.gb = traffic();
  for (int i = 0; i < ms_; ++i) out.multiplications += cnt_[array_.c_mult + i];
  out.counters = counters_file();
  out.output_from_fabric = skips == 0;
  if (values_) {
    out.output = std::move(output_);
    out.from_fabric = std::move(from_fabric_);
  }
  return out;
}

CountersFile SparseMachine::counters_file() const {
  const std::uint64_t* c = cnt_.data();
  return assemble_counters(cycle_, dn_.section(c, c), array_.section(c),
                           rn_.section(c, acc_ ? &acc_buf_ : nullptr), traffic(), bus_.section(c));
}

}  // namespace telar::sim::sparse
