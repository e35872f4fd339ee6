#pragma once
// The collection bus: `lines` output lines to the memory controller, each with `ports` input
// links and a FIFO per input. Each cycle a line takes what arrived on its inputs into their
// FIFOs and sends one value to its output link, round robin over its FIFOs from where its
// last scan stopped; a line with nothing queued sends nothing and keeps its position (a full
// scan over empty FIFOs ends where it started, so skipping it changes nothing).
#include <cstdint>
#include <vector>

#include "sim/fabric/counters.hpp"
#include "sim/fabric/link.hpp"
#include "sim/fabric/state_words.hpp"
#include "sim/ring.hpp"

namespace telar::sim::fabric {

struct CollectionBus {
  int lines = 0, ports = 0;
  std::vector<Link> in;           // by line * ports + port
  std::vector<Ring<Psum>> fifo;   // by line * ports + port
  std::vector<int> rr;            // per line: the FIFO its next scan starts at
  std::vector<long long> queued;  // per line: values waiting in its FIFOs
  std::vector<Link> out;          // per line
  std::size_t c_in = 0, c_out = 0;  // counters: writes on each input link, on each output

  void build(int line_count, int ports_per_line, CounterLayout& counters) {
    lines = line_count;
    ports = ports_per_line;
    c_in = counters.take(static_cast<std::size_t>(lines) * ports);
    c_out = counters.take(static_cast<std::size_t>(lines));
    in.assign(static_cast<std::size_t>(lines) * ports, Link{});
    fifo.assign(in.size(), Ring<Psum>{});
    rr.assign(lines, 0);
    queued.assign(lines, 0);
    out.assign(lines, Link{});
  }

  // One cycle (counting what each line sends).
  [[gnu::always_inline]] void cycle(std::uint64_t* counters) {
    std::uint64_t* sent = counters + c_out;
    for (int l = 0; l < lines; ++l) {
      const std::size_t base = static_cast<std::size_t>(l) * ports;
      for (int p = 0; p < ports; ++p) {
        Link& link = in[base + p];
        if (link.pending) {
          queued[l] += static_cast<long long>(link.size());
          link.take([&](const Psum& v) { fifo[base + p].push(v); });
        }
      }
      if (queued[l] == 0) continue;
      --queued[l];
      int& next = rr[l];
      for (int tries = 0; tries < ports; ++tries) {
        Ring<Psum>& f = fifo[base + next];
        const bool take = !f.empty();
        Psum v{0, 0};
        if (take) v = f.pop();
        next = (next + 1) % ports;
        if (take) {
          out[l].send_one(v);
          ++sent[l];
          break;
        }
      }
    }
  }

  // The inputs' links and FIFOs as state words (the arbiters and outputs are the engine's to
  // describe: an engine may know which arbiter positions behave alike).
  void put_inputs(std::vector<std::uint64_t>& s) const {
    for (std::size_t k = 0; k < in.size(); ++k) {
      put_link(s, in[k]);
      put_ring(s, fifo[k]);
    }
  }

  // The CollectionBus section: per line, its input wires and its output wire.
  CounterSection section(const std::uint64_t* counters) const {
    CounterSection cb{"CollectionBus", {}};
    reserve_lines(cb, static_cast<std::size_t>(lines) * (ports + 1));
    for (int l = 0; l < lines; ++l) {
      add_wires(cb, "CB_WIRE", counters + c_in + static_cast<std::size_t>(l) * ports,
                static_cast<std::size_t>(ports));
      add_wires(cb, "CB_WIRE", counters + c_out + l, 1);
    }
    return cb;
  }

  // Nothing in flight on the bus (the arbiters' positions aside).
  bool idle() const {
    for (std::size_t k = 0; k < in.size(); ++k)
      if (in[k].pending || !fifo[k].empty()) return false;
    for (int l = 0; l < lines; ++l)
      if (out[l].pending || queued[l] != 0) return false;
    return true;
  }
};

}  // namespace telar::sim::fabric
