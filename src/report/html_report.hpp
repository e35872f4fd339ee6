#pragma once
// A self-contained HTML report (inline CSS and SVG; opens offline in any browser).
#include <filesystem>
#include <string>
#include <vector>

namespace telar::report {

class HtmlReport {
 public:
  explicit HtmlReport(std::string title) : title_(std::move(title)) {}
  void heading(const std::string& text);              // <h2>
  void paragraph(const std::string& text);            // escaped text
  void key_values(const std::vector<std::pair<std::string, std::string>>& rows);
  void table(const std::vector<std::string>& header,
             const std::vector<std::vector<std::string>>& rows);
  void svg(const std::string& svg_markup);             // from report/svg_chart.hpp
  void preformatted(const std::string& text);
  std::string render() const;
  void write(const std::filesystem::path& path) const;  // atomic

 private:
  std::string title_;
  std::string body_;
};

}  // namespace telar::report
