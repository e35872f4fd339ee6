#include "report/svg_chart.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace telar::report {

const char* palette(std::size_t i) {
  static const char* colors[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                 "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
  return colors[i % 10];
}

std::string escape_xml(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string short_number(double v) {
  const double a = std::abs(v);
  if (a >= 1e9) return fmt::format("{:.3g}G", v / 1e9);
  if (a >= 1e6) return fmt::format("{:.3g}M", v / 1e6);
  if (a >= 1e4) return fmt::format("{:.3g}k", v / 1e3);
  if (a >= 1e3) return fmt::format("{:.4g}", v);  // 4000, not 4e+03
  if (a == 0) return "0";
  return fmt::format("{:.3g}", v);
}

namespace {

struct Frame {
  int width, height;
  double left = 70, right = 20, top = 34, bottom = 56;
  double plot_w() const { return width - left - right; }
  double plot_h() const { return height - top - bottom; }
};

// "Nice" tick step covering [lo, hi] with about n ticks.
double nice_step(double span, int n) {
  if (span <= 0) return 1;
  const double raw = span / n;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double f = raw / mag;
  return (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag;
}

std::string header(const Frame& f, const std::string& title) {
  // A bold sans-serif character is about 0.6 of the font size wide: a title too long for the
  // chart at 14 px gets a smaller font instead of running off both edges.
  const double fits =
      (f.width - 16) / (0.6 * static_cast<double>(std::max<std::size_t>(title.size(), 1)));
  const double font = std::clamp(fits, 9.0, 14.0);
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
      "font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" "
      "fill=\"white\"/>\n<text x=\"{}\" y=\"18\" font-size=\"{:.1f}\" font-weight=\"bold\" "
      "text-anchor=\"middle\">{}</text>\n",
      f.width, f.height, f.width, f.height, f.width / 2, font, escape_xml(title));
}

std::string legend(const Frame& f, const std::vector<std::string>& names) {
  std::string s;
  double x = f.left;
  for (std::size_t i = 0; i < names.size(); ++i) {
    s += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"10\" height=\"10\" fill=\"{}\"/>"
                     "<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n",
                     x, f.height - 14.0, palette(i), x + 14, f.height - 5.0, escape_xml(names[i]));
    x += 24 + 6.5 * static_cast<double>(names[i].size());
  }
  return s;
}

std::string y_axis(const Frame& f, double lo, double hi, const std::string& label, bool log_y) {
  std::string s;
  if (log_y) {
    for (double e = std::floor(lo); e <= std::ceil(hi); e += 1) {
      if (e < lo || e > hi) continue;
      const double y = f.top + f.plot_h() * (1 - (e - lo) / (hi - lo));
      s += fmt::format("<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#ddd\"/>"
                       "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n",
                       f.left, f.left + f.plot_w(), y, y, f.left - 4, y + 4,
                       short_number(std::pow(10.0, e)));
    }
  } else {
    const double step = nice_step(hi - lo, 5);
    for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) {
      const double y = f.top + f.plot_h() * (1 - (v - lo) / (hi - lo));
      s += fmt::format("<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#ddd\"/>"
                       "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n",
                       f.left, f.left + f.plot_w(), y, y, f.left - 4, y + 4, short_number(v));
    }
  }
  s += fmt::format("<text transform=\"translate(14,{:.1f}) rotate(-90)\" text-anchor=\"middle\">{}"
                   "</text>\n",
                   f.top + f.plot_h() / 2, escape_xml(label));
  s += fmt::format("<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1:.1f}\" y2=\"{2:.1f}\" stroke=\"#333\"/>\n",
                   f.left, f.top, f.top + f.plot_h());
  return s;
}

}  // namespace

std::string LineChart::render(int width, int height) const {
  Frame f{width, height};
  const auto tx = [&](double x) { return log2_x ? std::log2(x) : x; };
  double xlo = std::numeric_limits<double>::infinity(), xhi = -xlo, ylo = xlo, yhi = -xlo;
  for (const auto& s : series)
    for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      double y = s.y[i];
      if (!std::isfinite(y) || (log_y && y <= 0) || (log2_x && s.x[i] <= 0)) continue;
      if (log_y) y = std::log10(y);
      xlo = std::min(xlo, tx(s.x[i]));
      xhi = std::max(xhi, tx(s.x[i]));
      ylo = std::min(ylo, y);
      yhi = std::max(yhi, y);
    }
  std::string svg = header(f, title);
  if (!std::isfinite(xlo)) return svg + "<text x=\"50%\" y=\"50%\">no data</text></svg>\n";
  if (xhi == xlo) xhi = xlo + 1;
  if (yhi == ylo) {
    yhi += std::max(1e-9, std::abs(yhi) * 0.05);
    ylo -= std::max(1e-9, std::abs(ylo) * 0.05);
  }
  if (!log_y && ylo > 0 && ylo < 0.3 * yhi) ylo = 0;
  svg += y_axis(f, ylo, yhi, y_label, log_y);
  const double xstep = log2_x ? std::max(1.0, std::ceil((xhi - xlo) / 12)) : nice_step(xhi - xlo, 6);
  for (double v = std::ceil(xlo / xstep) * xstep; v <= xhi + xstep * 1e-9; v += xstep) {
    const double x = f.left + f.plot_w() * (v - xlo) / (xhi - xlo);
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", x,
                       f.top + f.plot_h() + 14, short_number(log2_x ? std::exp2(v) : v));
  }
  svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n",
                     f.left + f.plot_w() / 2, f.top + f.plot_h() + 30, escape_xml(x_label));
  std::vector<std::string> names;
  for (std::size_t k = 0; k < series.size(); ++k) {
    const auto& s = series[k];
    names.push_back(s.name);
    std::string points;
    for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      double y = s.y[i];
      if (!std::isfinite(y) || (log_y && y <= 0) || (log2_x && s.x[i] <= 0)) continue;
      if (log_y) y = std::log10(y);
      points += fmt::format("{:.1f},{:.1f} ", f.left + f.plot_w() * (tx(s.x[i]) - xlo) / (xhi - xlo),
                            f.top + f.plot_h() * (1 - (y - ylo) / (yhi - ylo)));
    }
    if (!s.scatter)
      svg += fmt::format(
          "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1.8\" points=\"{}\"/>\n",
          palette(k), points);
    if (s.scatter || s.x.size() <= 40)
      for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
        double y = s.y[i];
        if (!std::isfinite(y) || (log_y && y <= 0) || (log2_x && s.x[i] <= 0)) continue;
        if (log_y) y = std::log10(y);
        svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2.5\" fill=\"{}\"/>\n",
                           f.left + f.plot_w() * (tx(s.x[i]) - xlo) / (xhi - xlo),
                           f.top + f.plot_h() * (1 - (y - ylo) / (yhi - ylo)), palette(k));
      }
  }
  svg += legend(f, names);
  return svg + "</svg>\n";
}

std::string BarChart::render(int width, int height) const {
  Frame f{width, height};
  f.bottom = horizontal_labels ? 56 : 110;
  const std::size_t nc = categories.size(), ns = values.size();
  double hi = 0;
  for (std::size_t c = 0; c < nc; ++c) {
    double total = 0;
    for (std::size_t s = 0; s < ns; ++s) {
      const double v = c < values[s].size() ? std::max(0.0, values[s][c]) : 0.0;
      total = stacked ? total + v : std::max(total, v);
    }
    hi = std::max(hi, total);
  }
  if (hi <= 0) hi = 1;
  hi *= 1.05;
  std::string svg = header(f, title);
  svg += y_axis(f, 0, hi, y_label, false);
  const double slot = f.plot_w() / static_cast<double>(std::max<std::size_t>(nc, 1));
  const double bar_w = stacked ? slot * 0.7 : slot * 0.8 / static_cast<double>(std::max<std::size_t>(ns, 1));
  for (std::size_t c = 0; c < nc; ++c) {
    const double x0 = f.left + slot * static_cast<double>(c) + slot * (stacked ? 0.15 : 0.1);
    double base = 0;
    for (std::size_t s = 0; s < ns; ++s) {
      const double v = c < values[s].size() ? std::max(0.0, values[s][c]) : 0.0;
      const double h = f.plot_h() * v / hi;
      const double x = stacked ? x0 : x0 + bar_w * static_cast<double>(s);
      const double y = f.top + f.plot_h() - f.plot_h() * (stacked ? base : 0) / hi - h;
      svg += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
                         "fill=\"{}\"><title>{} / {}: {}</title></rect>\n",
                         x, y, bar_w, h, palette(s), escape_xml(categories[c]),
                         escape_xml(s < stack_names.size() ? stack_names[s] : ""), v);
      if (stacked) base += v;
    }
    const double lx = f.left + slot * (static_cast<double>(c) + 0.5);
    const double ly = f.top + f.plot_h() + 12;
    if (horizontal_labels)
      svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", lx,
                         ly, escape_xml(categories[c]));
    else
      svg += fmt::format("<text transform=\"translate({:.1f},{:.1f}) rotate(-50)\" "
                         "text-anchor=\"end\">{}</text>\n",
                         lx, ly - 4, escape_xml(categories[c]));
  }
  svg += legend(f, stack_names);
  return svg + "</svg>\n";
}

}  // namespace telar::report
