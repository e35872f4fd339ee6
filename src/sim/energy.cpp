#include "sim/energy.hpp"

#include <cmath>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/parse.hpp"

namespace telar::sim {

namespace {
// The seed's table (spec §7), identical to STONNE's energy_tables/energy_model.txt.
constexpr std::string_view kDefaultTable =
    "RN_WIRE AREA=9.46 STATIC=0 WRITE=0.001839831 READ=0\n"
    "DN_WIRE AREA=11.48 STATIC=0 WRITE=0.00223226 READ=0\n"
    "MN_WIRE AREA=9.46 STATIC=0 WRITE=0.001839831 READ=0\n"
    "CB_WIRE AREA=9.46 STATIC=0 WRITE=0.001839831 READ=0\n"
    "FIFO AREA=0 STATIC=0 PUSH=0 POP=0 FRONT=0\n"
    "ADDER AREA=1059.156 STATIC=0.001505 ADD_2_1=0.111 ADD_3_1=0.111 CONFIGURATION=0\n"
    "SWITCH AREA=108.99 STATIC=0.000157 ROUTE_UNICAST=0.0360 ROUTE_BROADCAST=0.0360\n"
    "MULTIPLIER AREA=1001.0 STATIC=0.001614 MULTIPLICATION=0.00741 FORWARD_PSUM=0.00741 "
    "CONFIGURATION=0\n"
    "GLOBALBUFFER AREA=115029 STATIC=0.0101 READ=0.044 WRITE=0.044\n"
    "ACCUMULATOR AREA=1059.156 STATIC=0.001505 READ=0 WRITE=0 ADD=0.111\n";
}  // namespace

EnergyTable parse_energy_table(std::string_view text, std::string_view origin) {
  EnergyTable t;
  int line_number = 0;
  for (const std::string& raw : split(text, '\n')) {
    ++line_number;
    const std::string_view line = trim(raw);
    if (line.empty() || line.front() == '#') continue;
    const std::vector<std::string> words = split(line, ' ');
    auto& ops = t.entries[words[0]];
    for (std::size_t i = 1; i < words.size(); ++i) {
      if (words[i].empty()) continue;
      const std::size_t eq = words[i].find('=');
      require(eq != std::string::npos && eq > 0, "{}:{}: '{}' is not OPERATION=value", origin,
              line_number, words[i]);
      const double value = parse_double(std::string_view(words[i]).substr(eq + 1),
                                        fmt::format("{}:{}: {}", origin, line_number, words[i]));
      require(std::isfinite(value) && value >= 0,
              "{}:{}: '{}': energies and areas are finite and not negative", origin, line_number,
              words[i]);
      ops[words[i].substr(0, eq)] = value;
    }
  }
  require(!t.entries.empty(), "{}: the energy table has no components", origin);
  return t;
}

EnergyTable load_energy_table(const std::filesystem::path& path) {
  return parse_energy_table(read_file(path), path.string());
}

const EnergyTable& default_energy_table() {
  static const EnergyTable table = parse_energy_table(kDefaultTable, "built-in energy table");
  return table;
}

EnergyBreakdown compute_energy(const EnergyTable& table, const CountersFile& counters) {
  // A component's energy per operation, looked up once per run of lines of that component
  // (a fabric's counters come in long runs: every wire, then every switch, ...).
  struct Costs {
    const std::string* component = nullptr;
    double static_per_cycle = 0, area = 0;
    std::vector<std::pair<const std::string*, double>> per_op;  // in the lines' op order
  } costs;
  auto look_up = [&](const CounterLine& l, const std::string& section) {
    auto it = table.entries.find(l.component);
    require(it != table.entries.end(),
            "component {} (section [{}]) is not in the energy table; add a line for it",
            l.component, section);
    const auto& ops = it->second;
    costs.component = &l.component;
    auto st = ops.find("STATIC");
    costs.static_per_cycle = st != ops.end() ? st->second : 0.0;
    auto ar = ops.find("AREA");
    costs.area = ar != ops.end() ? ar->second : 0.0;
    costs.per_op.clear();
    for (const auto& [op, count] : l.ops) {
      auto e = ops.find(op);
      require(e != ops.end(), "operation {} of component {} is not in the energy table", op,
              l.component);
      costs.per_op.emplace_back(&op, e->second);
    }
  };
  auto same_costs = [&](const CounterLine& l) {
    if (!costs.component || *costs.component != l.component || costs.per_op.size() != l.ops.size())
      return false;
    for (std::size_t i = 0; i < l.ops.size(); ++i)
      if (*costs.per_op[i].first != l.ops[i].first) return false;
    return true;
  };
  EnergyBreakdown b;
  for (const CounterSection& s : counters.sections) {
    EnergyBreakdown::Part part{s.name, 0, 0, 0};
    for (const CounterLine& l : s.lines) {
      if (!same_costs(l)) look_up(l, s.name);
      part.static_energy += static_cast<double>(counters.cycles) * costs.static_per_cycle;
      part.area += costs.area;
      for (std::size_t i = 0; i < l.ops.size(); ++i)
        part.dynamic_energy += static_cast<double>(l.ops[i].second) * costs.per_op[i].second;
    }
    b.static_energy += part.static_energy;
    b.dynamic_energy += part.dynamic_energy;
    b.area += part.area;
    b.sections.push_back(part);
  }
  return b;
}

}  // namespace telar::sim
