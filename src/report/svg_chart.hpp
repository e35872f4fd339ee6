#pragma once
// Self-contained SVG charts for HTML reports (no scripts, no network): line charts for curves
// and timelines, bar charts (plain, grouped, stacked) for per-layer and per-component figures.
#include <string>
#include <vector>

namespace telar::report {

struct Series {
  std::string name;
  std::vector<double> x;
  std::vector<double> y;
  bool scatter = false;  // points only, not joined (e.g. every candidate of a search)
};

struct LineChart {
  std::string title;
  std::string x_label;
  std::string y_label;
  std::vector<Series> series;
  bool log_y = false;
  bool log2_x = false;  // x on a base-2 log scale, ticks at powers of two (batch sizes)
  std::string render(int width = 720, int height = 320) const;
};

// Bars per category; one value per (stack, category). stacked=false draws the stacks side by
// side (grouped bars), stacked=true on top of each other.
struct BarChart {
  std::string title;
  std::string y_label;
  std::vector<std::string> categories;
  std::vector<std::string> stack_names;          // one per layer of bars
  std::vector<std::vector<double>> values;       // values[stack][category]
  bool stacked = true;
  bool horizontal_labels = false;                // category labels rotated unless set
  std::string render(int width = 720, int height = 360) const;
};

// "12.3k", "4.56M": short tick labels.
std::string short_number(double v);
std::string escape_xml(const std::string& text);
const char* palette(std::size_t i);

}  // namespace telar::report
