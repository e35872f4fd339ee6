#pragma once
// The operands of a sparse command (-SparseDense, -SparseGEMM): Matrix Market files where given
// (their shapes checked against the -M/-N/-K given), otherwise STONNE's random matrices drawn
// as its command line draws them: glibc's rand() seeded with `seed`, MK first, then KN.
// `source` receives a few words on where the operands came from.
#include <cstdint>
#include <string>

#include "sim/sparse_workload.hpp"
#include "sim/stonne_args.hpp"

namespace telar::sim {

struct SparseOperandSources {
  std::string mk_path, kn_path;  // "" : random
  std::uint64_t seed = 1;        // of rand(): at most 4294967295
};

SparseDenseOp sparse_dense_operands(const SparseArgs& args, const SparseOperandSources& sources,
                                    std::string& source);
SparseGemmOp sparse_gemm_operands(const SparseArgs& args, const SparseOperandSources& sources,
                                  std::string& source);

}  // namespace telar::sim
