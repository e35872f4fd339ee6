#pragma once
// NetAdapt's latency look-up table (seed 003, Algorithms 2 and 3): each Conv2d and Linear of a
// model measured alone on the target over a grid of its input and output channel counts (conv
// step 8, FC step 64, depthwise with out = in), identical layers measured once; a model's
// latency is then the sum of its layers' entries, interpolated between grid points, corrected
// by a fit to the whole model measured at several widths (what layers alone miss or add:
// pooling, activations, reorders, a one-layer model's fixed costs, weights that a layer alone
// kept in the cache and the model streams from memory).
//
// The file is text, one JSON object per line: a header (target, precision, model), then one
// line per measured entry, appended as it is measured, so that a build that is killed resumes
// where it stopped; the last line holds the fit and the whole-model points it was made on.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "adapt/channel_groups.hpp"
#include "backend/backend.hpp"
#include "backend/measure.hpp"
#include "core/rng.hpp"
#include "graph/graph.hpp"

namespace telar::adapt {

// How entries between grid points are estimated: `exact` (a query off the grid is an error),
// `bilinear` (on the grid's cell; clamped outside it), `rbf` (NetAdapt's reference:
// scipy.interpolate.Rbf(in, out, ms, function='cubic'), φ(r) = r³ and no polynomial term, fitted
// on all of the layer's points by a dense solve at every query off the grid), `rbf-prefit` (the
// same fit, made once per layer and kept).
enum class LutInterpolation : std::uint8_t { Exact, Bilinear, Rbf, RbfPrefit };
std::string_view interpolation_name(LutInterpolation i);
LutInterpolation parse_interpolation(std::string_view text);

// A Conv2d or Linear of a model as the table keys it: what its latency depends on besides its
// channel counts, and those counts.
struct LutLayer {
  std::string node;  // its name in the model
  // What it is as built (its channel counts there included: layers alike in all of this share
  // their entries), e.g. "conv 32->64 3x3 s1x1 p1x1 d1x1 bias in 16x16". A table keeps each
  // layer's key as the model it was built for had it; a pruned model's layers are found by name.
  std::string key;
  bool depthwise = false;
  bool linear = false;
  std::int64_t in = 0, out = 0;
  std::int64_t weights = 0;  // elements of its weight tensor
};
std::vector<LutLayer> lut_layers(const graph::Graph& graph);

// NetAdapt's grid of one dimension: the count `top`, then down by `step` while at least 1; only
// `top` where the count cannot change.
std::vector<std::int64_t> lut_grid(std::int64_t top, std::int64_t step, bool changes);

// A one-node model of `layer` at `in` and `out` channels (batch first): what an entry measures.
graph::Graph layer_model(const graph::Graph& graph, const LutLayer& layer, std::int64_t in,
                         std::int64_t out);

// Random channel counts of `graph`'s prunable groups, each a multiple of 8 from 8 to the
// group's own count (a group of fewer than 8 channels is kept), by the name of the group's
// first layer as with_channel_counts takes them: the pruned variants a table is fitted and
// checked on.
std::map<std::string, std::int64_t> random_channel_counts(const graph::Graph& graph,
                                                          const ChannelGroups& groups, Rng& rng);

// The megabytes (2^20 bytes) of weights that `layers` stream from memory on every run of the
// model and that their entries did not: on a CPU whose last-level cache holds `cache_bytes`, a
// model whose weights exceed it finds none of them cached by its next run (each run evicts them
// in the order it reads them), where a layer timed alone kept its own weights cached if they
// fit. max(0, W - C) - Σ max(0, w - C) over the layers' weight bytes w (W their sum, C the
// cache); 0 where `cache_bytes` is 0 (targets without such a cache: simulators, GPUs).
double weights_past_cache_mb(const std::vector<LutLayer>& layers, double bytes_per_weight,
                             double cache_bytes);

// A whole model measured against its table: its layers' sum and weights past the cache, and
// its own latency.
struct CalibrationPoint {
  double layers_ms = 0.0, past_cache_mb = 0.0, whole_ms = 0.0;
};
// whole = scale x layers + memory x past-cache MB + rest, fitted by least squares on the
// relative error (a narrow model's error counts as much as a wide one's). Without the memory
// term where no point streams weights or its factor comes out negative; scale 1 and the mean
// difference where the layers' sums do not vary or the line falls. Where the whole model's
// latency does not follow its layers' sum (their correlation over 3 points or more below 0.5:
// measured on a busy machine), no fit: the layers' sum alone, NetAdapt's own estimate.
struct WholeModelFit {
  double scale = 1.0, memory_ms_per_mb = 0.0, rest_ms = 0.0;
  double correlation = 1.0;  // of the layers' sums and the whole model's latencies
  bool follows() const { return correlation >= kMinCorrelation; }
  static constexpr double kMinCorrelation = 0.5;
};
WholeModelFit fit_whole_model(const std::vector<CalibrationPoint>& points);

class LatencyTable {
 public:
  struct Header {
    std::string target, precision, model;
  };

  // Builds (or, where `file` holds part of one for the same target and model, completes) the
  // table of `graph` and writes it to `file`. `refit`: a finished table keeps its entries and
  // has its fit made again (the whole model measured anew). `progress(done, total)` after each
  // entry and whole-model measurement.
  static LatencyTable build(const graph::Graph& graph, const std::string& target,
                            backend::Precision precision, const std::filesystem::path& file,
                            const backend::MeasureOptions& measure, bool refit = false,
                            const std::function<void(std::int64_t, std::int64_t)>& progress = {});
  // Reads a complete table; throws telar::Error for a missing, damaged or unfinished file.
  static LatencyTable read(const std::filesystem::path& file);

  const Header& header() const { return header_; }
  std::size_t entries() const { return ms_.size(); }
  // A model's latency is estimated as scale x its layers' entries + memory x its weights past
  // the cache + rest (fit_whole_model), fitted to the whole model measured at its own width,
  // at 3/4, 1/2 and 1/4 of it, and at random channel counts.
  const WholeModelFit& fit() const { return fit_; }
  // The last-level cache of the machine the table was built on (0: no memory term).
  double cache_bytes() const { return cache_bytes_; }
  // The model as it is (unpruned), measured whole when the fit was made; none in tables
  // written before format 4 kept it.
  std::optional<double> fitted_original_ms() const { return fitted_original_ms_; }
  // Throws telar::Error unless `graph` is the table's model, maybe pruned: its name, and each
  // Conv2d and Linear by name alike in everything but its channel counts (kind, kernel,
  // stride, padding, input size). `table` names the table's file in the message.
  void require_model(const graph::Graph& graph, const std::string& table) const;
  // The estimated latency of `graph` (a model of the table's, maybe pruned): milliseconds.
  // Throws telar::Error naming a layer the table has no entries for.
  double estimate(const graph::Graph& graph, LutInterpolation interpolation) const;
  // The sum of the entries of `layers` (lut_layers of a model of the table's) alone.
  double layers_ms(const std::vector<LutLayer>& layers, LutInterpolation interpolation) const;
  // One layer's entry at `in` and `out` channels.
  double layer_ms(const std::string& key, std::int64_t in, std::int64_t out,
                  LutInterpolation interpolation) const;

 private:
  Header header_;
  std::map<std::tuple<std::string, std::int64_t, std::int64_t>, double> ms_;
  std::map<std::string, std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>>> grid_;
  std::map<std::string, std::string> keys_;  // by layer name
  std::set<std::string> off_diagonal_;       // keys with an entry of in != out (not depthwise)
  // A layer's cubic RBF: its points (input and output channel counts) and their weights.
  struct Rbf {
    std::vector<double> ins, outs, weights;
  };
  Rbf fit_rbf(const std::string& key) const;
  mutable std::map<std::string, Rbf> rbf_fits_;  // rbf-prefit's, by key
  WholeModelFit fit_;
  double cache_bytes_ = 0.0, bytes_per_weight_ = 4.0;
  std::optional<double> fitted_original_ms_;
  void add(const std::string& key, std::int64_t in, std::int64_t out, double ms);
};

}  // namespace telar::adapt
