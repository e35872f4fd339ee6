#include "adapt/lut.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "adapt/channel_groups.hpp"
#include "adapt/dense_lu.hpp"
#include "adapt/prune.hpp"
#include "adapt/resource.hpp"
#include "core/enum_names.hpp"
#include "core/error.hpp"
#include "graph/builder.hpp"
#include "graph/parameters.hpp"

namespace telar::adapt {

namespace {

inline constexpr EnumNames<LutInterpolation, LutInterpolation::RbfPrefit> kInterpolationNames{
    {"exact", "bilinear", "rbf", "rbf-prefit"}};

// φ(r) = r³ of the distance between (in_a, out_a) and (in_b, out_b).
double cube_of_distance(double in_a, double out_a, double in_b, double out_b) {
  const double r2 = (in_a - in_b) * (in_a - in_b) + (out_a - out_b) * (out_a - out_b);
  return r2 * std::sqrt(r2);
}

// Σ_j w_j·φ(|p_j − (in, out)|): a fitted RBF at one point. Eight partial sums, so that the loop
// vectorises (a query is issue 22's < 10 µs goal); compiled for AVX-512 and AVX2 beside the
// baseline, the best the CPU has chosen at run time.
__attribute__((target_clones("avx512f", "avx2", "default"))) double rbf_sum(const double* ins,
                                                                            const double* outs,
                                                                            const double* weights,
                                                                            std::size_t n,
                                                                            double in, double out) {
  constexpr std::size_t kLanes = 8;
  double sum[kLanes] = {};
  std::size_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (std::size_t l = 0; l < kLanes; ++l)
      sum[l] += weights[j + l] * cube_of_distance(ins[j + l], outs[j + l], in, out);
  double total = 0.0;
  for (; j < n; ++j) total += weights[j] * cube_of_distance(ins[j], outs[j], in, out);
  for (double s : sum) total += s;
  return total;
}

constexpr std::int64_t kConvStep = 8, kLinearStep = 64;

// As an adaptation measures a model (random weights: the latency does not depend on them).
double median_ms(const graph::Graph& g, const std::string& target, backend::Precision precision,
                 const backend::MeasureOptions& measure) {
  return ResourceMeter(ResourceKind::Latency, target, precision, measure)(
      g, graph::ParameterSet::initialize(g, 0));
}

// Whether the channels of `value` can change by pruning (some group of `prunable`, the groups'
// prunable ones, among them).
bool can_change(const ChannelGroups& groups, const std::vector<int>& prunable,
                graph::ValueId value) {
  for (const ChannelRun& r : groups.runs(value)) {
    const int g = groups.group_of_space(r.space);
    if (g >= 0 && std::find(prunable.begin(), prunable.end(), g) != prunable.end()) return true;
  }
  return false;
}

// The format's version: 2 measures each layer with cold caches (version 1 measured them warm);
// 3 adds the last line's `scale` (versions 1 and 2: 1); 4 its `memory_ms_per_mb` and `cache_mb`
// (before: 0, no memory term).
constexpr int kFormatVersion = 4;

// Random variants a build fits its table on besides the four widths: drawn from a stream of
// their own, so that `telar lut check`'s variants (Rng(--seed)) are not among them.
constexpr int kRandomCalibrationVariants = 12;
constexpr std::uint64_t kCalibrationStream = 0x6c75742d666974;  // "lut-fit"

// The bytes of one weight as a model compiled at `precision` holds it.
double bytes_per_weight(backend::Precision precision) {
  switch (precision) {
    case backend::Precision::BF16:
      return 2.0;
    case backend::Precision::INT8:
      return 1.0;
    case backend::Precision::FP32:
      break;
  }
  return 4.0;
}

// The last-level cache of this machine's CPU as the kernel describes it for CPU 0 (its data or
// unified cache of the highest level, e.g. "32768K"), in bytes; 0 where it does not say. (glibc's
// sysconf(_SC_LEVEL3_CACHE_SIZE) counts every L3 of an AMD package: 384 MB on a 2-vCPU slice.)
double cpu_cache_bytes() {
  const std::filesystem::path dir = "/sys/devices/system/cpu/cpu0/cache";
  int best_level = 0;
  double bytes = 0.0;
  for (int i = 0; i < 16; ++i) {
    const std::filesystem::path index = dir / ("index" + std::to_string(i));
    std::ifstream level_file(index / "level"), type_file(index / "type"), size_file(index / "size");
    int level = 0;
    std::string type, size;
    if (!(level_file >> level) || !(type_file >> type) || !(size_file >> size)) continue;
    if (type == "Instruction" || level <= best_level || size.empty()) continue;
    char* end = nullptr;
    const double n = std::strtod(size.c_str(), &end);
    const double unit = *end == 'K'   ? 1024.0
                        : *end == 'M' ? 1024.0 * 1024.0
                        : *end == 'G' ? 1024.0 * 1024.0 * 1024.0
                                      : 1.0;
    if (!(n > 0.0)) continue;
    best_level = level;
    bytes = n * unit;
  }
  return bytes;
}

// A table file's first line.
struct FileHeader {
  LatencyTable::Header header;
  std::map<std::string, std::string> keys;  // layer name -> key
};

// One entry line (`rest` unset) or the last line (`rest` set, with the rest of the fit).
struct FileLine {
  std::string key;
  std::int64_t in = 0, out = 0;
  double ms = 0.0;
  std::optional<double> rest;
  double scale = 1.0, memory_ms_per_mb = 0.0, cache_mb = 0.0, correlation = 1.0;
  std::optional<double> original_ms;  // the first calibration point's: the model as it is
};

// Every refusal names the file and line and says what to do.
template <class... Args>
[[noreturn]] void bad_line(const std::filesystem::path& file, int line,
                           fmt::format_string<Args...> what, Args&&... args) {
  fail("{}:{}: {}; build the table again (telar lut build)", file.string(), line,
       fmt::format(what, std::forward<Args>(args)...));
}

void only_keys(const nlohmann::json& j, std::initializer_list<std::string_view> known,
               const std::filesystem::path& file, int line) {
  for (const auto& [k, v] : j.items())
    if (std::find(known.begin(), known.end(), k) == known.end())
      bad_line(file, line, "unknown field '{}'", k);
}

std::string text_field(const nlohmann::json& j, const char* name, const std::filesystem::path& file,
                       int line) {
  const auto it = j.find(name);
  if (it == j.end() || !it->is_string() || it->get_ref<const std::string&>().empty())
    bad_line(file, line, "'{}' must be a non-empty string", name);
  return it->get<std::string>();
}

FileHeader parse_header(const std::string& text, const std::filesystem::path& file) {
  const auto h = nlohmann::json::parse(text, nullptr, false);
  if (!h.is_object() || !h.contains("format") || h["format"] != "telar-lut")
    fail("{}: not a latency table of telar lut build", file.string());
  only_keys(h, {"format", "version", "target", "precision", "model", "layers"}, file, 1);
  const auto version = h.find("version");
  if (version == h.end() || !version->is_number_integer() || version->get<std::int64_t>() < 1 ||
      version->get<std::int64_t>() > kFormatVersion)
    bad_line(file, 1, "'version' must be 1 to {} (a newer telar's table?)", kFormatVersion);
  FileHeader f;
  f.header = {text_field(h, "target", file, 1), text_field(h, "precision", file, 1),
              text_field(h, "model", file, 1)};
  const auto layers = h.find("layers");
  if (layers == h.end() || !layers->is_object()) bad_line(file, 1, "'layers' must be an object");
  for (const auto& [name, key] : layers->items()) {
    if (!key.is_string() || key.get_ref<const std::string&>().empty())
      bad_line(file, 1, "layer '{}' must name its key as a non-empty string", name);
    f.keys[name] = key.get<std::string>();
  }
  return f;
}

std::int64_t channel_field(const nlohmann::json& j, const char* name,
                           const std::filesystem::path& file, int line) {
  const auto it = j.find(name);
  if (it == j.end() || !it->is_number_integer() || it->get<std::int64_t>() < 1 ||
      it->get<std::int64_t>() > (std::int64_t{1} << 31))
    bad_line(file, line, "'{}' must be a channel count (a whole number from 1)", name);
  return it->get<std::int64_t>();
}

FileLine parse_line(const std::string& text, const std::filesystem::path& file, int line) {
  const auto e = nlohmann::json::parse(text, nullptr, false);
  if (!e.is_object()) bad_line(file, line, "not a JSON object (a damaged line)");
  FileLine f;
  if (e.contains("rest_ms")) {
    only_keys(e, {"rest_ms", "scale", "memory_ms_per_mb", "cache_mb", "correlation", "calibration"},
              file, line);
    if (!e["rest_ms"].is_number() || !std::isfinite(e["rest_ms"].get<double>()))
      bad_line(file, line, "'rest_ms' must be a finite number");
    f.rest = e["rest_ms"].get<double>();
    if (e.contains("scale")) {
      if (!e["scale"].is_number() || !std::isfinite(e["scale"].get<double>()) ||
          e["scale"].get<double>() <= 0.0)
        bad_line(file, line, "'scale' must be a positive number");
      f.scale = e["scale"].get<double>();
    }
    for (const auto& [name, field] :
         {std::pair{"memory_ms_per_mb", &f.memory_ms_per_mb}, std::pair{"cache_mb", &f.cache_mb}}) {
      if (!e.contains(name)) continue;
      if (!e[name].is_number() || !std::isfinite(e[name].get<double>()) ||
          e[name].get<double>() < 0.0)
        bad_line(file, line, "'{}' must be a finite number >= 0", name);
      *field = e[name].get<double>();
    }
    if (e.contains("correlation")) {
      if (!e["correlation"].is_number() || !(std::fabs(e["correlation"].get<double>()) <= 1.0))
        bad_line(file, line, "'correlation' must be a number from -1 to 1");
      f.correlation = e["correlation"].get<double>();
    }
    if (e.contains("calibration")) {
      const auto& points = e["calibration"];
      if (!points.is_array() || !std::all_of(points.begin(), points.end(), [](const auto& p) {
            return p.is_array() && p.size() == 3 &&
                   std::all_of(p.begin(), p.end(), [](const auto& x) {
                     return x.is_number() && std::isfinite(x.template get<double>()) &&
                            x.template get<double>() >= 0.0;
                   });
          }))
        bad_line(file, line,
                 "'calibration' must list points of three numbers >= 0 (layers' sum ms, MB past "
                 "the cache, whole model ms)");
      if (!points.empty() && points[0][2].get<double>() > 0.0)
        f.original_ms = points[0][2].get<double>();
    }
    return f;
  }
  only_keys(e, {"key", "in", "out", "ms"}, file, line);
  f.key = text_field(e, "key", file, line);
  f.in = channel_field(e, "in", file, line);
  f.out = channel_field(e, "out", file, line);
  if (!e.contains("ms") || !e["ms"].is_number() || !std::isfinite(e["ms"].get<double>()) ||
      e["ms"].get<double>() < 0.0)
    bad_line(file, line, "'ms' must be a finite number >= 0");
  f.ms = e["ms"].get<double>();
  return f;
}

}  // namespace

std::string_view interpolation_name(LutInterpolation i) {
  return kInterpolationNames(i);
}

LutInterpolation parse_interpolation(std::string_view text) {
  if (const auto i = kInterpolationNames.find(text)) return *i;
  fail("--lut-interpolation '{}' is not an interpolation; use {}", text,
       kInterpolationNames.choices());
}

std::vector<std::int64_t> lut_grid(std::int64_t top, std::int64_t step, bool changes) {
  std::vector<std::int64_t> v;
  for (std::int64_t n = top; n >= 1 && (changes || n == top); n -= step) v.push_back(n);
  return v;
}

std::vector<LutLayer> lut_layers(const graph::Graph& graph) {
  std::vector<LutLayer> out;
  for (const graph::Node& n : graph.nodes()) {
    const Shape& x = graph.value(n.inputs.at(0)).shape;
    if (n.kind == graph::OpKind::Linear) {
      const auto& a = n.attr<graph::LinearAttrs>();
      // Over rows ([B, L, in]) the rows of one sample are part of the layer's shape.
      std::string rows;
      for (std::size_t d = 1; d + 1 < x.size(); ++d)
        rows += (rows.empty() ? " rows " : "x") + std::to_string(x[d]);
      out.push_back({n.name,
                     fmt::format("linear {}->{}{}{}", a.in_features, a.out_features,
                                 a.bias ? " bias" : "", rows),
                     false, true, a.in_features, a.out_features,
                     shape_numel(graph.value(n.inputs.at(1)).shape)});
    } else if (n.kind == graph::OpKind::Conv2d) {
      const auto& a = n.attr<graph::Conv2dAttrs>();
      const bool depthwise =
          a.groups > 1 && a.groups == a.in_channels && a.out_channels == a.in_channels;
      const std::string kind = depthwise       ? "dwconv"
                               : a.groups == 1 ? "conv"
                                               : fmt::format("conv g{}", a.groups);
      out.push_back({n.name,
                     fmt::format("{} {}->{} {}x{} s{}x{} p{}x{} d{}x{}{} in {}x{}", kind,
                                 a.in_channels, a.out_channels, a.kernel_h, a.kernel_w, a.stride_h,
                                 a.stride_w, a.pad_h, a.pad_w, a.dilation_h, a.dilation_w,
                                 a.bias ? " bias" : "", x.at(2), x.at(3)),
                     depthwise, false, a.in_channels, a.out_channels,
                     shape_numel(graph.value(n.inputs.at(1)).shape)});
    }
  }
  return out;
}

std::map<std::string, std::int64_t> random_channel_counts(const graph::Graph& graph,
                                                          const ChannelGroups& groups, Rng& rng) {
  std::map<std::string, std::int64_t> counts;
  for (const int g : groups.prunable()) {
    const ChannelGroup& group = groups.groups()[static_cast<std::size_t>(g)];
    const std::int64_t steps = group.channels / kConvStep;
    if (steps < 1) continue;
    counts[graph.node(group.sources.front()).name] =
        kConvStep * (1 + static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(steps))));
  }
  return counts;
}

graph::Graph layer_model(const graph::Graph& graph, const LutLayer& layer, std::int64_t in,
                         std::int64_t out) {
  const graph::Node& n = *graph.find_node(layer.node);
  const Shape& s = graph.value(n.inputs.at(0)).shape;
  graph::GraphBuilder b("layer");
  if (layer.linear) {
    Shape rows(s.begin() + 1, s.end());  // [..., in] of one sample
    rows.back() = in;
    const graph::ValueId x = b.input("x", rows);
    b.output(b.linear(x, out, layer.node, n.attr<graph::LinearAttrs>().bias));
    return b.finish();
  }
  graph::Conv2dAttrs a = n.attr<graph::Conv2dAttrs>();
  a.post = {};
  a.in_channels = in;
  a.out_channels = layer.depthwise ? in : out;
  if (layer.depthwise) a.groups = in;
  const graph::ValueId x = b.input("x", {in, s.at(2), s.at(3)});
  b.output(b.conv2d(x, a, layer.node));
  return b.finish();
}

void LatencyTable::add(const std::string& key, std::int64_t in, std::int64_t out, double ms) {
  ms_[{key, in, out}] = ms;
  if (in != out) off_diagonal_.insert(key);
  auto& [ins, outs] = grid_[key];
  if (std::find(ins.begin(), ins.end(), in) == ins.end()) {
    ins.push_back(in);
    std::sort(ins.begin(), ins.end());
  }
  if (std::find(outs.begin(), outs.end(), out) == outs.end()) {
    outs.push_back(out);
    std::sort(outs.begin(), outs.end());
  }
}

LatencyTable LatencyTable::build(const graph::Graph& graph, const std::string& target,
                                 backend::Precision precision, const std::filesystem::path& file,
                                 const backend::MeasureOptions& measure, bool refit,
                                 const std::function<void(std::int64_t, std::int64_t)>& progress) {
  backend::check_usable(backend::parse_backend_spec(target), "--target cpu");
  LatencyTable t;
  t.header_ = {target, std::string(backend::precision_name(precision)), graph.name()};
  for (const LutLayer& layer : lut_layers(graph)) t.keys_[layer.node] = layer.key;
  // What is already measured (a build that was stopped).
  const bool created = !std::filesystem::exists(file);
  if (!created) {
    std::ifstream in(file);
    std::string line;
    std::getline(in, line);
    FileHeader h;
    try {
      h = parse_header(line, file);
    } catch (const Error& e) {
      fail("{} exists and is not a latency table telar can continue ({}); give another --out",
           file.string(), e.what());
    }
    require(h.header.target == target && h.header.precision == t.header_.precision &&
                h.header.model == graph.name(),
            "{} holds the table of {} on {} ({}); give another --out to build one for {} on {} "
            "({})",
            file.string(), h.header.model, h.header.target, h.header.precision, graph.name(),
            target, t.header_.precision);
    require(h.keys == t.keys_,
            "{} holds the table of another {} (its layers differ from this model's); give another "
            "--out to build one for this model",
            file.string(), h.header.model);
    std::string kept = line + "\n";
    for (int number = 2; std::getline(in, line); ++number) {
      FileLine e;
      try {
        e = parse_line(line, file, number);
      } catch (const Error&) {
        break;  // a line cut by the kill: measured again
      }
      if (e.rest) {  // finished: read as it is, or without its fit to make it again
        if (!refit) return read(file);
        break;
      }
      t.add(e.key, e.in, e.out, e.ms);
      kept += line + "\n";
    }
    in.close();
    std::ofstream(file, std::ios::trunc) << kept;  // without the cut line, to append after
  } else {
    std::ofstream out(file);
    require(static_cast<bool>(out),
            "cannot write {}: {}; check that its directory exists and is writable", file.string(),
            std::strerror(errno));
    out << nlohmann::json{{"format", "telar-lut"}, {"version", kFormatVersion},
                          {"target", target},      {"precision", t.header_.precision},
                          {"model", graph.name()}, {"layers", t.keys_}}
               .dump()
        << "\n";
  }
  // Every entry of every layer, identical layers once.
  const ChannelGroups groups(graph);
  const auto prunable = groups.prunable();
  std::vector<std::tuple<LutLayer, std::int64_t, std::int64_t>> todo;
  std::set<std::tuple<std::string, std::int64_t, std::int64_t>> planned;
  for (const LutLayer& layer : lut_layers(graph)) {
    const graph::Node& n = *graph.find_node(layer.node);
    const std::int64_t step = layer.linear ? kLinearStep : kConvStep;
    const bool in_changes = can_change(groups, prunable, n.inputs.at(0));
    const bool out_changes = can_change(groups, prunable, n.outputs.at(0));
    for (std::int64_t i : lut_grid(layer.in, step, in_changes))
      for (std::int64_t o :
           layer.depthwise ? std::vector<std::int64_t>{i} : lut_grid(layer.out, step, out_changes))
        if (!t.ms_.count({layer.key, i, o}) && planned.insert({layer.key, i, o}).second)
          todo.emplace_back(layer, i, o);
  }
  // The whole model against its layers' sum, at its own width, with every prunable group at
  // 3/4, 1/2 and 1/4 of its channels, and at random channel counts: layers timed alone do not
  // add up to the model (a one-layer model's fixed costs; pooling, activations and reorders are
  // in no entry; a small model's weights stay in the caches that each entry found cold, a large
  // one's in none, where a layer alone kept its own).
  std::vector<std::map<std::string, std::int64_t>> variants;
  for (const double keep : {1.0, 0.75, 0.5, 0.25}) {
    std::map<std::string, std::int64_t> counts;
    for (const int g : prunable) {
      const ChannelGroup& group = groups.groups()[static_cast<std::size_t>(g)];
      const std::int64_t kept =
          kConvStep * static_cast<std::int64_t>(static_cast<double>(group.channels) * keep /
                                                static_cast<double>(kConvStep));
      if (kept >= kConvStep && kept < group.channels)
        counts[graph.node(group.sources.front()).name] = kept;
    }
    if (keep == 1.0 || !counts.empty()) variants.push_back(std::move(counts));
  }
  Rng rng = Rng::derive(0, kCalibrationStream);
  if (variants.size() > 1)  // something can be pruned
    for (int v = 0; v < kRandomCalibrationVariants; ++v)
      variants.push_back(random_channel_counts(graph, groups, rng));
  std::ofstream out(file, std::ios::app);
  std::int64_t done = 0;
  const auto total = static_cast<std::int64_t>(todo.size() + variants.size());
  // Each layer alone with cold caches: inside the model its weights are not where its own
  // previous run left them.
  backend::MeasureOptions alone = measure;
  alone.cold_caches = true;
  for (const auto& [layer, i, o] : todo) {
    double ms = 0.0;
    try {
      ms = median_ms(layer_model(graph, layer, i, o), target, precision, alone);
    } catch (const Error&) {
      // A target that cannot run the model (a bad option, a precision it lacks) fails at the
      // first entry: a file this call began holds nothing to continue from then.
      if (created && done == 0) {
        out.close();
        std::error_code ec;
        std::filesystem::remove(file, ec);
      }
      throw;
    }
    t.add(layer.key, i, o, ms);
    out << nlohmann::json{{"key", layer.key}, {"in", i}, {"out", o}, {"ms", ms}}.dump() << "\n";
    out.flush();
    if (progress) progress(++done, total);
  }
  backend::MeasureOptions whole = measure;
  whole.duration_seconds = std::max(5 * measure.duration_seconds, 0.2);
  t.bytes_per_weight_ = bytes_per_weight(precision);
  t.cache_bytes_ = backend::parse_backend_spec(target).kind == "cpu" ? cpu_cache_bytes() : 0.0;
  std::vector<CalibrationPoint> calibration;
  for (const auto& counts : variants) {
    const graph::Graph variant = with_channel_counts(graph, counts);
    const std::vector<LutLayer> layers = lut_layers(variant);
    calibration.push_back({t.layers_ms(layers, LutInterpolation::Bilinear),
                           weights_past_cache_mb(layers, t.bytes_per_weight_, t.cache_bytes_),
                           median_ms(variant, target, precision, whole)});
    if (progress) progress(++done, total);
  }
  t.fit_ = fit_whole_model(calibration);
  t.fitted_original_ms_ = calibration.front().whole_ms;
  nlohmann::json points = nlohmann::json::array();
  for (const CalibrationPoint& p : calibration)
    points.push_back({p.layers_ms, p.past_cache_mb, p.whole_ms});
  out << nlohmann::json{{"rest_ms", t.fit_.rest_ms},
                        {"scale", t.fit_.scale},
                        {"memory_ms_per_mb", t.fit_.memory_ms_per_mb},
                        {"correlation", t.fit_.correlation},
                        {"cache_mb", t.cache_bytes_ / static_cast<double>(1 << 20)},
                        {"calibration", points}}
             .dump()
      << "\n";
  return t;
}

namespace {

// Least squares of the relative error: c minimising Σ ((x·c − y) / y)² over rows x and targets
// y > 0, by the normal equations; nothing where they are singular or the result not finite.
std::optional<std::vector<double>> relative_least_squares(
    const std::vector<std::vector<double>>& rows, const std::vector<double>& y) {
  const std::size_t n = rows.front().size();
  std::vector<double> normal(n * n, 0.0), rhs(n, 0.0);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const double w = 1.0 / (y[r] * y[r]);
    for (std::size_t i = 0; i < n; ++i) {
      rhs[i] += w * rows[r][i] * y[r];
      for (std::size_t j = 0; j < n; ++j) normal[i * n + j] += w * rows[r][i] * rows[r][j];
    }
  }
  std::vector<double> c;
  try {
    c = solve_dense(std::move(normal), std::move(rhs));
  } catch (const Error&) {
    return std::nullopt;
  }
  for (double v : c)
    if (!std::isfinite(v)) return std::nullopt;
  return c;
}

}  // namespace

double weights_past_cache_mb(const std::vector<LutLayer>& layers, double bytes_per_weight,
                             double cache_bytes) {
  if (cache_bytes <= 0.0) return 0.0;
  double all = 0.0, alone = 0.0;
  for (const LutLayer& l : layers) {
    const double bytes = static_cast<double>(l.weights) * bytes_per_weight;
    all += bytes;
    alone += std::max(0.0, bytes - cache_bytes);
  }
  return (std::max(0.0, all - cache_bytes) - alone) / static_cast<double>(1 << 20);
}

WholeModelFit fit_whole_model(const std::vector<CalibrationPoint>& points) {
  require(!points.empty(), "internal: no whole-model measurement to fit the table to");
  std::vector<double> y;
  double lo = points.front().layers_ms, hi = lo, mean_difference = 0.0;
  bool streams = false;
  for (const CalibrationPoint& p : points) {
    require(p.whole_ms > 0.0, "internal: a whole model measured at {} ms", p.whole_ms);
    y.push_back(p.whole_ms);
    lo = std::min(lo, p.layers_ms);
    hi = std::max(hi, p.layers_ms);
    mean_difference += (p.whole_ms - p.layers_ms) / static_cast<double>(points.size());
    streams = streams || p.past_cache_mb > 0.0;
  }
  // One width, or sums that do not vary: the layers as they are and the rest as the mean
  // difference.
  if (points.size() < 2 || !(hi - lo > 1e-6 * hi)) return {1.0, 0.0, mean_difference};
  double r = 1.0;  // the correlation of the layers' sums and the whole model's latencies
  if (points.size() >= 3) {
    const double n = static_cast<double>(points.size());
    double mx = 0.0, my = 0.0;
    for (const CalibrationPoint& p : points) {
      mx += p.layers_ms / n;
      my += p.whole_ms / n;
    }
    double sxy = 0.0, sxx = 0.0, syy = 0.0;
    for (const CalibrationPoint& p : points) {
      sxy += (p.layers_ms - mx) * (p.whole_ms - my);
      sxx += (p.layers_ms - mx) * (p.layers_ms - mx);
      syy += (p.whole_ms - my) * (p.whole_ms - my);
    }
    r = syy > 0.0 ? sxy / std::sqrt(sxx * syy) : 1.0;
    if (r < WholeModelFit::kMinCorrelation) return {1.0, 0.0, 0.0, r};
  }
  if (streams && points.size() >= 3) {
    std::vector<std::vector<double>> rows;
    for (const CalibrationPoint& p : points) rows.push_back({p.layers_ms, p.past_cache_mb, 1.0});
    if (const auto c = relative_least_squares(rows, y); c && (*c)[0] > 0.0 && (*c)[1] >= 0.0)
      return {(*c)[0], (*c)[1], (*c)[2], r};
  }
  std::vector<std::vector<double>> rows;
  for (const CalibrationPoint& p : points) rows.push_back({p.layers_ms, 1.0});
  if (const auto c = relative_least_squares(rows, y); c && (*c)[0] > 0.0)
    return {(*c)[0], 0.0, (*c)[1], r};
  return {1.0, 0.0, mean_difference, r};  // a line that falls as the layers grow: noise
}

LatencyTable LatencyTable::read(const std::filesystem::path& file) {
  std::ifstream in(file);
  require(static_cast<bool>(in) && !std::filesystem::is_directory(file),
          "{}: no such file (build it with telar lut build)", file.string());
  LatencyTable t;
  std::string line;
  std::getline(in, line);
  FileHeader h = parse_header(line, file);
  t.header_ = h.header;
  t.keys_ = std::move(h.keys);
  std::set<std::string> keys;
  for (const auto& [name, key] : t.keys_) keys.insert(key);
  bool complete = false;
  for (int number = 2; std::getline(in, line); ++number) {
    if (complete) {
      if (!line.empty()) bad_line(file, number, "a line after the table's last ('rest_ms')");
      continue;
    }
    const FileLine e = parse_line(line, file, number);
    if (e.rest) {
      t.fit_ = {e.scale, e.memory_ms_per_mb, *e.rest, e.correlation};
      t.bytes_per_weight_ =
          bytes_per_weight(backend::parse_precision(t.header_.precision, "the table's precision"));
      t.cache_bytes_ = e.cache_mb * static_cast<double>(1 << 20);
      t.fitted_original_ms_ = e.original_ms;
      complete = true;
      continue;
    }
    if (!keys.count(e.key)) bad_line(file, number, "'{}' is no layer's key in the header", e.key);
    if (t.ms_.count({e.key, e.in, e.out}))
      bad_line(file, number, "a second entry for '{}' at {} -> {} channels", e.key, e.in, e.out);
    t.add(e.key, e.in, e.out, e.ms);
  }
  require(complete,
          "{}: the table is not finished; run telar lut build again with the same "
          "options to complete it",
          file.string());
  return t;
}

double LatencyTable::layer_ms(const std::string& key, std::int64_t in, std::int64_t out,
                              LutInterpolation interpolation) const {
  if (const auto it = ms_.find({key, in, out}); it != ms_.end()) return it->second;
  const auto g = grid_.find(key);
  require(g != grid_.end(),
          "the latency table has no entries for a layer '{}'; build it for this model (telar "
          "lut build)",
          key);
  require(interpolation != LutInterpolation::Exact,
          "the latency table has no entry for '{}' at {} -> {} channels; use "
          "--lut-interpolation bilinear",
          key, in, out);
  if (interpolation == LutInterpolation::Rbf || interpolation == LutInterpolation::RbfPrefit) {
    // rbf fits afresh at every query off the grid, as the reference; rbf-prefit once per layer.
    Rbf fresh;
    const Rbf* fitted = &fresh;
    if (interpolation == LutInterpolation::Rbf) {
      fresh = fit_rbf(key);
    } else {
      auto it = rbf_fits_.find(key);
      if (it == rbf_fits_.end()) it = rbf_fits_.emplace(key, fit_rbf(key)).first;
      fitted = &it->second;
    }
    return rbf_sum(fitted->ins.data(), fitted->outs.data(), fitted->weights.data(),
                   fitted->weights.size(), static_cast<double>(in), static_cast<double>(out));
  }
  // The grid cell around (in, out), clamped at the grid's edges; a depthwise layer's entries
  // lie on the diagonal.
  const auto bracket = [](const std::vector<std::int64_t>& v, std::int64_t q) {
    auto hi = std::lower_bound(v.begin(), v.end(), q);
    if (hi == v.end()) return std::make_tuple(v.back(), v.back(), 0.0);
    if (hi == v.begin() || *hi == q) return std::make_tuple(*hi, *hi, 0.0);
    const std::int64_t a = *(hi - 1), b = *hi;
    return std::make_tuple(a, b, static_cast<double>(q - a) / static_cast<double>(b - a));
  };
  const auto& [ins, outs] = g->second;
  const auto [i0, i1, ti] = bracket(ins, in);
  if (!off_diagonal_.count(key)) {
    return (1 - ti) * ms_.at({key, i0, i0}) + ti * ms_.at({key, i1, i1});
  }
  const auto [o0, o1, to] = bracket(outs, out);
  const auto at = [&](std::int64_t i, std::int64_t o) {
    const auto it = ms_.find({key, i, o});
    require(it != ms_.end(), "the latency table has no entry for '{}' at {} -> {} channels", key, i,
            o);
    return it->second;
  };
  return (1 - ti) * ((1 - to) * at(i0, o0) + to * at(i0, o1)) +
         ti * ((1 - to) * at(i1, o0) + to * at(i1, o1));
}

LatencyTable::Rbf LatencyTable::fit_rbf(const std::string& key) const {
  Rbf f;
  std::vector<double> values;
  for (auto it = ms_.lower_bound({key, 0, 0}); it != ms_.end() && std::get<0>(it->first) == key;
       ++it) {
    f.ins.push_back(static_cast<double>(std::get<1>(it->first)));
    f.outs.push_back(static_cast<double>(std::get<2>(it->first)));
    values.push_back(it->second);
  }
  const std::size_t n = f.ins.size();
  std::vector<double> a(n * n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
      a[i * n + j] = cube_of_distance(f.ins[i], f.outs[i], f.ins[j], f.outs[j]);
  f.weights = solve_dense(std::move(a), std::move(values));
  return f;
}

namespace {

// A layer's key without its channel counts ("conv 1->64 11x11 ..." -> "conv 11x11 ..."): what
// pruning does not change.
std::string without_channels(const std::string& key) {
  const auto arrow = key.find("->");
  if (arrow == std::string::npos) return key;
  auto begin = arrow, end = arrow + 2;
  while (begin > 0 && std::isdigit(static_cast<unsigned char>(key[begin - 1]))) --begin;
  while (end < key.size() && std::isdigit(static_cast<unsigned char>(key[end]))) ++end;
  return key.substr(0, begin) + key.substr(end);
}

}  // namespace

void LatencyTable::require_model(const graph::Graph& graph, const std::string& table) const {
  require(header_.model == graph.name(),
          "the latency table {} was built for {}, not {}; build one for this model (telar lut "
          "build)",
          table, header_.model, graph.name());
  std::set<std::string> names;
  for (const LutLayer& layer : lut_layers(graph)) {
    names.insert(layer.node);
    const auto key = keys_.find(layer.node);
    require(key != keys_.end() && without_channels(key->second) == without_channels(layer.key),
            "the latency table {} was built for another {}: its layer '{}' is {} there and {} "
            "here; build one for this model (telar lut build)",
            table, header_.model, layer.node,
            key == keys_.end() ? std::string("missing") : "'" + key->second + "'",
            "'" + layer.key + "'");
    // A model of the table's is at most as wide as the table's grid: pruned, not widened.
    const auto grid = grid_.find(key->second);
    require(grid != grid_.end(),
            "the latency table {} has no entries for layer '{}'; build it "
            "again (telar lut build)",
            table, layer.node);
    const auto& [ins, outs] = grid->second;
    const std::int64_t most_in = *std::max_element(ins.begin(), ins.end());
    const std::int64_t most_out = *std::max_element(outs.begin(), outs.end());
    require(layer.in <= most_in && (layer.depthwise || layer.out <= most_out),
            "the latency table {} was built for a narrower {}: its layer '{}' goes up to {} -> {} "
            "channels there and has {} -> {} here; build one for this model (telar lut build)",
            table, header_.model, layer.node, most_in, most_out, layer.in, layer.out);
  }
  for (const auto& [name, key] : keys_)
    require(names.count(name) > 0,
            "the latency table {} was built for another {}: its layer '{}' is not in this model; "
            "build one for this model (telar lut build)",
            table, header_.model, name);
}

double LatencyTable::estimate(const graph::Graph& graph, LutInterpolation interpolation) const {
  const std::vector<LutLayer> layers = lut_layers(graph);
  return fit_.scale * layers_ms(layers, interpolation) +
         fit_.memory_ms_per_mb * weights_past_cache_mb(layers, bytes_per_weight_, cache_bytes_) +
         fit_.rest_ms;
}

double LatencyTable::layers_ms(const std::vector<LutLayer>& layers,
                               LutInterpolation interpolation) const {
  double ms = 0.0;
  for (const LutLayer& layer : layers) {
    const auto key = keys_.find(layer.node);
    require(key != keys_.end(),
            "the latency table (built for {}) has no layer '{}'; build it for this model (telar "
            "lut build)",
            header_.model, layer.node);
    ms += layer_ms(key->second, layer.in, layer.depthwise ? layer.in : layer.out, interpolation);
  }
  return ms;
}

}  // namespace telar::adapt
