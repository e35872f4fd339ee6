#pragma once
// The public STONNE reference figures (shared/reference/stonne_reference.csv, dense rows, and
// the three larger runs of its README): the simulator must reproduce these exactly.
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace telar::testing {

struct StonneCase {
  std::string id;
  std::string command;                        // STONNE's command line after ./stonne
  std::uint64_t cycles, gb_reads, gb_writes;  // reads/writes 0 where only cycles are published
  bool large = false;
};

inline const std::vector<StonneCase>& stonne_cases() {
  // clang-format off
  static const std::vector<StonneCase> cases = {
      {"g01", "-DenseGEMM -M=20 -N=20 -K=256 -num_ms=256 -dn_bw=64 -rn_bw=64 -T_K=64 -T_M=2 -T_N=1", 6200, 108720, 1600},
      {"g02", "-DenseGEMM -M=20 -N=20 -K=256 -num_ms=256 -dn_bw=64 -rn_bw=64 -T_K=64 -T_M=2 -T_N=1 -accumulation_buffer=1", 3740, 107520, 400},
      {"g03", "-DenseGEMM -M=32 -N=16 -K=64 -num_ms=128 -dn_bw=32 -rn_bw=32 -T_K=16 -T_M=4 -T_N=1", 3648, 35328, 2048},
      {"g04", "-DenseGEMM -M=64 -N=32 -K=128 -num_ms=128 -dn_bw=64 -rn_bw=64 -T_K=32 -T_M=4 -T_N=1 -accumulation_buffer=1", 4704, 266240, 2048},
      {"g05", "-DenseGEMM -M=16 -N=64 -K=100 -num_ms=128 -dn_bw=32 -rn_bw=16 -T_K=25 -T_M=1 -T_N=4 -accumulation_buffer=1", 4528, 32000, 1024},
      {"g06", "-DenseGEMM -M=48 -N=24 -K=96 -num_ms=256 -dn_bw=128 -rn_bw=128 -T_K=16 -T_M=8 -T_N=2 -rn_type=FENETWORK", 1152, 57600, 1152},
      {"f01", "-FC -M=64 -N=20 -K=128 -num_ms=256 -dn_bw=64 -rn_bw=64 -T_K=64 -T_M=4 -T_N=1 -accumulation_buffer=1", 2960, 166400, 1280},
      {"f02", "-FC -M=1 -N=1 -K=16 -num_ms=256 -dn_bw=64 -rn_bw=64 -T_K=8 -T_M=1 -T_N=1 -accumulation_buffer=1", 23, 32, 1},
      {"f03", "-FC -M=32 -N=20 -K=64 -num_ms=256 -dn_bw=128 -rn_bw=128 -T_K=32 -T_M=8 -T_N=1 -accumulation_buffer=1", 640, 42240, 640},
      {"c01", "-CONV -R=3 -S=3 -C=6 -K=6 -G=1 -N=1 -X=10 -Y=10 -strides=1 -T_R=3 -T_S=3 -T_C=1 -T_K=1 -T_G=1 -T_N=1 -T_X_=3 -T_Y_=1 -num_ms=64 -dn_bw=8 -rn_bw=8", 4529, 7884, 2304},
      {"c02", "-CONV -R=3 -S=3 -C=16 -K=8 -G=1 -N=1 -X=12 -Y=12 -strides=1 -T_R=3 -T_S=3 -T_C=4 -T_K=2 -T_G=1 -T_N=1 -T_X_=1 -T_Y_=2 -num_ms=256 -dn_bw=64 -rn_bw=64 -accumulation_buffer=1", 3308, 39552, 800},
      {"c03", "-CONV -R=5 -S=5 -C=3 -K=8 -G=1 -N=1 -X=16 -Y=16 -strides=1 -T_R=5 -T_S=5 -T_C=1 -T_K=4 -T_G=1 -T_N=1 -T_X_=1 -T_Y_=1 -num_ms=128 -dn_bw=32 -rn_bw=32", 5586, 8664, 3456},
      {"c04", "-CONV -R=3 -S=3 -C=8 -K=8 -G=8 -N=1 -X=14 -Y=14 -strides=1 -T_R=3 -T_S=3 -T_C=1 -T_K=1 -T_G=4 -T_N=1 -T_X_=1 -T_Y_=1 -num_ms=64 -dn_bw=32 -rn_bw=32 -accumulation_buffer=1", 336, 4104, 1152},
      {"c05", "-CONV -R=3 -S=3 -C=16 -K=16 -G=1 -N=1 -X=13 -Y=13 -strides=2 -T_R=3 -T_S=3 -T_C=2 -T_K=4 -T_G=1 -T_N=1 -T_X_=1 -T_Y_=1 -num_ms=128 -dn_bw=64 -rn_bw=64 -accumulation_buffer=1", 2408, 23040, 576},
      {"t01", "-DenseGEMM -M=16 -N=16 -K=32 -ms_rows=16 -ms_cols=16 -dn_bw=32 -rn_bw=256 -mn_type=OS_MESH -mem_ctrl=TPU_OS_DENSE -rn_type=TEMPORALRN -accumulation_buffer=1 -T_M=16 -T_N=16 -T_K=1", 67, 1024, 256},
      {"t02", "-DenseGEMM -M=40 -N=24 -K=64 -ms_rows=16 -ms_cols=16 -dn_bw=32 -rn_bw=256 -mn_type=OS_MESH -mem_ctrl=TPU_OS_DENSE -rn_type=TEMPORALRN -accumulation_buffer=1 -T_M=16 -T_N=16 -T_K=1", 554, 9728, 960},
      {"large-fc", "-FC -M=128 -N=80 -K=1307 -num_ms=256 -dn_bw=128 -rn_bw=128 -T_K=64 -T_M=4 -T_N=1 -accumulation_buffer=1", 111840, 0, 0, true},
      {"large-fc-small", "-FC -M=64 -N=80 -K=128 -num_ms=256 -dn_bw=128 -rn_bw=128 -T_K=64 -T_M=4 -T_N=1 -accumulation_buffer=1", 6400, 0, 0, true},
      {"large-conv", "-CONV -R=5 -S=5 -C=64 -K=192 -G=1 -N=1 -X=31 -Y=31 -strides=1 -T_R=5 -T_S=5 -T_C=4 -T_K=2 -T_G=1 -T_N=1 -T_X_=1 -T_Y_=1 -num_ms=256 -dn_bw=64 -rn_bw=64 -accumulation_buffer=1", 1251552, 0, 0, true},
  };
  // clang-format on
  return cases;
}

inline std::vector<StonneCase> stonne_cases(bool large) {
  std::vector<StonneCase> out;
  for (const StonneCase& c : stonne_cases())
    if (c.large == large) out.push_back(c);
  return out;
}

// Test names and failure messages show the case id.
inline void PrintTo(const StonneCase& c, std::ostream* os) {
  *os << c.id;
}

}  // namespace telar::testing
