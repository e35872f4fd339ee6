#pragma once
// What telar adapt writes besides its checkpoint: history.csv (one row per iteration and
// candidate) and report.html (the accuracy against the resource as the network shrank, the
// channels of each group before and after, where the time went).
#include <filesystem>
#include <string>

#include "adapt/netadapt.hpp"

namespace telar::cli {

std::string adapt_history_csv(const adapt::AdaptResult& result);

void write_adapt_report(const std::filesystem::path& path, const std::string& title,
                        const adapt::AdaptResult& result, const adapt::ResourceMeter& resource);

}  // namespace telar::cli
