#include "sim/report.hpp"

#include <unistd.h>

#include <atomic>
#include <ctime>

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

std::string describe(const HardwareConfig& hw) {
  std::string s = hw.mn == MultiplierNetwork::OsMesh
                      ? fmt::format("OS_MESH {}x{}", hw.ms_rows, hw.ms_cols)
                      : fmt::format("LINEAR {} MS", hw.ms_size);
  s += fmt::format(", {}, dn_bw {}, rn_bw {}", name(hw.rn), hw.dn_bw, hw.rn_bw);
  if (hw.accumulation_buffer && hw.mn == MultiplierNetwork::Linear) s += ", accumulation buffer";
  return s;
}

nlohmann::json stats_json(const OperationRecord& r) {
  using nlohmann::json;
  const HardwareConfig& hw = r.hw;
  const DenseOp& op = r.op;
  const Stats& st = r.result.stats;
  const TileGeometry g = tile_geometry(hw, op, r.tile);
  json j;
  j["hardwareConfiguration"] = {{"name", hw.name},
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
  const OpResult& res = r.result;
  j["telar"] = {{"stonne_command", stonne_command_line(hw, op, t)},
                {"mode", r.exact_cycle_loop ? "exact-cycle-loop" : "fast-forward"},
                {"simulated_cycles", res.simulated_cycles},
                {"skipped_cycles", st.cycles - res.simulated_cycles},
                {"steady_state_skips", res.skips},
                {"seconds", res.seconds},
                {"output_check",
                 {{"checked", res.output_checked},
                  {"correct", res.output_correct},
                  {"outputs", res.output.size()},
                  {"outputs_from_fabric", res.outputs_from_fabric},
                  {"max_abs_error", res.max_abs_error}}}};
  return j;
}

OperationFiles write_operation_files(const fs::path& dir, const OperationRecord& r) {
  ensure_writable_dir(dir);
  static std::atomic<unsigned> sequence{0};
  const std::string stem =
      fmt::format("output_stats_layer_{}_architecture_MSes_{}_dnbw_{}_rn_bw_{}timestamp_{}_{}",
                  r.op.layer_name, r.hw.multipliers(), r.hw.dn_bw, r.hw.rn_bw,
                  static_cast<long long>(std::time(nullptr)), ::getpid());
  OperationFiles files;
  for (int attempt = 0;; ++attempt) {
    require(attempt < 100000, "cannot find an unused file name in '{}'", dir.string());
    const std::string name = fmt::format("{}_{}", stem, sequence++);
    files.stats = dir / (name + ".txt");
    files.counters = dir / (name + ".counters");
    if (!fs::exists(files.stats) && !fs::exists(files.counters)) break;
  }
  write_file_atomic(files.stats, stats_json(r).dump(2) + "\n");
  write_file_atomic(files.counters, format_counters(r.result.stats.counters));
  return files;
}

}  // namespace telar::sim
