#pragma once
// report.html for a profile: what was counted and how, the totals of the run and its epochs,
// a per-batch timeline of every event and derived metric (one line per epoch), and a per-layer
// bar chart (forward and backward stacked) of every event summed over batches. Built on
// report/ (kept out of the counting library, which depends on core only).
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "prof/profile.hpp"
#include "report/html_report.hpp"

namespace telar::prof {

// Appends the profile's sections to an existing report.
void add_profile_sections(report::HtmlReport& html, const Profile& profile);

// The files a profiled command leaves in its run directory: counters.csv, metrics.csv and
// report.html (each written atomically). `extra` key-values head the report.
void write_profile_files(const Profile& profile, const std::filesystem::path& dir,
                         const std::string& title,
                         const std::vector<std::pair<std::string, std::string>>& extra = {});

}  // namespace telar::prof
