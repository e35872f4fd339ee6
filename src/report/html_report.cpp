#include "report/html_report.hpp"

#include <fmt/format.h>

#include "core/files.hpp"
#include "core/version.hpp"
#include "report/svg_chart.hpp"

namespace telar::report {

void HtmlReport::heading(const std::string& text) {
  body_ += fmt::format("<h2>{}</h2>\n", escape_xml(text));
}

void HtmlReport::paragraph(const std::string& text) {
  body_ += fmt::format("<p>{}</p>\n", escape_xml(text));
}

void HtmlReport::key_values(const std::vector<std::pair<std::string, std::string>>& rows) {
  body_ += "<table class=\"kv\">\n";
  for (const auto& [k, v] : rows)
    body_ += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", escape_xml(k), escape_xml(v));
  body_ += "</table>\n";
}

void HtmlReport::table(const std::vector<std::string>& header,
                       const std::vector<std::vector<std::string>>& rows) {
  body_ += "<table>\n<tr>";
  for (const auto& h : header) body_ += fmt::format("<th>{}</th>", escape_xml(h));
  body_ += "</tr>\n";
  for (const auto& row : rows) {
    body_ += "<tr>";
    for (const auto& cell : row) body_ += fmt::format("<td>{}</td>", escape_xml(cell));
    body_ += "</tr>\n";
  }
  body_ += "</table>\n";
}

void HtmlReport::svg(const std::string& svg_markup) {
  body_ += "<div class=\"chart\">" + svg_markup + "</div>\n";
}

void HtmlReport::preformatted(const std::string& text) {
  body_ += "<pre>" + escape_xml(text) + "</pre>\n";
}

std::string HtmlReport::render() const {
  return fmt::format(
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{0}</title>\n<style>\n"
      "body{{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}}\n"
      "table{{border-collapse:collapse;margin:1em 0}} th,td{{border:1px solid #ccc;padding:3px "
      "8px;text-align:right}} th{{background:#f3f3f3}} table.kv th{{text-align:left}}\n"
      "td:first-child{{text-align:left}} pre{{background:#f7f7f7;padding:8px}} "
      ".chart{{margin:1em 0}}\n</style></head>\n<body>\n<h1>{0}</h1>\n{1}<footer><small>{2}"
      "</small></footer>\n</body></html>\n",
      escape_xml(title_), body_, escape_xml(build_summary()));
}

void HtmlReport::write(const std::filesystem::path& path) const { write_file_atomic(path, render()); }

}  // namespace telar::report
