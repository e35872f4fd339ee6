#include "sim/stats.hpp"

#include <iterator>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/parse.hpp"

namespace telar::sim {

void OpList::push_back(Op op) {
  require(n_ < kMaxOps, "a counter line has more than {} operations", kMaxOps);
  ops_[n_++] = std::move(op);
}

std::string format_counters(const CountersFile& c) {
  fmt::memory_buffer out;
  fmt::format_to(std::back_inserter(out), "CYCLES={}\n", c.cycles);
  for (const CounterSection& s : c.sections) {
    fmt::format_to(std::back_inserter(out), "[{}]\n", s.name);
    for (const CounterLine& l : s.lines) {
      out.append(l.component);
      for (const auto& [op, count] : l.ops) {
        out.push_back(' ');
        out.append(op);
        out.push_back('=');
        const fmt::format_int digits(count);
        out.append(digits.data(), digits.data() + digits.size());
      }
      out.push_back('\n');
    }
  }
  return fmt::to_string(out);
}

CountersFile parse_counters(std::string_view text, std::string_view origin) {
  CountersFile c;
  bool first = true, saw_cycles = false;
  int line_number = 0;
  for (const std::string& raw : split(text, '\n')) {
    ++line_number;
    const std::string_view line = trim(raw);
    if (line.empty()) continue;
    if (first && line.substr(0, 7) == "CYCLES=") {
      const auto cycles =
          parse_int(line.substr(7), fmt::format("{}:{}: CYCLES", origin, line_number));
      require(cycles >= 0, "{}:{}: CYCLES={} is negative", origin, line_number, cycles);
      c.cycles = static_cast<std::uint64_t>(cycles);
      saw_cycles = true;
      first = false;
      continue;
    }
    first = false;
    if (line.front() == '[') {
      require(line.back() == ']', "{}:{}: malformed section '{}'", origin, line_number, line);
      c.sections.push_back(CounterSection{std::string(line.substr(1, line.size() - 2)), {}});
      continue;
    }
    require(!c.sections.empty(), "{}:{}: counter line before any [Section]", origin, line_number);
    const std::vector<std::string> words = split(line, ' ');
    CounterLine l{words[0], {}};
    for (std::size_t i = 1; i < words.size(); ++i) {
      if (words[i].empty()) continue;
      const std::size_t eq = words[i].find('=');
      require(eq != std::string::npos && eq > 0, "{}:{}: '{}' is not OPERATION=count", origin,
              line_number, words[i]);
      const auto count = parse_int(std::string_view(words[i]).substr(eq + 1),
                                   fmt::format("{}:{}: {}", origin, line_number, words[i]));
      require(count >= 0, "{}:{}: negative count in '{}'", origin, line_number, words[i]);
      l.ops.emplace_back(words[i].substr(0, eq), static_cast<std::uint64_t>(count));
    }
    c.sections.back().lines.push_back(std::move(l));
  }
  require(saw_cycles, "{}: not a STONNE .counters file (it must start with CYCLES=N)", origin);
  return c;
}

std::pair<std::uint64_t, std::uint64_t> global_buffer_counts(const CountersFile& c) {
  for (const CounterSection& s : c.sections)
    for (const CounterLine& l : s.lines)
      if (l.component == "GLOBALBUFFER") {
        std::uint64_t reads = 0, writes = 0;
        for (const auto& [op, count] : l.ops) {
          if (op == "READ") reads = count;
          if (op == "WRITE") writes = count;
        }
        return {reads, writes};
      }
  return {0, 0};
}

}  // namespace telar::sim
