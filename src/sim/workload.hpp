#pragma once
// Dense operations and their tiles, in STONNE's CONV taxonomy: every dense operation is a
// convolution R×S×C×K with G groups over N inputs of X×Y pixels; FC and DenseGEMM are mapped
// onto it exactly as STONNE maps them (R=1, S=K_gemm, C=1, K=N_gemm, G=1, N=1, X=M, Y=K_gemm).
#include <filesystem>
#include <string>
#include <string_view>

#include "sim/config.hpp"

namespace telar::sim {

enum class OpKind { Conv, Fc, DenseGemm };
std::string_view name(OpKind kind);  // "CONV", "FC", "DenseGEMM"

struct DenseOp {
  OpKind kind = OpKind::Conv;
  std::string layer_name = "TestLayer";
  // CONV view (C and K are totals over the groups, as users give them).
  int R = 1, S = 1, C = 1, K = 1, G = 1, N = 1, X = 1, Y = 1, stride = 1;
  // GEMM view for FC/DenseGEMM: output M×N, reduction K (STONNE's -M -N -K).
  int gemm_M = 0, gemm_N = 0, gemm_K = 0;

  int out_x() const { return (X - R + stride) / stride; }  // X'
  int out_y() const { return (Y - S + stride) / stride; }  // Y'
  int c_per_group() const { return C / G; }
  int k_per_group() const { return K / G; }
  long long macs() const;             // useful multiply-accumulates
  long long input_elements() const;   // N·X·Y·C
  long long weight_elements() const;  // R·S·(C/G)·K
  long long output_elements() const;  // N·X'·Y'·K
};

DenseOp make_conv(int R, int S, int C, int K, int G, int N, int X, int Y, int stride);
// STONNE's -FC and -DenseGEMM: output M×N = MK (M×K) · KNᵀ (N×K).
DenseOp make_gemm(OpKind kind, int M, int N, int K);

// Checks the layer itself (positive sizes, groups dividing C and K, the window fitting);
// throws telar::Error naming the constraint.
void validate(const DenseOp& op);

// Tile in the CONV taxonomy. T_X/T_Y are STONNE's T_X' and T_Y'.
struct Tile {
  int T_R = 1, T_S = 1, T_C = 1, T_K = 1, T_G = 1, T_N = 1, T_X = 1, T_Y = 1;
  bool operator==(const Tile&) const = default;
};
// STONNE's GEMM tile (-T_M -T_N -T_K) in CONV form: T_S=T_K, T_K=T_N, T_X'=T_M.
Tile make_gemm_tile(int T_M, int T_N, int T_K);
std::string describe(const Tile& t, OpKind kind);  // "T_M=2 T_N=1 T_K=64" or "T_R=3 ... T_Y'=1"

// Everything the MAERI controller derives from a layer and a tile.
struct TileGeometry {
  int vn_size = 0;       // multipliers per virtual neuron (+1 when folding uses an extra one)
  int num_vns = 0;       // T_K·T_G·T_N·T_X'·T_Y'
  int n_folding = 1;     // ceil(R/T_R)·ceil(S/T_S)·ceil(C/T_C)
  bool folding = false;  // psums go back through the Global Buffer (no acc. buffer, no FEN)
  int iter_R = 1, iter_S = 1, iter_C = 1, iter_K = 1, iter_G = 1, iter_N = 1, iter_X = 1,
      iter_Y = 1;
  int multipliers_used() const { return vn_size * num_vns; }
};
TileGeometry tile_geometry(const HardwareConfig& hw, const DenseOp& op, const Tile& tile);

// Checks the tile against the hardware and the layer. On a violation throws telar::Error that
// names the constraint and suggests a legal tile (found by the mapper's search).
void validate_tile(const HardwareConfig& hw, const DenseOp& op, const Tile& tile);
// The constraint a tile violates, or "" if it is legal. Used by the mapper's enumeration.
std::string tile_violation(const HardwareConfig& hw, const DenseOp& op, const Tile& tile);

// Why STONNE's MAERI controller computes a wrong result with this (legal) tile, or "" if it
// computes the right one. The simulator reproduces STONNE's timing and counts for such tiles,
// and with them its wrong values; the mapper never picks them.
std::string wrong_result_reason(const HardwareConfig& hw, const DenseOp& op, const Tile& tile);

// STONNE tile files: tile_type="CONV" with T_R T_S T_C T_K T_G T_N T_X' T_Y', or
// tile_type="FC" with T_S (reduction chunk), T_K (output neurons) and T_N (batch rows).
Tile parse_tile(std::string_view text, std::string_view origin, OpKind op_kind);
Tile load_tile(const std::filesystem::path& path, OpKind op_kind);
std::string format_tile(const Tile& tile, OpKind kind);

}  // namespace telar::sim
