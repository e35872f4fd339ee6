#pragma once
// What telar adapt writes besides its checkpoint: history.csv (one row per iteration and
// candidate) and report.html (the accuracy against the resource as the network shrank, the
// channels of each group before and after, where the time went).
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "adapt/netadapt.hpp"

namespace telar::cli {

// `score`: the training-free score that chose the iterations marked by_score.
std::string adapt_history_csv(const adapt::AdaptResult& result, std::string_view score);

// adapt_state.json, rewritten after every iteration: what `telar adapt --resume` continues
// from (the command's arguments, the original's figures as measured, the iterations done) and,
// once the run ended, why.
struct AdaptState {
  std::vector<std::string> args;  // as given, without --resume
  double original_resource = 0.0, original_accuracy = 0.0;
  std::vector<adapt::Iteration> done;
  std::string finished;  // empty while running
};
nlohmann::json adapt_state_json(const AdaptState& state);
// Throws telar::Error for a missing or malformed file, naming it.
AdaptState read_adapt_state(const std::filesystem::path& file);

void write_adapt_report(const std::filesystem::path& path, const std::string& title,
                        const adapt::AdaptResult& result, const adapt::ResourceMeter& resource);

}  // namespace telar::cli
