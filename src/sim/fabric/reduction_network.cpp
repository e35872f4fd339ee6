#include "sim/fabric/reduction_network.hpp"

#include <utility>

#include "sim/fabric/state_words.hpp"

namespace telar::sim::fabric {

void ReductionNetwork::build(ReduceNetwork kind, int multipliers, const BusWiring& wiring,
                             bool accumulators, CounterLayout& counters) {
  fen = kind == ReduceNetwork::Fen;
  levels = log2_of(multipliers);
  const int count = multipliers - 1 + (fen ? 1 : 0);
  nodes.assign(static_cast<std::size_t>(count), Node{});
  fw_link_of.assign(count, -1);
  even.assign(count, 0);
  for (int l = 0; l < levels; ++l)
    for (int j = 0; j < (1 << l); ++j) even[ReduceTree::index(l, j)] = j % 2 == 0;
  // Augmented links join (l, j-1) and (l, j) for even j >= 2.
  fw_links.clear();
  for (int l = 1; l < levels; ++l)
    for (int j = 2; j < (1 << l); j += 2) {
      const int link = static_cast<int>(fw_links.size());
      fw_links.emplace_back();
      fw_link_of[ReduceTree::index(l, j - 1)] = link;
      fw_link_of[ReduceTree::index(l, j)] = link;
    }
  up_links.assign(count, Link{});
  fold_inputs.assign(count, {});
  if (fen) {
    const std::vector<int> target = fen_up_targets(multipliers);
    for (int l = 0; l < levels; ++l)
      for (int j = 0; j < (1 << l); ++j) {
        const int id = ReduceTree::index(l, j);
        if (target[id] >= 0) fold_inputs[target[id]].push_back(id);
      }
  }
  memory_link.assign(count, -1);
  for (int id = 0; id < count && id < static_cast<int>(wiring.line.size()); ++id)
    memory_link[id] = wiring.line[id] * wiring.ports_per_line + wiring.port[id];
  if (accumulators)
    for (int k = 0; k < static_cast<int>(wiring.order.size()); ++k)
      memory_link[wiring.order[k]] = k;
  out.assign(count, Out::Parent);
  out_index.assign(count, -1);
  c_wire = counters.take(2 * static_cast<std::size_t>(count));
  c_fw = counters.take(count);
  c_up = counters.take(count);
  c_add21 = counters.take(count);
  c_add31 = counters.take(count);
  c_conf = counters.take(count);
}

void ReductionNetwork::configure(ReduceTree compiled) {
  tree = std::move(compiled);
  const int count = tree.node_count();
  for (int id = 0; id < count; ++id) {
    const AdderConfig& c = tree.nodes[id];
    if (c.to_memory) {
      out[id] = Out::Memory;
      out_index[id] = memory_link[id];
    } else if (c.to_fold_node) {
      out[id] = Out::Fold;
      out_index[id] = id;
    } else if (id == 0 || (fen && id == tree.fen_special())) {
      out[id] = Out::Lookup;  // (the FEN's folding node always writes to memory)
    } else {
      int l = 0;  // the parent of (l, j) is (l-1, j/2), side j%2
      while (ReduceTree::index(l + 1, 0) <= id) ++l;
      const int j = id - ReduceTree::index(l, 0);
      out[id] = Out::Parent;
      out_index[id] = ReduceTree::index(l - 1, j / 2) * 2 + (j % 2);
    }
  }
  order.assign(1, 0);
  if (fen) order.push_back(tree.fen_special());
  for (int l = 1; l < levels; ++l) {
    int j = 0;
    while (j < (1 << l)) {
      const int id = ReduceTree::index(l, j);
      const AdderConfig& c = tree.nodes[id];
      if (c.link != LinkDir::None && j + 1 < (1 << l)) {
        const int next = ReduceTree::index(l, j + 1);
        order.push_back(c.link == LinkDir::Send ? next : id);
        order.push_back(c.link == LinkDir::Send ? id : next);
        j += 2;
      } else {
        order.push_back(id);
        ++j;
      }
    }
  }
}

void ReductionNetwork::count_configuration(std::uint64_t* counters) const {
  for (int id = 0; id < tree.node_count(); ++id)
    if (tree.nodes[id].configured) ++counters[c_conf + id];
}

bool ReductionNetwork::idle() const {
  if (lookup_in.pending) return false;
  for (const Node& n : nodes)
    if (n.in[0].pending || n.in[1].pending || !n.left.empty() || !n.right.empty() ||
        !n.fw.empty() || !n.fold.empty())
      return false;
  for (const Link& l : fw_links)
    if (l.pending) return false;
  for (const Link& l : up_links)
    if (l.pending) return false;
  return true;
}

void ReductionNetwork::state(std::vector<std::uint64_t>& s) const {
  for (const Node& n : nodes) {
    put_link(s, n.in[0]);
    put_link(s, n.in[1]);
  }
  for (const Link& l : fw_links) put_link(s, l);
  for (const Link& l : up_links) put_link(s, l);
  for (const Node& n : nodes) {
    put_ring(s, n.left);
    put_ring(s, n.right);
    put_ring(s, n.fw);
    put_ring(s, n.fold);
    s.push_back(static_cast<std::uint64_t>(n.fold_count));
  }
  put_link(s, lookup_in);
}

CounterSection ReductionNetwork::section(const std::uint64_t* counters,
                                         const AccumulationBuffer* acc) const {
  CounterSection rn{"ReduceNetwork", {}};
  const std::size_t count = nodes.size();
  reserve_lines(rn, 4 * count + fw_links.size() +
                        (acc ? 2 * static_cast<std::size_t>(acc->size()) : 0));
  add_wires(rn, "RN_WIRE", counters + c_wire, 2 * count);
  std::vector<std::uint64_t> fw_writes(fw_links.size(), 0);  // both ends write on a link
  for (std::size_t id = 0; id < count; ++id)
    if (fw_link_of[id] >= 0)
      fw_writes[static_cast<std::size_t>(fw_link_of[id])] += counters[c_fw + id];
  add_wires(rn, "RN_WIRE", fw_writes.data(), fw_writes.size());
  if (fen)
    for (std::size_t id = 0; id < count; ++id)
      if (static_cast<int>(id) != tree.fen_special())
        add_wires(rn, "RN_WIRE", counters + c_up + id, 1);
  for (std::size_t id = 0; id < count; ++id)
    rn.lines.push_back(CounterLine{"ADDER",
                                   {{"ADD_2_1", counters[c_add21 + id]},
                                    {"ADD_3_1", counters[c_add31 + id]},
                                    {"CONFIGURATION", counters[c_conf + id]}}});
  if (acc) acc->add_lines(rn, counters);
  return rn;
}

}  // namespace telar::sim::fabric
