#pragma once
// Per-operation results: cycles, Global Buffer traffic, activity counters (STONNE's `.counters`
// layout, so existing energy scripts read them), and the JSON stats record.
#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace telar::sim {

struct GlobalBufferTraffic {
  std::uint64_t weight_reads = 0, input_reads = 0, psum_reads = 0, psum_writes = 0;
  std::uint64_t reads() const { return weight_reads + input_reads + psum_reads; }
  std::uint64_t writes() const { return psum_writes; }
  bool operator==(const GlobalBufferTraffic&) const = default;
};

// The operation counts of one counter line (at most kMaxOps; kept inline, since a simulated
// fabric has thousands of lines).
class OpList {
 public:
  static constexpr std::size_t kMaxOps = 4;
  using Op = std::pair<std::string, std::uint64_t>;
  OpList() = default;
  OpList(std::initializer_list<Op> ops) {
    for (const Op& op : ops) push_back(op);
  }
  void push_back(Op op);  // throws telar::Error beyond kMaxOps
  template <typename... A>
  void emplace_back(A&&... a) {
    push_back(Op(std::forward<A>(a)...));
  }
  std::size_t size() const { return n_; }
  const Op* begin() const { return ops_.data(); }
  const Op* end() const { return ops_.data() + n_; }
  const Op& operator[](std::size_t i) const { return ops_[i]; }

 private:
  std::array<Op, kMaxOps> ops_{};
  std::size_t n_ = 0;
};

// One line of a `.counters` file: a component (a key of the energy table) and its operation
// counts, e.g. `MULTIPLIER MULTIPLICATION=640 FORWARD_PSUM=0 CONFIGURATION=1`.
struct CounterLine {
  std::string component;
  OpList ops;
};
struct CounterSection {
  std::string name;  // DSNetwork, MSNetwork, ReduceNetwork, GlobalBuffer, CollectionBus
  std::vector<CounterLine> lines;
};
struct CountersFile {
  std::uint64_t cycles = 0;
  std::vector<CounterSection> sections;
};
std::string format_counters(const CountersFile& counters);
CountersFile parse_counters(std::string_view text, std::string_view origin);
// The GLOBALBUFFER line's READ= and WRITE= (0 if absent).
std::pair<std::uint64_t, std::uint64_t> global_buffer_counts(const CountersFile& counters);

struct Stats {
  std::uint64_t cycles = 0;
  GlobalBufferTraffic gb;
  std::uint64_t multiplications = 0;  // multiplier activations (including padding lanes)
  int multipliers = 0;                // multipliers in the array
  int multipliers_mapped = 0;         // multipliers the tile maps
  CountersFile counters;
  // Multiplier-array utilization: multiplications / (cycles × multipliers).
  double utilization() const {
    return cycles && multipliers
               ? static_cast<double>(multiplications) / (static_cast<double>(cycles) * multipliers)
               : 0.0;
  }
};

}  // namespace telar::sim
