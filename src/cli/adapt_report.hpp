#pragma once
// What telar adapt writes besides its checkpoint: history.csv (one row per iteration and
// candidate) and report.html (the accuracy against the resource as the network shrank, the
// channels of each group before and after, where the time went).
#include <filesystem>
#include <string>
#include <string_view>

#include "adapt/netadapt.hpp"

namespace telar::cli {

// `score`: the training-free score that chose the iterations marked by_score.
std::string adapt_history_csv(const adapt::AdaptResult& result, std::string_view score);

void write_adapt_report(const std::filesystem::path& path, const std::string& title,
                        const adapt::AdaptResult& result, const adapt::ResourceMeter& resource);

}  // namespace telar::cli
