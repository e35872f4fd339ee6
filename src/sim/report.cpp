#include "sim/report.hpp"

#include <unistd.h>

#include <atomic>
#include <ctime>

#include "core/background_writer.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "sim/stonne_args.hpp"

namespace telar::sim {

namespace fs = std::filesystem;

std::string describe(const DenseOp& op) {
  if (op.kind != OpKind::Conv)
    return fmt::format("{} M={} N={} K={}", name(op.kind), op.gemm_M, op.gemm_N, op.gemm_K);
  return fmt::format("CONV R={} S={} C={} K={} G={} N={} X={} Y={} stride={}", op.R, op.S, op.C,
                     op.K, op.G, op.N, op.X, op.Y, op.stride);
}

SparseOperation describe_operation(const SparseDenseOp& op, const SparseDenseTile& tile,
                                   std::string operands) {
  SparseOperation s;
  s.kind = "SparseDense";
  s.layer_name = op.layer_name;
  s.M = op.M, s.N = op.N, s.K = op.K;
  s.mk_nnz = op.mk.nnz();
  s.kn_nnz = 1LL * op.K * op.N;
  s.tile = tile;
  s.operands = std::move(operands);
  return s;
}

SparseOperation describe_operation(const SparseGemmOp& op, std::string operands) {
  SparseOperation s;
  s.kind = "SparseGEMM";
  s.layer_name = op.layer_name;
  s.M = op.M, s.N = op.N, s.K = op.K;
  s.mk_nnz = op.mk.nnz();
  s.kn_nnz = op.kn_t.nnz();
  s.dataflow = op.dataflow;
  s.operands = std::move(operands);
  return s;
}

namespace {
double sparsity_percent(std::int64_t nnz, long long elements) {
  return elements > 0 ? 100.0 * static_cast<double>(elements - nnz) / static_cast<double>(elements)
                      : 0.0;
}
}  // namespace

std::string describe(const SparseOperation& op) {
  const double mk = sparsity_percent(op.mk_nnz, 1LL * op.M * op.K);
  if (op.kind == "SparseDense")
    return fmt::format("SparseDense M={} N={} K={} ({} non-zeros, {:.1f}% sparse)", op.M, op.N,
                       op.K, op.mk_nnz, mk);
  return fmt::format("SparseGEMM M={} N={} K={} {} (MK {:.1f}% sparse, KN {:.1f}% sparse)", op.M,
                     op.N, op.K, name(op.dataflow), mk,
                     sparsity_percent(op.kn_nnz, 1LL * op.K * op.N));
}

std::string describe(const HardwareConfig& hw) {
  std::string s = hw.mn == MultiplierNetwork::OsMesh
                      ? fmt::format("OS_MESH {}x{}", hw.ms_rows, hw.ms_cols)
                      : fmt::format("LINEAR {} MS", hw.ms_size);
  s += fmt::format(", {}, dn_bw {}, rn_bw {}", name(hw.rn), hw.dn_bw, hw.rn_bw);
  if (hw.accumulation_buffer && hw.mn == MultiplierNetwork::Linear) s += ", accumulation buffer";
  return s;
}

namespace {

nlohmann::json hardware_json(const HardwareConfig& hw) {
  return {{"name", hw.name},
          {"MSNetwork",
           {{"multiplier_network_type", std::string(name(hw.mn))},
            {"ms_rows", hw.ms_rows},
            {"ms_columns", hw.ms_cols},
            {"ms_size", hw.ms_size}}},
          {"ReduceNetwork",
           {{"reduce_network_type", std::string(name(hw.rn))},
            {"accumulation_buffer_enabled", hw.accumulation_buffer ? 1 : 0}}},
          {"SDMemory",
           {{"mem_controller_type", std::string(name(hw.controller))},
            {"dn_bw", hw.dn_bw},
            {"rn_bw", hw.rn_bw}}}};
}

nlohmann::json energy_json(const EnergyBreakdown& e) {
  nlohmann::json sections = nlohmann::json::object();
  for (const auto& part : e.sections)
    sections[part.section] = {
        {"static", part.static_energy}, {"dynamic", part.dynamic_energy}, {"area", part.area}};
  return {{"static", e.static_energy},
          {"dynamic", e.dynamic_energy},
          {"total", e.total()},
          {"area", e.area},
          {"sections", sections}};
}

// What telar adds to STONNE's statistics: how the run was simulated (`skips_name` says what a
// skip is for this engine) and the check of its outputs against the reference kernel.
nlohmann::json telar_run_json(const OperationRecord& r, const char* skips_name) {
  const OpResult& res = r.result;
  return {{"mode", r.exact_cycle_loop ? "exact-cycle-loop" : "fast-forward"},
          {"simulated_cycles", res.simulated_cycles},
          {"skipped_cycles", res.stats.cycles - res.simulated_cycles},
          {skips_name, res.skips},
          {"seconds", res.seconds},
          {"output_check",
           {{"checked", res.output_checked},
            {"correct", res.output_correct},
            {"outputs", res.output.size()},
            {"outputs_from_fabric", res.outputs_from_fabric},
            {"max_abs_error", res.max_abs_error}}}};
}

nlohmann::json sparse_stats_json(const OperationRecord& r) {
  using nlohmann::json;
  const SparseOperation& op = *r.sparse;
  const Stats& st = r.result.stats;
  const OpResult& res = r.result;
  const bool magma = op.kind == "SparseDense";
  json j;
  j["hardwareConfiguration"] = hardware_json(r.hw);
  j["LayerConfiguration"] = {{"Layer_Type", magma ? "SPARSE_DENSE" : "GEMM"},
                             {"Layer_Name", op.layer_name},
                             {"M", op.M},
                             {"N", op.N},
                             {"K", op.K},
                             {"MK_nnz", op.mk_nnz},
                             {"KN_nnz", op.kn_nnz},
                             {"operands", op.operands}};
  if (magma)
    j["TileConfiguration"] = {
        {"T_N", op.tile.T_N}, {"T_K", op.tile.T_K}, {"source", r.tile_source}};
  j["GlobalStats"] = {{"N_cycles", st.cycles}};
  const double mk_sparsity = sparsity_percent(op.mk_nnz, 1LL * op.M * op.K);
  const double kn_sparsity = sparsity_percent(op.kn_nnz, 1LL * op.K * op.N);
  const bool mk_sta = magma || op.dataflow == SparseDataflow::MkStaKnStr;
  j["SDMemoryStats"] = {
      {"Total_cycles", st.cycles},
      {"N_SRAM_weight_reads", st.gb.weight_reads},
      {"N_SRAM_input_reads", st.gb.input_reads},
      {"N_SRAM_psum_reads", st.gb.psum_reads},
      {"N_SRAM_psum_writes", st.gb.psum_writes},
      {"Dataflow", magma ? "SPARSE_DENSE_DATAFLOW" : std::string(name(op.dataflow))},
      {"STA_sparsity", mk_sta ? mk_sparsity : kn_sparsity},
      {"STR_sparsity", mk_sta ? kn_sparsity : mk_sparsity},
      {"N_reconfigurations", res.reconfigurations}};
  j["MSNetworkStats"] = {{"N_multiplications", st.multiplications},
                         {"multipliers", st.multipliers},
                         {"utilization", st.utilization()}};
  j["Energy"] = energy_json(r.energy);
  json telar = telar_run_json(r, magma ? "rows_skipped" : "steady_state_skips");
  SparseArgs args;
  args.M = op.M, args.N = op.N, args.K = op.K;
  args.mk_sparsity = op.mk_sparsity, args.kn_sparsity = op.kn_sparsity;
  args.dataflow = op.dataflow;
  args.tile = op.tile;
  telar["stonne_command"] =
      stonne_command_line(r.hw, args, magma ? CommandKind::SparseDense : CommandKind::SparseGemm);
  j["telar"] = telar;
  return j;
}

}  // namespace

nlohmann::json stats_json(const OperationRecord& r) {
  using nlohmann::json;
  if (r.sparse) return sparse_stats_json(r);
  const HardwareConfig& hw = r.hw;
  const DenseOp& op = r.op;
  const Stats& st = r.result.stats;
  const TileGeometry g = tile_geometry(hw, op, r.tile);
  json j;
  j["hardwareConfiguration"] = hardware_json(hw);
  j["LayerConfiguration"] = {{"Layer_Type", std::string(name(op.kind))},
                             {"Layer_Name", op.layer_name},
                             {"R", op.R},
                             {"S", op.S},
                             {"C", op.c_per_group()},
                             {"K", op.k_per_group()},
                             {"G", op.G},
                             {"N", op.N},
                             {"X", op.X},
                             {"Y", op.Y},
                             {"X_", op.out_x()},
                             {"Y_", op.out_y()},
                             {"strides", op.stride}};
  if (op.kind != OpKind::Conv)
    j["LayerConfiguration"]["GEMM"] = {{"M", op.gemm_M}, {"N", op.gemm_N}, {"K", op.gemm_K}};
  const Tile& t = r.tile;
  j["TileConfiguration"] = {{"T_R", t.T_R},
                            {"T_S", t.T_S},
                            {"T_C", t.T_C},
                            {"T_K", t.T_K},
                            {"T_G", t.T_G},
                            {"T_N", t.T_N},
                            {"T_X_", t.T_X},
                            {"T_Y_", t.T_Y},
                            {"VN_Size", g.vn_size},
                            {"Num_VNs", g.num_vns},
                            {"folding_enabled", g.folding ? 1 : 0},
                            {"n_folding", g.n_folding},
                            {"source", r.tile_source}};
  j["GlobalStats"] = {{"N_cycles", st.cycles}};
  j["SDMemoryStats"] = {{"Total_cycles", st.cycles},
                        {"N_SRAM_weight_reads", st.gb.weight_reads},
                        {"N_SRAM_input_reads", st.gb.input_reads},
                        {"N_SRAM_psum_reads", st.gb.psum_reads},
                        {"N_SRAM_psum_writes", st.gb.psum_writes},
                        {"Dataflow", "CNN_DATAFLOW"}};
  j["MSNetworkStats"] = {{"N_multiplications", st.multiplications},
                         {"multipliers", st.multipliers},
                         {"multipliers_mapped", st.multipliers_mapped},
                         {"utilization", st.utilization()}};
  json energy_sections = json::object();
  for (const auto& part : r.energy.sections)
    energy_sections[part.section] = {
        {"static", part.static_energy}, {"dynamic", part.dynamic_energy}, {"area", part.area}};
  j["Energy"] = {{"static", r.energy.static_energy},
                 {"dynamic", r.energy.dynamic_energy},
                 {"total", r.energy.total()},
                 {"area", r.energy.area},
                 {"sections", energy_sections}};
  j["telar"] = telar_run_json(r, "steady_state_skips");
  j["telar"]["stonne_command"] = stonne_command_line(hw, op, t);
  return j;
}

namespace {

// Unused names for a record's two files in `dir` (made if needed).
OperationFiles name_operation_files(const fs::path& dir, const OperationRecord& r) {
  ensure_writable_dir(dir);
  static std::atomic<unsigned> sequence{0};
  const std::string stem =
      fmt::format("output_stats_layer_{}_architecture_MSes_{}_dnbw_{}_rn_bw_{}timestamp_{}_{}",
                  r.sparse ? r.sparse->layer_name : r.op.layer_name, r.hw.multipliers(), r.hw.dn_bw,
                  r.hw.rn_bw, static_cast<long long>(std::time(nullptr)), ::getpid());
  OperationFiles files;
  for (int attempt = 0;; ++attempt) {
    require(attempt < 100000, "cannot find an unused file name in '{}'", dir.string());
    const std::string name = fmt::format("{}_{}", stem, sequence++);
    files.stats = dir / (name + ".txt");
    files.counters = dir / (name + ".counters");
    if (!fs::exists(files.stats) && !fs::exists(files.counters)) break;
  }
  return files;
}

std::string stats_text(const OperationRecord& r) { return stats_json(r).dump(2) + "\n"; }

}  // namespace

OperationFiles write_operation_files(const fs::path& dir, const OperationRecord& r) {
  const OperationFiles files = name_operation_files(dir, r);
  write_file_atomic(files.stats, stats_text(r));
  write_file_atomic(files.counters, format_counters(r.result.stats.counters));
  return files;
}

OperationFiles write_operation_files(const fs::path& dir, const OperationRecord& r,
                                     BackgroundWriter& writer) {
  const OperationFiles files = name_operation_files(dir, r);
  writer.write(files.stats, stats_text(r));
  writer.write(files.counters, format_counters(r.result.stats.counters));
  return files;
}

}  // namespace telar::sim
