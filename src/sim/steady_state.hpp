#pragma once
// The steady-state skipper the cycle-level engines share (MAERI, the mesh, MAGMA, SIGMA).
//
// At points of its loop an engine describes its state without data values: a vector of words
// (queue lengths, the destinations and virtual neurons queued, arbiter positions, what its
// controller will do next). Two points in the same state are followed by the same cycles, so
// once a state repeats the engine advances its clock, counters and progress by whole periods
// (the change between the two points, repeated) as far as its loop lets the repetition go
// on: that limit is each engine's own (the iteration gate, the end of a phase, tile shapes).
//
// `StateMemory` remembers the states seen with what the engine recorded there; a repeat is
// found by its key (a fingerprint) and confirmed word by word. `repeat_change` applies the periods.
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

namespace telar::sim {

// A fingerprint of a state: only a hint (equal states are confirmed word by word).
std::uint64_t state_fingerprint(std::uint64_t seed, const std::vector<std::uint64_t>& words);

template <typename Mark>
class StateMemory {
 public:
  explicit StateMemory(std::uint64_t seed) : seed_(seed) {}

  // A state's key (its fingerprint): computed once per point, for find and remember.
  std::uint64_t key(const std::vector<std::uint64_t>& state) const {
    return state_fingerprint(seed_, state);
  }
  // What was recorded at an earlier point in exactly this state, or nullptr.
  const Mark* find(std::uint64_t key, const std::vector<std::uint64_t>& state) const {
    auto it = seen_.find(key);
    return it != seen_.end() && it->second.state == state ? &it->second.mark : nullptr;
  }
  // Records a point (replacing an earlier one with the same key).
  void remember(std::uint64_t key, const std::vector<std::uint64_t>& state, Mark mark) {
    seen_.insert_or_assign(key, Entry{state, std::move(mark)});
  }
  std::size_t size() const { return seen_.size(); }
  void clear() { seen_.clear(); }

 private:
  struct Entry {
    std::vector<std::uint64_t> state;
    Mark mark;
  };
  std::uint64_t seed_;
  std::unordered_map<std::uint64_t, Entry> seen_;
};

// now += periods × (now − then): a quantity that changes by the same amount every period.
template <typename T>
void repeat_change(T& now, const T& then, long long periods) {
  now += static_cast<T>(periods) * (now - then);
}
template <typename T>
void repeat_change(std::vector<T>& now, const std::vector<T>& then, long long periods) {
  for (std::size_t i = 0; i < now.size(); ++i) repeat_change(now[i], then[i], periods);
}

}  // namespace telar::sim
