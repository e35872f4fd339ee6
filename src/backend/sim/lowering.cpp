#include "backend/sim/lowering.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>

#include "core/error.hpp"
#include "core/files.hpp"
#include "graph/cost.hpp"
#include "sim/mapper.hpp"

namespace telar::backend::sim {

namespace fs = std::filesystem;
namespace ts = telar::sim;
using graph::Lowering;
using graph::OpKind;

std::string component_of(const std::string& node_name) {
  const auto slash = node_name.find('/');
  return slash == std::string::npos ? node_name : node_name.substr(0, slash);
}

void prune_by_magnitude(Tensor& weights, double ratio) {
  require(ratio >= 0.0 && ratio <= 1.0, "weight sparsity {} must be between 0 and 1", ratio);
  float* w = weights.f32();
  const std::size_t n = static_cast<std::size_t>(weights.numel());
  const std::size_t zeros = static_cast<std::size_t>(std::floor(ratio * static_cast<double>(n)));
  if (zeros == 0) return;
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  auto smaller = [&](std::size_t a, std::size_t b) {
    const float fa = std::fabs(w[a]), fb = std::fabs(w[b]);
    return fa < fb || (fa == fb && a < b);
  };
  if (zeros < n)
    std::nth_element(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(zeros), order.end(),
                     smaller);
  for (std::size_t i = 0; i < zeros; ++i) w[order[i]] = 0.0f;
}

NodeSimulator::NodeSimulator(SimTarget target, SimOptions options)
    : target_(std::move(target)),
      options_(std::move(options)),
      energy_table_(options_.energy_table.empty() ? ts::default_energy_table()
                                                  : ts::load_energy_table(options_.energy_table)) {}

NodeSimulator::Route NodeSimulator::route(const graph::Node& node, bool pruned) const {
  switch (graph::node_lowering(node)) {
    case Lowering::Gemm:
    case Lowering::Conv:
      if (pruned && target_.pruned) return Route::Pruned;
      if (target_.dense) {
        if (node.kind == OpKind::Conv2d &&
            target_.dense->hw.controller == ts::Controller::MaeriDense) {
          const auto& a = node.attr<graph::Conv2dAttrs>();
          if (a.stride_h != a.stride_w || a.dilation_h != 1 || a.dilation_w != 1)
            return Route::Host;
        }
        return Route::Dense;
      }
      return Route::Host;
    case Lowering::SparseDense:
      return target_.sparse ? Route::Sparse : Route::Host;
    case Lowering::Host:
      return Route::Host;
  }
  return Route::Host;
}

bool NodeSimulator::needs_activations(const graph::Node& node, bool pruned) const {
  const Route r = route(node, pruned);
  if (r == Route::Sparse) return true;
  if (r == Route::Pruned) return true;
  return r == Route::Dense && target_.dense->hw.controller == ts::Controller::SigmaSparseGemm;
}

std::string NodeSimulator::host_note(const graph::Node& node, bool pruned) const {
  switch (graph::node_lowering(node)) {
    case Lowering::Gemm:
    case Lowering::Conv:
      if (node.kind == OpKind::Conv2d && target_.dense) {
        const auto& a = node.attr<graph::Conv2dAttrs>();
        if (a.stride_h != a.stride_w)
          return fmt::format(
              "runs on the host: MAERI's CONV takes one stride, this layer has {}x{}", a.stride_h,
              a.stride_w);
        return "runs on the host: MAERI's CONV has no dilation";
      }
      return fmt::format("runs on the host: sim:{} has no accelerator for dense layers{}",
                         target_.name, pruned ? " or pruned ones" : "");
    case Lowering::SparseDense:
      return fmt::format(
          "runs on the host: sim:{} has no MAGMA_SPARSE_DENSE accelerator for EmbeddingBags (give "
          "one as [sparse] in a hybrid .toml)",
          target_.name);
    case Lowering::Host:
      break;
  }
  return "runs on the host (no accelerator runs this op)";
}

fs::path NodeSimulator::tile_file(const std::string& node_name) const {
  if (auto it = target_.tile_files.find(node_name); it != target_.tile_files.end())
    return it->second;
  if (!options_.tile_dir.empty()) {
    const fs::path p = options_.tile_dir / (node_name + ".txt");
    if (is_file(p)) return p;  // false too for a node name too long for a file name
  }
  return {};
}

void NodeSimulator::add_call(NodeSimulation& n, const ts::OperationRecord& record, int repeats,
                             std::vector<fs::path>& files) {
  const ts::Stats& s = record.result.stats;
  const std::uint64_t r = static_cast<std::uint64_t>(repeats);
  n.calls += repeats;
  n.stats.cycles += s.cycles * r;
  n.stats.gb.weight_reads += s.gb.weight_reads * r;
  n.stats.gb.input_reads += s.gb.input_reads * r;
  n.stats.gb.psum_reads += s.gb.psum_reads * r;
  n.stats.gb.psum_writes += s.gb.psum_writes * r;
  n.stats.multiplications += s.multiplications * r;
  n.stats.multipliers = s.multipliers;
  n.stats.multipliers_mapped = std::max(n.stats.multipliers_mapped, s.multipliers_mapped);
  n.stats.counters = s.counters;
  n.energy += record.energy.total() * static_cast<double>(repeats);
  if (!options_.stats_dir.empty()) {
    if (!writer_) writer_ = std::make_unique<BackgroundWriter>();
    const ts::OperationFiles f = ts::write_operation_files(options_.stats_dir, record, *writer_);
    files.push_back(f.stats);
    files.push_back(f.counters);
  }
}

void NodeSimulator::finish_files() {
  if (writer_) writer_->finish();
}

// STONNE file names take no '/'.
static std::string layer_name_for_files(const std::string& node) {
  std::string s = node;
  std::replace(s.begin(), s.end(), '/', '.');
  return s.empty() ? "layer" : s;
}

const NodeSimulator::DenseResult& NodeSimulator::run_dense(const AcceleratorChoice& accel,
                                                           const ts::DenseOp& op,
                                                           const std::string& node_name) {
  const fs::path tile_path = tile_file(node_name);
  const std::string key =
      fmt::format("{}|{}|{}|{}|{}", ts::describe(accel.hw), ts::describe(op), tile_path.string(),
                  ts::name(accel.objective), options_.exact_cycle_loop);
  if (auto it = dense_cache_.find(key); it != dense_cache_.end()) return it->second;
  const ts::Accelerator accelerator(accel.hw);
  DenseResult d;
  ts::Tile tile;
  std::optional<ts::OpResult> mapped;
  if (!tile_path.empty()) {
    tile = ts::load_tile(tile_path, op.kind);
    ts::validate_tile(accel.hw, op, tile);
    d.tile_source = "tile file " + tile_path.string();
  } else {
    // A whole model maps many layers: the search simulates the 4 best-ranked candidates and
    // the best unfolded one (on the zoo's layers as good as the full search, 3x faster).
    const ts::MapChoice choice =
        ts::map_tile(accelerator, op, accel.objective, ts::MapBudget{4, 1, false});
    tile = choice.tile;
    if (!options_.exact_cycle_loop) mapped = choice.result;  // the mapper simulated it already
    d.tile_source = fmt::format("mapper ({})", ts::name(accel.objective));
  }
  ts::RunOptions ro;
  ro.compute_values = false;  // values come from the host
  ro.exact_cycle_loop = options_.exact_cycle_loop;
  d.record.hw = accel.hw;
  d.record.op = op;
  d.record.tile = tile;
  d.record.tile_source = d.tile_source;
  d.record.exact_cycle_loop = options_.exact_cycle_loop;
  if (mapped)
    d.record.result = std::move(*mapped);
  else
    d.record.result = accelerator.run(op, tile, ro);
  d.record.energy = ts::compute_energy(energy_table_, d.record.result.stats.counters);
  return dense_cache_.emplace(key, std::move(d)).first->second;
}

namespace {

// A Linear's rows, its GEMM's M: the batch times every axis before the features ([B, L, in]: a
// transformer's tokens).
int linear_rows(const graph::Graph& graph, const graph::Node& node, std::int64_t batch) {
  const Shape& x = graph.value(node.inputs.at(0)).shape;
  std::int64_t rows = batch;
  for (std::size_t k = 1; k + 1 < x.size(); ++k) rows *= x[k];
  return static_cast<int>(rows);
}

}  // namespace

NodeSimulation NodeSimulator::dense(const graph::Graph& graph, const graph::Node& node,
                                    const NodeOperands& o, const AcceleratorChoice& accel,
                                    std::vector<fs::path>& files) {
  NodeSimulation n;
  const std::string layer = layer_name_for_files(node.name);
  const bool mesh = accel.hw.controller == ts::Controller::TpuOsDense;
  auto finish_dense = [&](ts::DenseOp op, int repeats) {
    op.layer_name = layer;
    const DenseResult& d = run_dense(accel, op, node.name);
    n.workload = ts::describe(op) + (repeats > 1 ? fmt::format(" x{}", repeats) : "");
    n.tile = ts::describe(d.record.tile, op.kind) + " (" + d.tile_source + ")";
    add_call(n, d.record, repeats, files);
  };
  if (node.kind == OpKind::Linear) {
    const auto& a = node.attr<graph::LinearAttrs>();
    finish_dense(ts::make_gemm(ts::OpKind::Fc, linear_rows(graph, node, o.batch),
                               static_cast<int>(a.out_features), static_cast<int>(a.in_features)),
                 1);
    if (a.bias) n.note = "bias added on the host";
    return n;
  }
  const auto& a = node.attr<graph::Conv2dAttrs>();
  const Shape& in = graph.value(node.inputs[0]).shape;
  const Shape& out = graph.value(node.outputs[0]).shape;
  const int H = static_cast<int>(in[2]), W = static_cast<int>(in[3]);
  const int Ho = static_cast<int>(out[2]), Wo = static_cast<int>(out[3]);
  if (!mesh) {
    finish_dense(ts::make_conv(static_cast<int>(a.kernel_h), static_cast<int>(a.kernel_w),
                               static_cast<int>(a.in_channels), static_cast<int>(a.out_channels),
                               static_cast<int>(a.groups), static_cast<int>(o.batch),
                               H + 2 * static_cast<int>(a.pad_h), W + 2 * static_cast<int>(a.pad_w),
                               static_cast<int>(a.stride_h)),
                 1);
    n.note = "padding as a zero border of the input";
    if (a.bias) n.note += "; bias added on the host";
    return n;
  }
  // The mesh runs GEMMs: one im2col GEMM per group (all groups alike, simulated once).
  const int G = static_cast<int>(a.groups);
  finish_dense(ts::make_gemm(ts::OpKind::DenseGemm, static_cast<int>(o.batch) * Ho * Wo,
                             static_cast<int>(a.out_channels) / G,
                             static_cast<int>(a.kernel_h * a.kernel_w * a.in_channels) / G),
               G);
  n.note =
      G > 1 ? fmt::format("im2col GEMM per group, {} groups one after another", G) : "im2col GEMM";
  return n;
}

namespace {

// MK of a convolution's im2col for one group: rows (n, y, x), columns (c, r, s) as in the
// weights' OIHW layout; padding and zero activations are not stored.
ts::CsrMatrix im2col(const graph::Conv2dAttrs& a, const Tensor& x, int group, int Ho, int Wo) {
  const int N = static_cast<int>(x.dim(0)), C = static_cast<int>(x.dim(1));
  const int H = static_cast<int>(x.dim(2)), W = static_cast<int>(x.dim(3));
  const int Cg = C / static_cast<int>(a.groups);
  const int kh = static_cast<int>(a.kernel_h), kw = static_cast<int>(a.kernel_w);
  const float* v = x.f32();
  ts::CsrMatrix m;
  m.rows = N * Ho * Wo;
  m.cols = Cg * kh * kw;
  m.row_ptr.assign(1, 0);
  for (int n = 0; n < N; ++n)
    for (int oy = 0; oy < Ho; ++oy)
      for (int ox = 0; ox < Wo; ++ox) {
        for (int c = 0; c < Cg; ++c)
          for (int r = 0; r < kh; ++r)
            for (int s = 0; s < kw; ++s) {
              const int iy = oy * static_cast<int>(a.stride_h) - static_cast<int>(a.pad_h) +
                             r * static_cast<int>(a.dilation_h);
              const int ix = ox * static_cast<int>(a.stride_w) - static_cast<int>(a.pad_w) +
                             s * static_cast<int>(a.dilation_w);
              if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
              const float value =
                  v[((static_cast<std::size_t>(n) * C + group * Cg + c) * H + iy) * W + ix];
              if (value == 0.0f) continue;
              m.col.push_back((c * kh + r) * kw + s);
              m.values.push_back(value);
            }
        m.row_ptr.push_back(static_cast<std::int64_t>(m.col.size()));
      }
  return m;
}

ts::CsrMatrix rows_of(const float* data, int rows, int cols) {
  return ts::CsrMatrix::from_dense(
      std::vector<float>(data, data + static_cast<std::size_t>(rows) * cols), rows, cols);
}

}  // namespace

NodeSimulation NodeSimulator::sigma(const graph::Graph& graph, const graph::Node& node,
                                    const NodeOperands& o, const AcceleratorChoice& accel,
                                    std::vector<fs::path>& files) {
  require(o.x && o.weight, "internal: SIGMA lowering of '{}' without its operands", node.name);
  NodeSimulation n;
  const ts::Accelerator accelerator(accel.hw);
  ts::RunOptions ro;
  ro.compute_values = false;
  ro.exact_cycle_loop = options_.exact_cycle_loop;
  auto run = [&](ts::SparseGemmOp op, const std::string& what) {
    op.layer_name = layer_name_for_files(node.name);
    op.dataflow = ts::SparseDataflow::MkStrKnSta;  // the weights stay, the activations stream
    ts::OperationRecord record;
    record.hw = accel.hw;
    record.exact_cycle_loop = options_.exact_cycle_loop;
    record.result = accelerator.run(op, ro);
    record.sparse = ts::describe_operation(op, what);
    record.energy = ts::compute_energy(energy_table_, record.result.stats.counters);
    add_call(n, record, 1, files);
    return record;
  };
  if (node.kind == OpKind::Linear) {
    const auto& a = node.attr<graph::LinearAttrs>();
    ts::SparseGemmOp op;
    op.M = linear_rows(graph, node, o.batch);
    op.N = static_cast<int>(a.out_features);
    op.K = static_cast<int>(a.in_features);
    op.mk = rows_of(o.x->f32(), op.M, op.K);
    op.kn_t = rows_of(o.weight->f32(), op.N, op.K);
    const ts::OperationRecord r = run(std::move(op), "activations and weights of " + node.name);
    n.workload = ts::describe(*r.sparse);
    n.note = "weights stationary (MK_STR_KN_STA); zero activations and weights skipped";
    if (a.bias) n.note += "; bias added on the host";
    return n;
  }
  const auto& a = node.attr<graph::Conv2dAttrs>();
  const Shape& out = graph.value(node.outputs[0]).shape;
  const int Ho = static_cast<int>(out[2]), Wo = static_cast<int>(out[3]);
  const int G = static_cast<int>(a.groups);
  const int Og = static_cast<int>(a.out_channels) / G;
  const int Kg = static_cast<int>(a.in_channels / a.groups * a.kernel_h * a.kernel_w);
  std::string first;
  for (int g = 0; g < G; ++g) {
    ts::SparseGemmOp op;
    op.mk = im2col(a, *o.x, g, Ho, Wo);
    op.M = op.mk.rows;
    op.K = Kg;
    op.N = Og;
    op.kn_t = rows_of(o.weight->f32() + static_cast<std::size_t>(g) * Og * Kg, Og, Kg);
    const ts::OperationRecord r =
        run(std::move(op), "im2col activations and weights of " + node.name);
    if (g == 0) first = ts::describe(*r.sparse);
  }
  n.workload = first + (G > 1 ? fmt::format(" x{} groups", G) : "");
  n.note = "im2col GEMM per group, weights stationary (MK_STR_KN_STA)";
  if (a.bias) n.note += "; bias added on the host";
  return n;
}

NodeSimulation NodeSimulator::magma(const graph::Graph& /*graph*/, const graph::Node& node,
                                    const NodeOperands& o, const AcceleratorChoice& accel,
                                    std::vector<fs::path>& files) {
  require(o.indices && o.offsets, "internal: EmbeddingBag '{}' simulated without its indices",
          node.name);
  const auto& a = node.attr<graph::EmbeddingBagAttrs>();
  NodeSimulation n;
  // The bags as rows of a CSR matrix over the table's rows: the multi-hot rows, never dense.
  ts::SparseDenseOp op;
  op.layer_name = layer_name_for_files(node.name);
  op.M = static_cast<int>(o.offsets->numel());
  op.K = static_cast<int>(a.num_embeddings);
  op.N = static_cast<int>(a.dim);
  const std::int64_t nnz = o.indices->numel();
  const std::int64_t* idx = o.indices->data<std::int64_t>();
  const std::int64_t* off = o.offsets->data<std::int64_t>();
  op.mk.rows = op.M;
  op.mk.cols = op.K;
  op.mk.row_ptr.assign(off, off + op.M);
  op.mk.row_ptr.push_back(nnz);
  op.mk.col.resize(static_cast<std::size_t>(nnz));
  for (std::int64_t i = 0; i < nnz; ++i) {
    require(idx[i] >= 0 && idx[i] < a.num_embeddings,
            "EmbeddingBag '{}': index {} is outside the table's {} rows", node.name, idx[i],
            a.num_embeddings);
    op.mk.col[static_cast<std::size_t>(i)] = static_cast<int>(idx[i]);
  }
  op.mk.values.assign(static_cast<std::size_t>(nnz), 1.0f);
  const ts::Accelerator accelerator(accel.hw);
  ts::SparseDenseTile tile;
  std::string source;
  if (accel.sparse_tile) {
    tile = *accel.sparse_tile;
    source = "configuration";
  } else {
    const std::string key = options_.share_sparse_tiles
                                ? fmt::format("shape M={} N={} K={}", op.M, op.N, op.K)
                                : node.name;
    if (auto it = sparse_tiles_.find(key); it != sparse_tiles_.end()) {
      tile = it->second;
      source = options_.share_sparse_tiles
                   ? fmt::format("mapper ({}), shared by the EmbeddingBags of this shape",
                                 ts::name(accel.objective))
                   : "mapper (performance), first batch";
    } else {
      tile = ts::map_sparse_dense_tile(accelerator, op, accel.objective).tile;
      sparse_tiles_[key] = tile;
      source = fmt::format("mapper ({})", ts::name(accel.objective));
    }
  }
  ts::RunOptions ro;
  ro.compute_values = false;
  ro.exact_cycle_loop = options_.exact_cycle_loop;
  ts::OperationRecord record;
  record.hw = accel.hw;
  record.exact_cycle_loop = options_.exact_cycle_loop;
  record.tile_source = source;
  record.result = accelerator.run(op, tile, ro);
  record.sparse = ts::describe_operation(op, tile, "the batch's bags (indices, offsets)");
  record.energy = ts::compute_energy(energy_table_, record.result.stats.counters);
  add_call(n, record, 1, files);
  n.workload = ts::describe(*record.sparse);
  n.tile = ts::describe(tile) + " (" + source + ")";
  n.note = a.mode == graph::EmbeddingBagMode::Mean ? "bag sums on MAGMA, means on the host"
                                                   : "bag sums on MAGMA";
  if (a.per_sample_weights) n.note += "; per-sample weights as the sparse values";
  return n;
}

NodeSimulation NodeSimulator::simulate(const graph::Graph& graph, const graph::Node& node,
                                       const NodeOperands& operands, bool pruned,
                                       std::vector<fs::path>& files) {
  NodeSimulation n;
  const Route r = route(node, pruned);
  switch (r) {
    case Route::Host:
      n.target = "host";
      n.note = host_note(node, pruned);
      break;
    case Route::Dense:
      n = target_.dense->hw.controller == ts::Controller::SigmaSparseGemm
              ? sigma(graph, node, operands, *target_.dense, files)
              : dense(graph, node, operands, *target_.dense, files);
      n.target = target_.dense->hw.name;
      if (pruned && target_.dense->hw.controller != ts::Controller::SigmaSparseGemm)
        n.note += (n.note.empty() ? "" : "; ") +
                  std::string("pruned weights, but this accelerator does not skip zeros");
      break;
    case Route::Pruned:
      n = sigma(graph, node, operands, *target_.pruned, files);
      n.target = target_.pruned->hw.name;
      break;
    case Route::Sparse:
      n = magma(graph, node, operands, *target_.sparse, files);
      n.target = target_.sparse->hw.name;
      break;
  }
  n.node = node.name;
  n.op = std::string(graph::op_name(node.kind));
  n.component = component_of(node.name);
  return n;
}

}  // namespace telar::backend::sim
