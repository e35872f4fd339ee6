#include "report/dlrm_sim_report.hpp"

#include <fmt/format.h>

#include <map>

#include "core/csv.hpp"
#include "core/files.hpp"
#include "report/svg_chart.hpp"

namespace telar::report {

namespace {

using dlrm::Component;

std::string name_of(Component c) {
  return std::string(dlrm::component_name(c));
}

std::string percent(double fraction) {
  return fmt::format("{:.1f} %", 100.0 * fraction);
}

// Thousands separated by commas: cycle and access counts reach the tens of millions.
std::string grouped(std::uint64_t v) {
  std::string digits = std::to_string(v), out;
  const int n = static_cast<int>(digits.size());
  for (int i = 0; i < n; ++i) {
    out += digits[static_cast<std::size_t>(i)];
    if ((n - 1 - i) % 3 == 0 && i != n - 1) out += ',';
  }
  return out;
}

nlohmann::json figures_json(const dlrm::ComponentFigures& f, double share) {
  return {{"cycles", f.cycles},
          {"gb_reads", f.gb_reads},
          {"gb_writes", f.gb_writes},
          {"energy", f.energy},
          {"calls", f.calls},
          {"cycle_share", share},
          {"multiplications", f.multiplications}};
}

dlrm::ComponentFigures mlps(const dlrm::SimulationSummary& s) {
  dlrm::ComponentFigures f = s[Component::BottomMlp];
  f.add(s[Component::TopMlp]);
  return f;
}

}  // namespace

const std::vector<Component>& simulated_components() {
  static const std::vector<Component> c = {Component::EmbeddingBags, Component::BottomMlp,
                                           Component::TopMlp};
  return c;
}

std::string component_table(const dlrm::SimulationSummary& sim) {
  std::string out = fmt::format("{:<15} {:>14} {:>8} {:>14} {:>12} {:>14} {:>6}\n", "component",
                                "cycles", "share", "GB reads", "GB writes", "energy", "calls");
  auto line = [&](const std::string& name, const dlrm::ComponentFigures& f, double share) {
    out +=
        fmt::format("{:<15} {:>14} {:>8} {:>14} {:>12} {:>14.6g} {:>6}\n", name, grouped(f.cycles),
                    percent(share), grouped(f.gb_reads), grouped(f.gb_writes), f.energy, f.calls);
  };
  for (Component c : simulated_components()) line(name_of(c), sim[c], sim.cycle_share(c));
  const dlrm::ComponentFigures total = sim.total();
  line("total", total, total.cycles ? 1.0 : 0.0);
  out += fmt::format(
      "interaction, bias, ReLU and sigmoid on the host; {} forward pass{} of {} samples, {} "
      "lookups\n",
      sim.forwards, sim.forwards == 1 ? "" : "es", sim.samples,
      grouped(static_cast<std::uint64_t>(sim.lookups)));
  return out;
}

std::string workload_table(const std::vector<DlrmSimulation>& runs) {
  std::string out =
      fmt::format("{:<16} {:>12} {:>7} {:>7} {:>7} {:>9} {:>12} {:>9} {:>11} {:>9} {:>7}\n",
                  "workload", "cycles", "EB", "bottom", "top", "thesis EB", "EB reads", "EB writes",
                  "MLP reads", "MLP wr.", "secs");
  for (const DlrmSimulation& r : runs) {
    const dlrm::SimulationSummary& s = r.sim;
    const dlrm::ComponentFigures m = mlps(s);
    out += fmt::format(
        "{:<16} {:>12} {:>7} {:>7} {:>7} {:>9} {:>12} {:>9} {:>11} {:>9} {:>7.1f}\n", r.name,
        grouped(s.total().cycles), percent(s.cycle_share(Component::EmbeddingBags)),
        percent(s.cycle_share(Component::BottomMlp)), percent(s.cycle_share(Component::TopMlp)),
        r.thesis_eb_share.empty() ? "-" : r.thesis_eb_share,
        grouped(s[Component::EmbeddingBags].gb_reads),
        grouped(s[Component::EmbeddingBags].gb_writes), grouped(m.gb_reads), grouped(m.gb_writes),
        r.seconds);
  }
  return out;
}

nlohmann::json simulation_json(const dlrm::SimulationSummary& sim) {
  nlohmann::json comps = nlohmann::json::object();
  for (Component c : simulated_components())
    comps[name_of(c)] = figures_json(sim[c], sim.cycle_share(c));
  const dlrm::ComponentFigures total = sim.total();
  return {{"target", sim.target},
          {"accelerators", sim.accelerators},
          {"forwards", sim.forwards},
          {"samples", sim.samples},
          {"lookups", sim.lookups},
          {"components", comps},
          {"total", figures_json(total, total.cycles ? 1.0 : 0.0)}};
}

void write_components_csv(const std::filesystem::path& path,
                          const std::vector<DlrmSimulation>& runs) {
  std::string csv = "workload,group,component,cycles,gb_reads,gb_writes,energy,cycle_share,calls\n";
  for (const DlrmSimulation& r : runs)
    for (int i = 0; i < dlrm::kComponents; ++i) {
      const auto c = static_cast<Component>(i);
      const dlrm::ComponentFigures& f = r.sim[c];
      csv += fmt::format("{},{},{},{},{},{},{:.9g},{:.9g},{}\n", csv_field(r.name),
                         csv_field(r.group), name_of(c), f.cycles, f.gb_reads, f.gb_writes,
                         f.energy, r.sim.cycle_share(c), f.calls);
    }
  write_file_atomic(path, csv);
}

void write_nodes_csv(const std::filesystem::path& path, const std::vector<DlrmSimulation>& runs) {
  std::string csv =
      "workload,node,component,op,target,workload_shape,tile,calls,cycles,gb_reads,gb_writes,"
      "energy,note\n";
  for (const DlrmSimulation& r : runs)
    for (const backend::sim::NodeSimulation& n : r.sim.nodes)
      csv += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{:.9g},{}\n", csv_field(r.name),
                         csv_field(n.node), name_of(dlrm::component_of(n.node)), csv_field(n.op),
                         csv_field(n.target), csv_field(n.workload), csv_field(n.tile), n.calls,
                         n.stats.cycles, n.stats.gb.reads(), n.stats.gb.writes(), n.energy,
                         csv_field(n.note));
  write_file_atomic(path, csv);
}

void add_simulation_section(HtmlReport& html, const std::vector<DlrmSimulation>& runs) {
  if (runs.empty()) return;
  html.heading("On the simulated hybrid accelerator");
  html.paragraph("Accelerators: " + runs.front().sim.accelerators +
                 ". Each Linear layer is one dense call (FC: M = samples, N = outputs, K = "
                 "inputs), each EmbeddingBag one CSR sparse x dense call (M = bags, K = table "
                 "rows, N = d); the interaction, biases and activations run on the host. "
                 "Figures are sums over the simulator calls, as the thesis sums its .counters "
                 "files.");
  // The summary table.
  std::vector<std::vector<std::string>> rows;
  for (const DlrmSimulation& r : runs) {
    const dlrm::SimulationSummary& s = r.sim;
    const dlrm::ComponentFigures m = mlps(s);
    rows.push_back({r.name, r.group, grouped(s.total().cycles),
                    percent(s.cycle_share(Component::EmbeddingBags)),
                    percent(s.cycle_share(Component::BottomMlp)),
                    percent(s.cycle_share(Component::TopMlp)),
                    r.thesis_eb_share.empty() ? "-" : r.thesis_eb_share,
                    grouped(s[Component::EmbeddingBags].gb_reads),
                    grouped(s[Component::EmbeddingBags].gb_writes), grouped(m.gb_reads),
                    grouped(m.gb_writes), fmt::format("{:.4g}", s.total().energy)});
  }
  html.table({"workload", "group", "cycles", "EB share", "Bottom MLP", "Top MLP", "thesis EB share",
              "EB GB reads", "EB GB writes", "MLP GB reads", "MLP GB writes", "energy"},
             rows);
  // Charts per group (the thesis draws one figure per group and metric).
  std::vector<std::string> groups;
  std::map<std::string, std::vector<const DlrmSimulation*>> by_group;
  for (const DlrmSimulation& r : runs) {
    if (!by_group.count(r.group)) groups.push_back(r.group);
    by_group[r.group].push_back(&r);
  }
  std::vector<std::string> stack_names;
  for (Component c : simulated_components()) stack_names.push_back(name_of(c));
  struct Metric {
    const char* title;
    std::uint64_t dlrm::ComponentFigures::*field;
  };
  const Metric metrics[] = {{"cycles", &dlrm::ComponentFigures::cycles},
                            {"Global Buffer reads", &dlrm::ComponentFigures::gb_reads},
                            {"Global Buffer writes", &dlrm::ComponentFigures::gb_writes}};
  for (const std::string& g : groups) {
    const auto& members = by_group[g];
    html.heading(g.empty() ? "Per component" : "Per component: " + g);
    for (const Metric& m : metrics) {
      BarChart chart{fmt::format("{}{}", m.title, g.empty() ? "" : " (" + g + ")"),
                     m.title,
                     {},
                     stack_names,
                     std::vector<std::vector<double>>(stack_names.size()),
                     true,
                     members.size() <= 4};
      for (const DlrmSimulation* r : members) {
        chart.categories.push_back(r->name);
        for (std::size_t i = 0; i < simulated_components().size(); ++i)
          chart.values[i].push_back(
              static_cast<double>(r->sim[simulated_components()[i]].*(m.field)));
      }
      html.svg(chart.render(members.size() <= 4 ? 560 : 720, 340));
    }
  }
  if (runs.size() > 1) {
    html.heading("Share of cycles per component");
    BarChart share{"share of cycles (%)",
                   "% of cycles",
                   {},
                   stack_names,
                   std::vector<std::vector<double>>(stack_names.size()),
                   true,
                   false};
    for (const DlrmSimulation& r : runs) {
      share.categories.push_back(r.name);
      for (std::size_t i = 0; i < simulated_components().size(); ++i)
        share.values[i].push_back(100.0 * r.sim.cycle_share(simulated_components()[i]));
    }
    html.svg(share.render(860, 380));
  }
  // Per workload, the component figures and the nodes.
  for (const DlrmSimulation& r : runs) {
    html.heading("Components: " + r.name);
    if (!r.flags.empty()) html.preformatted(r.flags);
    std::vector<std::vector<std::string>> comp;
    for (Component c : simulated_components()) {
      const dlrm::ComponentFigures& f = r.sim[c];
      comp.push_back({name_of(c), grouped(f.cycles), percent(r.sim.cycle_share(c)),
                      grouped(f.gb_reads), grouped(f.gb_writes), fmt::format("{:.6g}", f.energy),
                      std::to_string(f.calls)});
    }
    const dlrm::ComponentFigures t = r.sim.total();
    comp.push_back({"total", grouped(t.cycles), t.cycles ? "100.0 %" : "0.0 %", grouped(t.gb_reads),
                    grouped(t.gb_writes), fmt::format("{:.6g}", t.energy),
                    std::to_string(t.calls)});
    html.table({"component", "cycles", "share", "GB reads", "GB writes", "energy", "calls"}, comp);
    if (runs.size() == 1) {
      std::vector<std::vector<std::string>> nodes;
      for (const auto& n : r.sim.nodes)
        nodes.push_back({n.node, n.target, n.workload, n.tile, grouped(n.stats.cycles),
                         grouped(n.stats.gb.reads()), grouped(n.stats.gb.writes()), n.note});
      html.table({"node", "on", "workload", "tile", "cycles", "GB reads", "GB writes", "note"},
                 nodes);
    }
  }
  html.paragraph(
      "Raw figures: components.csv (one row per workload and component) and nodes.csv (one row "
      "per graph node).");
}

}  // namespace telar::report
