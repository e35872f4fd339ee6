#pragma once
// The pieces of hardware the cycle-level engines share (MAERI, the sparse engines, the mesh):
// what travels on the fabric and the links that carry it, as plain structs stepped by the
// engines' cycle functions.
#include <cstdint>
#include <vector>

namespace telar::sim::fabric {

// What a distribution-network packet carries.
enum Kind : std::uint8_t { kWeight = 0, kInput = 1, kPsum = 2 };

// A partial sum on its way to the collection bus, tagged with its virtual neuron.
struct Psum {
  float value;
  int vn;
};

// A value queued at a distribution-network read port for one destination (a multiplier, or a
// mesh edge).
struct PortPacket {
  float value;
  int dest;
};

// A link carrying partial sums: one pending batch per cycle, almost always a single value
// (kept out of the vector).
struct Link {
  bool pending = false;
  std::uint32_t n = 0;
  Psum one{0, 0};
  std::vector<Psum> many;
  [[gnu::always_inline]] void send_one(Psum p) {
    pending = true;
    n = 1;
    one = p;
  }
  [[gnu::always_inline]] void send(const Psum* batch, std::uint32_t count) {
    if (count == 1) {
      send_one(batch[0]);
      return;
    }
    many.assign(batch, batch + count);
    n = count;
    pending = true;
  }
  template <typename F>
  void take(F&& f) {
    pending = false;
    if (n == 1) {
      f(one);
    } else {
      for (std::uint32_t i = 0; i < n; ++i) f(many[i]);
    }
  }
  std::size_t size() const { return n; }
  Psum item(std::size_t i) const { return n == 1 ? one : many[i]; }
};

// The value a multiplier receives from the distribution network in a cycle.
struct MsInput {
  bool pending = false;
  Kind kind = kWeight;
  float value = 0;
};

// A streamed value in a multiplier's FIFO, or a partial sum read back from the Global Buffer.
struct Act {
  float value;
  bool psum;
};

// A multiplier takes what the distribution network delivered this cycle: an input or a
// partial sum into its activation FIFO, a weight into its weight FIFO (a full FIFO of `weights`
// is flushed first: the weights of the next fold follow). Counts the partial sums it forwards.
template <typename WeightFifo, typename ActFifo>
[[gnu::always_inline]] inline void receive(MsInput& in, ActFifo& act, WeightFifo& w, int weights,
                                           std::uint64_t& psums_forwarded) {
  if (!in.pending) return;
  in.pending = false;
  if (in.kind == kInput) {
    act.push(Act{in.value, false});
  } else if (in.kind == kWeight) {
    if (static_cast<int>(w.size()) == weights) w.clear();
    w.push(in.value);
  } else {
    act.push(Act{in.value, true});
    ++psums_forwarded;
  }
}

// The number of levels of a binary tree over v leaves: ceil(log2(v)).
inline int log2_of(int v) {
  int l = 0;
  while ((1 << l) < v) ++l;
  return l;
}

}  // namespace telar::sim::fabric
