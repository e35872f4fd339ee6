#include "sim/reduce_tree.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace telar::sim {

namespace {

int log2_exact(int v) {
  int l = 0;
  while ((1 << l) < v) ++l;
  return l;
}

bool feeds_parent(const AdderConfig& c) {
  if (!c.configured) return false;
  switch (c.mode) {
    case AdderMode::Add31:
    case AdderMode::Add11Fw11:
    case AdderMode::Fw22:
      return true;
    case AdderMode::Add21:
      return c.link == LinkDir::None;  // otherwise it feeds its sibling
    case AdderMode::Fold:
      return false;
  }
  return false;
}

// The FEN node that folds the output of node (level, j), following the physical up-links.
int fen_fold_target(int num_ms, int level, int j) {
  if (level == 0) return num_ms - 1;
  if (j % 2 == 0) return ReduceTree::index(level - 1, j / 2);
  int reductions = 0;
  int current = j;
  while (current % 2 != 0) {
    ++reductions;
    current /= 2;
  }
  const int target_level = level - reductions - 1;
  if (target_level < 0) return num_ms - 1;
  return ReduceTree::index(target_level, current / 2);
}

}  // namespace

ReduceTree compile_reduce_tree(ReduceNetwork kind, int num_ms, int vn_size, int num_vns) {
  require(1LL * vn_size * num_vns <= num_ms, "internal: {} neurons of {} do not fit {}", num_vns,
          vn_size, num_ms);
  return compile_reduce_tree(kind, num_ms,
                             std::vector<int>(static_cast<std::size_t>(num_vns), vn_size));
}

ReduceTree compile_reduce_tree(ReduceNetwork kind, int num_ms, const std::vector<int>& vn_sizes) {
  require(kind != ReduceNetwork::Temporal, "internal: TEMPORALRN has no adder tree");
  require(num_ms >= 2 && (num_ms & (num_ms - 1)) == 0, "internal: num_ms {} not a power of two",
          num_ms);
  long long ms_total = 0;
  for (int size : vn_sizes) {
    require(size > 0, "internal: empty virtual neuron");
    ms_total += size;
  }
  require(ms_total <= num_ms, "internal: neurons of {} multipliers do not fit {}", ms_total,
          num_ms);
  const bool fen = kind == ReduceNetwork::Fen;
  ReduceTree tree;
  tree.kind = kind;
  tree.num_ms = num_ms;
  tree.levels = log2_exact(num_ms);
  tree.nodes.assign(num_ms - 1 + (fen ? 1 : 0), AdderConfig{});
  auto node = [&](int level, int j) -> AdderConfig& {
    return tree.nodes[ReduceTree::index(level, j)];
  };

  std::vector<std::uint8_t> bits(num_ms), parent(num_ms);
  int first_ms = 0;
  for (int vn_size : vn_sizes) {
    std::fill(bits.begin(), bits.end(), 0);
    std::fill(parent.begin(), parent.end(), 0);
    std::fill(bits.begin() + first_ms, bits.begin() + first_ms + vn_size, 1);
    first_ms += vn_size;
    int adders = num_ms;
    for (int level = tree.levels - 1; level >= 0; --level) {
      adders /= 2;
      for (int as = 0; as < adders; ++as) {
        const int c0 = 2 * as;
        if (as == 0 || as == adders - 1) {
          // Edge switches have no augmented link: they add (or pass on) what their children send.
          if (bits[c0] || bits[c0 + 1]) {
            parent[as] = 1;
            AdderConfig& c = node(level, as);
            c.mode = c.configured ? AdderMode::Fw22 : AdderMode::Add21;
            c.configured = true;
          } else {
            parent[as] = 0;
          }
          continue;
        }
        if (as % 2 == 0) continue;  // handled with its left neighbour (the odd one)
        // Spans of the neuron to the left and to the right of the link between as and as+1.
        const int last_child = c0 + 1;
        const int left_from = bits[last_child] ? last_child : c0;
        int left_span = 0;
        for (int s = left_from; s >= 0 && bits[s]; --s) ++left_span;
        int right_from = last_child + 1;
        if (!bits[right_from]) ++right_from;
        int right_span = 0;
        for (int s = right_from; s < num_ms && bits[s]; ++s) ++right_span;

        bool link = false;
        bool towards_left = false;
        if (left_span == 0 || right_span == 0) {
          parent[as] = left_span > 0;
          parent[as + 1] = right_span > 0;
        } else {
          towards_left = left_span >= right_span;  // the smaller span is folded into the larger
          if (towards_left) {
            if (bits[last_child + 3] || bits[last_child + 4]) {
              parent[as] = parent[as + 1] = 1;  // the right side still needs its own parent
            } else {
              link = true;
              std::fill(bits.begin() + c0 + 2, bits.end(), 0);
              parent[as] = 1;
              parent[as + 1] = 0;
            }
          } else {
            if (bits[last_child - 2] || bits[last_child - 3]) {
              parent[as] = parent[as + 1] = 1;
            } else {
              link = true;
              std::fill(bits.begin(), bits.begin() + c0 + 2, 0);
              parent[as + 1] = 1;
              parent[as] = 0;
            }
          }
        }
        if (link) {
          AdderConfig& receiver = node(level, towards_left ? as : as + 1);
          AdderConfig& sender = node(level, towards_left ? as + 1 : as);
          receiver.link = LinkDir::Receive;
          sender.link = LinkDir::Send;
          receiver.mode = AdderMode::Add31;
          receiver.configured = true;
          sender.mode = sender.configured ? AdderMode::Add11Fw11 : AdderMode::Add21;
          sender.configured = true;
        } else {
          auto assign = [&](AdderConfig& c) {
            if (c.configured)
              c.mode = c.link != LinkDir::None ? AdderMode::Add11Fw11 : AdderMode::Fw22;
            else
              c.mode = AdderMode::Add21;
            c.configured = true;
          };
          if (left_span > 0) assign(node(level, as));
          if (right_span > 0) assign(node(level, as + 1));
        }
      }
      // The level's switches that carry this neuron become the bits of the next level up.
      int enabled = 0, last = 0;
      for (int s = 0; s < num_ms; ++s) {
        if (parent[s]) {
          ++enabled;
          last = s;
        }
        bits[s] = parent[s];
        parent[s] = 0;
      }
      if (enabled != 1) continue;
      if (!fen) {
        node(level, last).to_memory = true;  // one switch holds the whole sum: send it out
        continue;
      }
      node(level, last).to_fold_node = true;
      AdderConfig& fold = tree.nodes[fen_fold_target(num_ms, level, last)];
      fold.to_memory = true;
      fold.mode = AdderMode::Fold;
      fold.configured = true;
      break;  // FEN: this neuron is complete; its folding node accumulates across folds
    }
  }

  // Which child links carry data, from the configuration of the level below.
  const int ms_used = static_cast<int>(ms_total);
  for (int j = 0; j < num_ms / 2; ++j) {
    AdderConfig& c = node(tree.levels - 1, j);
    c.left_enabled = 2 * j < ms_used;
    c.right_enabled = 2 * j + 1 < ms_used;
  }
  for (int level = tree.levels - 2; level >= 0; --level) {
    for (int j = 0; j < (1 << level); ++j) {
      AdderConfig& c = node(level, j);
      c.left_enabled = feeds_parent(node(level + 1, 2 * j));
      c.right_enabled = feeds_parent(node(level + 1, 2 * j + 1));
    }
  }
  return tree;
}

BusWiring wire_collection_bus(ReduceNetwork kind, int num_ms, int bus_lines) {
  const bool fen = kind == ReduceNetwork::Fen;
  const int levels = log2_exact(num_ms);
  std::vector<int> doubles, singles;
  for (int level = 0; level < levels; ++level) {
    const int count = 1 << level;
    if (level == 0) {
      singles.push_back(0);
      if (fen) singles.push_back(num_ms - 1);
      continue;
    }
    for (int j = 0; j < count; ++j) {
      if (j > 0 && j % 2 == 0) {
        doubles.push_back(ReduceTree::index(level, j - 1));
        doubles.push_back(ReduceTree::index(level, j));
      } else if (j == 0 || j == count - 1) {
        singles.push_back(ReduceTree::index(level, j));
      }
    }
  }
  BusWiring w;
  const int nodes = num_ms - 1 + (fen ? 1 : 0);
  w.line.assign(nodes, 0);
  w.port.assign(nodes, 0);
  int max_port = 0;
  const int n_doubles = static_cast<int>(doubles.size());
  for (int i = 0; i < n_doubles; i += 2) {
    const int pair = i / 2;
    const int port = 2 * (pair / bus_lines);
    const int line = pair % bus_lines;
    w.line[doubles[i]] = line, w.port[doubles[i]] = port;
    w.line[doubles[i + 1]] = line, w.port[doubles[i + 1]] = port + 1;
    max_port = std::max(max_port, port + 1);
    w.order.push_back(doubles[i]);
    w.order.push_back(doubles[i + 1]);
  }
  for (int i = 0; i < static_cast<int>(singles.size()); ++i) {
    const int port = n_doubles / bus_lines + 1 + i / bus_lines;
    const int line = (i + n_doubles) % bus_lines;
    w.line[singles[i]] = line, w.port[singles[i]] = port;
    max_port = std::max(max_port, port);
    w.order.push_back(singles[i]);
  }
  w.ports_per_line = std::max(num_ms / bus_lines + 1, max_port + 1);
  return w;
}

std::vector<int> fen_up_targets(int num_ms) {
  const int levels = log2_exact(num_ms);
  std::vector<int> target(num_ms, -1);
  target[0] = num_ms - 1;
  for (int level = 1; level < levels; ++level)
    for (int j = 0; j < (1 << level); ++j)
      target[ReduceTree::index(level, j)] = fen_fold_target(num_ms, level, j);
  return target;
}

bool neurons_mix(const ReduceTree& tree, const std::vector<int>& vn_sizes) {
  require(tree.kind == ReduceNetwork::Art, "internal: neurons_mix checks ART configurations");
  // Follow, level by level from the multipliers up, the partial sums each link carries: per
  // item its neuron and how many of the neuron's multipliers it sums. An adder that adds must
  // see one and the same neuron on every input it adds; what reaches memory must be whole
  // neurons, each exactly once.
  using Item = std::pair<int, int>;  // (neuron, multipliers summed)
  using Stream = std::vector<Item>;
  std::vector<int> ms_vn(static_cast<std::size_t>(tree.num_ms), -1);
  int ms = 0;
  for (std::size_t v = 0; v < vn_sizes.size(); ++v)
    for (int j = 0; j < vn_sizes[v]; ++j) ms_vn[ms++] = static_cast<int>(v);
  const int nodes = tree.node_count();
  std::vector<Stream> up(static_cast<std::size_t>(nodes)), side(static_cast<std::size_t>(nodes));
  std::vector<int> delivered(vn_sizes.size(), 0);
  bool mixed = false;
  auto child_up = [&](int level, int child) -> Stream {
    if (level == tree.levels - 1) return ms_vn[child] >= 0 ? Stream{{ms_vn[child], 1}} : Stream{};
    const int id = ReduceTree::index(level + 1, child);
    return tree.nodes[id].to_memory ? Stream{} : up[id];
  };
  auto add = [&](const std::vector<const Stream*>& inputs) -> Stream {
    int sum = 0;
    for (const Stream* in : inputs) {
      if (in->size() != 1 || (*in)[0].first != (*inputs[0])[0].first) {
        mixed = true;
        return {};
      }
      sum += (*in)[0].second;
    }
    return {{(*inputs[0])[0].first, sum}};
  };
  auto deliver = [&](const Stream& s) {
    for (const Item& it : s) {
      if (it.second != vn_sizes[static_cast<std::size_t>(it.first)]) mixed = true;  // partial
      ++delivered[static_cast<std::size_t>(it.first)];
    }
  };
  for (int l = tree.levels - 1; l >= 0 && !mixed; --l) {
    const int count = 1 << l;
    // Senders over augmented links first, then the others (receivers read their sibling).
    for (int pass = 0; pass < 2 && !mixed; ++pass)
      for (int j = 0; j < count && !mixed; ++j) {
        const int id = ReduceTree::index(l, j);
        const AdderConfig& c = tree.nodes[id];
        if ((c.link == LinkDir::Receive) != (pass == 1)) continue;
        const Stream left = child_up(l, 2 * j), right = child_up(l, 2 * j + 1);
        Stream out;
        switch (c.mode) {
          case AdderMode::Add21:
            if (!left.empty() && !right.empty())
              out = add({&left, &right});
            else
              out = left.empty() ? right : left;
            if (c.link == LinkDir::Send) {
              side[id] = out;
              out.clear();
            }
            break;
          case AdderMode::Add31: {
            const Stream& fw = side[ReduceTree::index(l, j % 2 ? j + 1 : j - 1)];
            out = add({&left, &right, &fw});
            break;
          }
          case AdderMode::Add11Fw11:
            side[id] = j % 2 == 0 ? left : right;
            out = j % 2 == 0 ? right : left;
            break;
          case AdderMode::Fw22:
            out = left;
            out.insert(out.end(), right.begin(), right.end());
            break;
          case AdderMode::Fold:
            fail("internal: folding node in an ART");
        }
        up[id] = out;
        if (c.to_memory || id == 0) deliver(out);  // the root's results go out too
      }
  }
  for (int d : delivered)
    if (d != 1) mixed = true;
  return mixed;
}

}  // namespace telar::sim
