// The sparse controllers (SIGMA_SPARSE_GEMM, MAGMA_SPARSE_DENSE): STONNE's public sparse
// reference cases exactly (its random matrices reproduced with glibc's rand()), hand-derived
// traffic, packing and timing, fast mode against the exact loop, and Matrix Market files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "core/parse.hpp"
#include "core/rng.hpp"
#include "sim/accelerator.hpp"
#include "sim/glibc_random.hpp"
#include "sim/stonne_command.hpp"
#include "sim/stonne_args.hpp"

namespace telar::sim {
namespace {

// glibc's rand() after srand(1) (the values every glibc program prints for rand() unseeded).
TEST(GlibcRandom, ReproducesTheCLibrarySequence) {
  GlibcRandom rng(1);
  const std::int32_t expected[] = {1804289383, 846930886, 1681692777, 1714636915, 1957747793,
                                   424238335,  719885386, 1649760492, 596516649,  1189641421};
  for (std::int32_t e : expected) EXPECT_EQ(rng.next(), e);
}

TEST(GlibcRandom, ZeroSeedActsAsOne) {
  GlibcRandom a(0), b(1);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(a.next(), b.next());
}

TEST(StonneMatrices, DrawsLikeStonnesDriver) {
  // rand() % 100 = 83 > 80: value rand() % 10 + 1 = 846930886 % 10 + 1 = 7; then 77 and 15 are
  // <= 80 (zeros, one draw each); 93 > 80: 424238335 % 10 + 1 = 6.
  GlibcRandom rng(1);
  const std::vector<float> m = stonne_random_matrix(rng, 1, 4, 80);
  EXPECT_EQ(m, (std::vector<float>{7, 0, 0, 6}));
  // Sparsity 99 zeroes everything (r % 100 <= 99); 100 too.
  GlibcRandom r2(1);
  for (float v : stonne_random_matrix(r2, 10, 10, 99)) EXPECT_EQ(v, 0.0f);
}

struct SparseCase {
  std::string id, command;
  std::uint64_t cycles, reads, writes;
};

// shared/reference/stonne_reference.csv (s*, q*) and the two further public-STONNE runs of the
// spec (§11).
const std::vector<SparseCase>& sparse_cases() {
  // clang-format off
  static const std::vector<SparseCase> cases = {
      {"s01", "-SparseDense -M=20 -N=20 -K=256 -MK_sparsity=80 -T_N=4 -T_K=32 -num_ms=128 -dn_bw=64 -rn_bw=64 -accumulation_buffer=1", 720, 21462, 400},
      {"s02", "-SparseDense -M=20 -N=32 -K=10000 -MK_sparsity=98 -T_N=4 -T_K=32 -num_ms=128 -dn_bw=128 -rn_bw=128 -accumulation_buffer=1", 859, 63987, 640},
      {"s03", "-SparseDense -M=64 -N=16 -K=512 -MK_sparsity=90 -T_N=2 -T_K=64 -num_ms=128 -dn_bw=64 -rn_bw=64 -accumulation_buffer=1", 1938, 50456, 1024},
      {"s02_M80", "-SparseDense -M=80 -N=32 -K=10000 -MK_sparsity=98 -T_N=4 -T_K=32 -num_ms=128 -dn_bw=128 -rn_bw=128 -accumulation_buffer=1", 3526, 264165, 2560},
      {"s02_K100000", "-SparseDense -M=20 -N=32 -K=100000 -MK_sparsity=98 -T_N=4 -T_K=32 -num_ms=128 -dn_bw=128 -rn_bw=128 -accumulation_buffer=1", 5989, 666963, 640},
      {"q01", "-SparseGEMM -M=20 -N=20 -K=256 -num_ms=128 -dn_bw=64 -rn_bw=64 -MK_sparsity=80 -KN_sparsity=10 -dataflow=MK_STA_KN_STR", 538, 46572, 400},
      {"q02", "-SparseGEMM -M=32 -N=32 -K=128 -num_ms=128 -dn_bw=64 -rn_bw=64 -MK_sparsity=50 -KN_sparsity=50 -dataflow=MK_STR_KN_STA", 1474, 40941, 1024},
      {"q03", "-SparseGEMM -M=16 -N=48 -K=64 -num_ms=64 -dn_bw=32 -rn_bw=32 -MK_sparsity=70 -KN_sparsity=0 -dataflow=MK_STA_KN_STR", 647, 18525, 768},
  };
  // clang-format on
  return cases;
}

void PrintTo(const SparseCase& c, std::ostream* os) {
  *os << c.id;
}

OpResult run_command(const std::string& command, bool exact, std::int64_t* mk_nnz = nullptr) {
  std::vector<std::string> args;
  for (const std::string& w : split(command, ' '))
    if (!w.empty()) args.push_back(w);
  const StonneCommand cmd = parse_stonne_args(args);
  RunOptions options;
  options.exact_cycle_loop = exact;
  const Accelerator accelerator(cmd.hw);
  const SparseArgs& a = cmd.sparse;
  if (cmd.kind == CommandKind::SparseDense) {
    const SparseDenseOp op = stonne_sparse_dense(a.M, a.N, a.K, a.mk_sparsity);
    if (mk_nnz) *mk_nnz = op.mk.nnz();
    return accelerator.run(op, a.tile, options);
  }
  const SparseGemmOp op =
      stonne_sparse_gemm(a.M, a.N, a.K, a.mk_sparsity, a.kn_sparsity, a.dataflow);
  if (mk_nnz) *mk_nnz = op.mk.nnz();
  return accelerator.run(op, options);
}

class SparseReference : public ::testing::TestWithParam<SparseCase> {};

TEST_P(SparseReference, ExactInBothModes) {
  const SparseCase& c = GetParam();
  for (bool exact : {false, true}) {
    std::int64_t nnz = 0;
    const OpResult r = run_command(c.command, exact, &nnz);
    EXPECT_EQ(r.stats.cycles, c.cycles) << c.id << (exact ? " exact" : " fast");
    EXPECT_EQ(r.stats.gb.reads(), c.reads) << c.id;
    EXPECT_EQ(r.stats.gb.writes(), c.writes) << c.id;
    const auto [reads, writes] = global_buffer_counts(r.stats.counters);
    EXPECT_EQ(reads, c.reads) << c.id << ": the .counters GLOBALBUFFER line";
    EXPECT_EQ(writes, c.writes) << c.id;
    EXPECT_EQ(r.stats.counters.cycles, c.cycles) << c.id;
    EXPECT_TRUE(r.output_checked && r.output_correct) << c.id << ": " << r.max_abs_error;
    if (c.id[0] == 's') {
      // CSR sparse x dense: reads = nnz (1 + N), writes = M N.
      const auto words = split(c.command, ' ');
      int N = 0;
      for (const auto& w : words) {
        if (w.rfind("-N=", 0) == 0) N = static_cast<int>(parse_int(w.substr(3), "N"));
      }
      EXPECT_EQ(r.stats.gb.reads(), static_cast<std::uint64_t>(nnz) * (1 + N)) << c.id;
      EXPECT_EQ(r.stats.gb.weight_reads, static_cast<std::uint64_t>(nnz)) << c.id;
    }
    if (exact) {
      EXPECT_EQ(r.simulated_cycles, r.stats.cycles);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Stonne, SparseReference, ::testing::ValuesIn(sparse_cases()),
                         [](const auto& info) { return info.param.id; });

HardwareConfig magma(int ms, int dn, int rn) {
  HardwareConfig hw;
  hw.ms_size = ms, hw.dn_bw = dn, hw.rn_bw = rn;
  hw.accumulation_buffer = true;
  hw.controller = Controller::MagmaSparseDense;
  return hw;
}

HardwareConfig sigma(int ms, int dn, int rn) {
  HardwareConfig hw;
  hw.ms_size = ms, hw.dn_bw = dn, hw.rn_bw = rn;
  hw.controller = Controller::SigmaSparseGemm;
  return hw;
}

// Derived by hand from the timing rules (docs/sim.md): one non-zero times one value on two
// multipliers, one per read port (no distribution tree), one write port. Cycle 1 configures;
// 2 sends the weight (and the padding weight); 3 sends the input; the multipliers multiply in
// cycle 3; the root adds in 4; the accumulator passes it on in 5; the bus in 6; the controller
// stores it in 7.
TEST(MagmaHandDerived, SmallestOperationTakesSevenCycles) {
  SparseDenseOp op;
  op.M = op.N = op.K = 1;
  op.mk = CsrMatrix::from_dense({3.0f}, 1, 1);
  op.kn = {2.0f};
  RunOptions exact;
  exact.exact_cycle_loop = true;
  const OpResult r = Accelerator(magma(2, 2, 1)).run(op, SparseDenseTile{1, 2}, exact);
  EXPECT_EQ(r.stats.cycles, 7u);
  EXPECT_EQ(r.stats.gb.reads(), 2u);  // one weight, one input
  EXPECT_EQ(r.stats.gb.writes(), 1u);
  EXPECT_EQ(r.stats.multiplications, 2u);  // the padding lane multiplies too
  ASSERT_EQ(r.output.size(), 1u);
  EXPECT_EQ(r.output[0], 6.0f);
}

// Rows of 3, 0 and 5 non-zeros, N = 5 with T_N = 2 (three column steps, the last padded),
// T_K = 4 (one and two folds). The empty row never reaches the fabric; its outputs are
// stored as zeros.
TEST(MagmaHandDerived, TrafficAndMultiplicationsWithPaddingAndAnEmptyRow) {
  SparseDenseOp op;
  op.M = 3, op.N = 5, op.K = 6;
  std::vector<float> mk(18, 0.0f);
  for (int c : {0, 2, 5}) mk[c] = 1.0f + c;
  for (int c = 0; c < 5; ++c) mk[12 + c] = 2.0f + c;
  op.mk = CsrMatrix::from_dense(mk, 3, 6);
  op.kn.resize(30);
  for (int i = 0; i < 30; ++i) op.kn[i] = static_cast<float>(i % 7);
  for (bool exact : {false, true}) {
    RunOptions o;
    o.exact_cycle_loop = exact;
    const OpResult r = Accelerator(magma(16, 4, 4)).run(op, SparseDenseTile{2, 4}, o);
    EXPECT_EQ(r.stats.gb.weight_reads, 8u);
    EXPECT_EQ(r.stats.gb.input_reads, 8u * 5);
    EXPECT_EQ(r.stats.gb.writes(), 15u);
    // (1 + 2 folds) x 3 column steps x 2 neurons x 4 multipliers.
    EXPECT_EQ(r.stats.multiplications, 72u);
    EXPECT_EQ(r.reconfigurations, 2u);
    EXPECT_TRUE(r.output_correct);
    for (int n = 0; n < 5; ++n) EXPECT_EQ(r.output[5 + n], 0.0f);
  }
}

// A row of 300 non-zeros on 128 multipliers folds into parts of 128, 127 (multiplier 0 takes
// the partial sum) and 45; each part writes its N partial outputs and the later parts read
// them back.
TEST(SigmaHandDerived, FoldsALongRowThroughTheGlobalBuffer) {
  SparseGemmOp op;
  op.M = 1, op.N = 3, op.K = 300;
  std::vector<float> mk(300), kn(900);
  for (int k = 0; k < 300; ++k) mk[k] = static_cast<float>(k % 5 + 1);
  for (int i = 0; i < 900; ++i) kn[i] = static_cast<float>(i % 3 + 1);
  op.mk = CsrMatrix::from_dense(mk, 1, 300);
  op.kn_t = CsrMatrix::from_dense(kn, 300, 3).transposed();
  for (SparseDataflow df : {SparseDataflow::MkStaKnStr}) {
    op.dataflow = df;
    const OpResult r = Accelerator(sigma(128, 64, 64)).run(op);
    EXPECT_EQ(r.reconfigurations, 3u);
    EXPECT_EQ(r.stats.gb.weight_reads, 300u);
    EXPECT_EQ(r.stats.gb.input_reads, 900u);  // every streamed value once over the three parts
    EXPECT_EQ(r.stats.gb.psum_reads, 2u * 3);
    EXPECT_EQ(r.stats.gb.psum_writes, 3u * 3);
    EXPECT_EQ(r.stats.multiplications, 900u);
    EXPECT_TRUE(r.output_correct) << r.max_abs_error;
  }
}

// Stationary rows of 60, 60, 10 and 100 non-zeros on 128 multipliers: rows 0-1 (120) form
// the first configuration (row 2 would make 130), rows 2-3 (110) the second. Every streamed
// non-zero is read once per configuration.
TEST(SigmaHandDerived, PacksWholeRowsIntoClusters) {
  SparseGemmOp op;
  op.M = 4, op.N = 2, op.K = 128;
  std::vector<float> mk(4 * 128, 0.0f);
  const int lengths[] = {60, 60, 10, 100};
  for (int m = 0; m < 4; ++m)
    for (int k = 0; k < lengths[m]; ++k) mk[m * 128 + k] = 1.0f;
  std::vector<float> kn(128 * 2, 1.0f);
  kn[5 * 2 + 1] = 0.0f;  // one zero in the streamed matrix
  op.mk = CsrMatrix::from_dense(mk, 4, 128);
  op.kn_t = CsrMatrix::from_dense(kn, 128, 2).transposed();
  const OpResult r = Accelerator(sigma(128, 32, 32)).run(op);
  EXPECT_EQ(r.reconfigurations, 2u);
  EXPECT_EQ(r.stats.gb.weight_reads, 230u);
  EXPECT_EQ(r.stats.gb.input_reads, 2u * 255);
  EXPECT_EQ(r.stats.gb.psum_reads, 0u);
  EXPECT_EQ(r.stats.gb.writes(), 8u);
  EXPECT_TRUE(r.output_correct);
  EXPECT_EQ(r.output[1], 59.0f);  // row 0 times column 1 (the zero at row 5)
}

CsrMatrix random_pattern(Rng& rng, int rows, int cols, double density, bool empty_rows) {
  std::vector<float> d(static_cast<std::size_t>(rows) * cols, 0.0f);
  for (int r = 0; r < rows; ++r) {
    if (empty_rows && rng.below(4) == 0) continue;
    for (int c = 0; c < cols; ++c)
      if (rng.uniform() < density) d[static_cast<std::size_t>(r) * cols + c] = 1.0f + rng.below(9);
  }
  return CsrMatrix::from_dense(d, rows, cols);
}

// Fast mode skips rows seen before from the same fabric state: every count must still be the
// exact loop's, on random shapes, tiles, densities and configurations.
TEST(MagmaFastMode, AgreesWithTheExactLoop) {
  Rng rng(7);
  for (int trial = 0; trial < 40; ++trial) {
    const int ms = 1 << (3 + rng.below(4));  // 8..64
    const int dn = std::max(1, ms >> rng.below(4));
    const int rn = std::max(1, ms >> rng.below(5));
    SparseDenseOp op;
    op.M = 1 + static_cast<int>(rng.below(30));
    op.N = 1 + static_cast<int>(rng.below(20));
    op.K = 1 + static_cast<int>(rng.below(200));
    op.mk = random_pattern(rng, op.M, op.K, 0.02 + 0.2 * rng.uniform(), trial % 3 == 0);
    op.kn.resize(static_cast<std::size_t>(op.K) * op.N);
    for (float& v : op.kn) v = static_cast<float>(rng.below(10));
    const int t_n = 1 + static_cast<int>(rng.below(std::min(op.N, ms / 2)));
    const int t_k = std::max(2, static_cast<int>(rng.below(ms / t_n + 1)));
    const SparseDenseTile tile{t_n, t_k};
    const Accelerator acc(magma(ms, dn, rn));
    if (!tile_violation(ms, op, tile).empty()) continue;
    RunOptions fast, exact;
    exact.exact_cycle_loop = true;
    const OpResult f = acc.run(op, tile, fast), e = acc.run(op, tile, exact);
    SCOPED_TRACE(::testing::Message()
                 << "trial " << trial << " ms " << ms << " dn " << dn << " rn " << rn << " M "
                 << op.M << " N " << op.N << " K " << op.K << " tile " << describe(tile));
    EXPECT_EQ(f.stats.cycles, e.stats.cycles);
    EXPECT_EQ(f.stats.gb, e.stats.gb);
    EXPECT_EQ(format_counters(f.stats.counters), format_counters(e.stats.counters));
    EXPECT_TRUE(e.output_correct && f.output_correct);
    EXPECT_EQ(f.output, e.output);
    EXPECT_EQ(e.stats.gb.reads(), static_cast<std::uint64_t>(op.mk.nnz()) * (1 + op.N));
    EXPECT_EQ(e.stats.gb.writes(), static_cast<std::uint64_t>(op.M) * op.N);
  }
}

TEST(SigmaRandom, ComputesTheProductInBothDataflows) {
  Rng rng(11);
  for (int trial = 0; trial < 12; ++trial) {
    SparseGemmOp op;
    op.M = 1 + static_cast<int>(rng.below(24));
    op.N = 1 + static_cast<int>(rng.below(24));
    op.K = 1 + static_cast<int>(rng.below(160));
    op.mk = random_pattern(rng, op.M, op.K, 0.05 + 0.5 * rng.uniform(), trial % 4 == 1);
    op.kn_t = random_pattern(rng, op.N, op.K, 0.05 + 0.9 * rng.uniform(), false);
    op.dataflow = trial % 2 ? SparseDataflow::MkStrKnSta : SparseDataflow::MkStaKnStr;
    const int ms = 1 << (4 + rng.below(3));
    const OpResult r = Accelerator(sigma(ms, std::max(1, ms >> rng.below(3)), ms / 2)).run(op);
    EXPECT_TRUE(r.output_correct) << "trial " << trial << ": " << r.max_abs_error;
    const auto [reads, writes] = global_buffer_counts(r.stats.counters);
    EXPECT_EQ(reads, r.stats.gb.reads());
    EXPECT_EQ(writes, r.stats.gb.writes());
    const std::int64_t sta_nnz =
        op.dataflow == SparseDataflow::MkStaKnStr ? op.mk.nnz() : op.kn_t.nnz();
    EXPECT_EQ(r.stats.gb.weight_reads, static_cast<std::uint64_t>(sta_nnz));
  }
}

// Fast mode skips configurations seen before and streamed rows once the fabric repeats: every
// count must still be the exact loop's, on random shapes, densities, dataflows and bandwidths,
// with rows longer than the array (folded through the Global Buffer) among them.
TEST(SigmaFastMode, AgreesWithTheExactLoop) {
  Rng rng(13);
  int with_skips = 0;
  for (int trial = 0; trial < 40; ++trial) {
    SparseGemmOp op;
    op.M = 1 + static_cast<int>(rng.below(80));
    op.N = 1 + static_cast<int>(rng.below(40));
    op.K = 1 + static_cast<int>(rng.below(300));
    op.mk = random_pattern(rng, op.M, op.K, 0.05 + 0.6 * rng.uniform(), trial % 4 == 1);
    op.kn_t = random_pattern(rng, op.N, op.K, 0.05 + 0.9 * rng.uniform(), trial % 5 == 2);
    op.dataflow = trial % 2 ? SparseDataflow::MkStrKnSta : SparseDataflow::MkStaKnStr;
    const int ms = 1 << (3 + rng.below(4));  // 8..64
    const Accelerator acc(
        sigma(ms, std::max(1, ms >> rng.below(3)), std::max(1, ms >> rng.below(4))));
    RunOptions fast, exact;
    exact.exact_cycle_loop = true;
    const OpResult f = acc.run(op, fast), e = acc.run(op, exact);
    SCOPED_TRACE(::testing::Message() << "trial " << trial << " ms " << ms << " M " << op.M
                                      << " N " << op.N << " K " << op.K);
    EXPECT_EQ(f.stats.cycles, e.stats.cycles);
    EXPECT_EQ(f.stats.gb, e.stats.gb);
    EXPECT_EQ(f.reconfigurations, e.reconfigurations);
    EXPECT_EQ(format_counters(f.stats.counters), format_counters(e.stats.counters));
    EXPECT_TRUE(e.output_correct && f.output_correct);
    EXPECT_EQ(f.output, e.output);
    EXPECT_EQ(e.simulated_cycles, e.stats.cycles);
    if (f.skips > 0) {
      ++with_skips;
      EXPECT_LT(f.simulated_cycles, e.simulated_cycles);
    }
  }
  EXPECT_GE(with_skips, 20) << "the random cases should exercise the skips";
}

TEST(SparseErrors, WrongControllerAndIllegalTiles) {
  SparseDenseOp op = stonne_sparse_dense(4, 4, 16, 50);
  HardwareConfig maeri;
  maeri.ms_size = 16;
  EXPECT_THROW(Accelerator(maeri).run(op, SparseDenseTile{2, 4}), Error);
  HardwareConfig no_acc = magma(16, 4, 4);
  no_acc.accumulation_buffer = false;
  EXPECT_THROW(Accelerator(no_acc).run(op, SparseDenseTile{2, 4}), Error);
  EXPECT_THROW(Accelerator(magma(16, 4, 4)).run(op, SparseDenseTile{4, 8}), Error);  // 32 > 16
  EXPECT_THROW(Accelerator(magma(16, 4, 4)).run(op, SparseDenseTile{2, 1}), Error);  // T_K = 1
  SparseGemmOp g = stonne_sparse_gemm(4, 4, 16, 50, 50, SparseDataflow::MkStaKnStr);
  HardwareConfig sigma_acc = sigma(16, 4, 4);
  sigma_acc.accumulation_buffer = true;
  EXPECT_THROW(Accelerator(sigma_acc).run(g), Error);
  HardwareConfig sigma_fen = sigma(16, 4, 4);
  sigma_fen.rn = ReduceNetwork::Fen;
  EXPECT_THROW(Accelerator(sigma_fen).run(g), Error);
  for (const char* bad : {"-MK_sparsity=101", "-MK_sparsity=-1", "-KN_sparsity=200",
                          "-dataflow=MK_STA", "-optimize=1", "-T_N=4"})
    EXPECT_THROW(parse_stonne_args({"-SparseGEMM", bad}), Error) << bad;
  EXPECT_THROW(parse_stonne_args({"-SparseDense", "-KN_sparsity=10"}), Error);
}

TEST(MatrixMarket, RoundTripsAndReadsEveryField) {
  Rng rng(3);
  const CsrMatrix m = random_pattern(rng, 7, 9, 0.3, true);
  const CsrMatrix back = parse_matrix_market(format_matrix_market(m), "round trip");
  EXPECT_EQ(back, m);
  const CsrMatrix p = parse_matrix_market(
      "%%MatrixMarket matrix coordinate pattern general\n% a comment\n\n3 4 3\n1 1\n3 4\n2 2\n",
      "pattern");
  EXPECT_EQ(p.rows, 3);
  EXPECT_EQ(p.cols, 4);
  EXPECT_EQ(p.row_ptr, (std::vector<std::int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(p.col, (std::vector<int>{0, 1, 3}));
  EXPECT_EQ(p.values, (std::vector<float>{1, 1, 1}));
  const CsrMatrix i = parse_matrix_market(
      "%%MatrixMarket matrix coordinate integer general\n2 2 3\n1 2 5\n1 2 -2\n2 1 7\n", "int");
  EXPECT_EQ(i.to_dense(), (std::vector<float>{0, 3, 7, 0}));  // repeated entries add up
}

TEST(MatrixMarket, RejectsBadFilesWithTheLine) {
  auto message = [](const std::string& text) {
    try {
      parse_matrix_market(text, "m.mtx");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("1 1 1\n1 1 1\n").find("m.mtx:1"), std::string::npos);
  // A size line beyond 2^24 rows is refused before anything is allocated for it (the fuzzer's
  // finding: 396 million rows made the reader allocate gigabytes).
  EXPECT_NE(message("%%MatrixMarket matrix coordinate real general\n396377141 3 3\n1 2 0.5\n")
                .find("m.mtx:2: a 396377141x3 matrix is not supported"),
            std::string::npos);
  EXPECT_NE(message("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n").find("array"),
            std::string::npos);
  EXPECT_NE(
      message("%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n").find("complex"),
      std::string::npos);
  EXPECT_NE(
      message("%%MatrixMarket matrix coordinate real symmetric\n1 1 1\n1 1 1\n").find("symmetric"),
      std::string::npos);
  EXPECT_NE(message("%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1\n")
                .find("m.mtx:3: entry (3, 1) is outside the 2x2 matrix"),
            std::string::npos);
  EXPECT_NE(
      message("%%MatrixMarket matrix coordinate real general\n2 2 1\n0 1 1\n").find("outside"),
      std::string::npos);
  EXPECT_NE(
      message("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n").find("2 entries"),
      std::string::npos);
  EXPECT_NE(
      message("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 x\n").find("m.mtx:3"),
      std::string::npos);
  EXPECT_NE(message("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1\n").find("fields"),
            std::string::npos);
}

}  // namespace
}  // namespace telar::sim

namespace telar::sim {

// The operands of a sparse command from files: shapes from the file, a given dimension must
// agree with it, KN's rows must match MK's columns; without files, STONNE's draw for the seed.
TEST(SparseOperands, FilesGiveTheShapesAndMustAgreeWithTheFlags) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("telar_operands_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto write = [&](const std::string& name, const CsrMatrix& m) {
    const auto path = dir / name;
    std::ofstream(path) << format_matrix_market(m);
    return path.string();
  };
  // MK 2x3 with 2 non-zeros, KN 3x4 dense.
  const std::string mk = write("mk.mtx", CsrMatrix::from_dense({1, 0, 0, 0, 0, 2}, 2, 3));
  std::vector<float> kn_dense(12);
  for (int i = 0; i < 12; ++i) kn_dense[static_cast<std::size_t>(i)] = static_cast<float>(i + 1);
  const std::string kn = write("kn.mtx", CsrMatrix::from_dense(kn_dense, 3, 4));
  SparseArgs args;
  std::string source;
  const SparseDenseOp op = sparse_dense_operands(args, {mk, kn, 1}, source);
  EXPECT_EQ(op.M, 2);
  EXPECT_EQ(op.K, 3);
  EXPECT_EQ(op.N, 4);
  EXPECT_EQ(op.mk.nnz(), 2);
  EXPECT_EQ(op.kn, kn_dense);
  EXPECT_NE(source.find("mk.mtx"), std::string::npos);

  args.M = 5;
  args.dims_given = {"-M"};
  EXPECT_THROW(sparse_dense_operands(args, {mk, kn, 1}, source), telar::Error);
  args.dims_given.clear();
  const std::string short_kn = write("short.mtx", CsrMatrix::from_dense({1, 2}, 2, 1));
  EXPECT_THROW(sparse_gemm_operands(args, {mk, short_kn, 1}, source), telar::Error);
  EXPECT_THROW(sparse_gemm_operands(args, {"", "", 1ULL << 33}, source), telar::Error);

  SparseArgs random_args;
  random_args.M = 4;
  random_args.N = 5;
  random_args.K = 6;
  random_args.mk_sparsity = 50;
  const SparseDenseOp drawn = sparse_dense_operands(random_args, {"", "", 7}, source);
  const SparseDenseOp stonne = stonne_sparse_dense(4, 5, 6, 50, 7);
  EXPECT_EQ(drawn.mk.nnz(), stonne.mk.nnz());
  EXPECT_EQ(drawn.kn, stonne.kn);
  std::filesystem::remove_all(dir);
}

}  // namespace telar::sim
