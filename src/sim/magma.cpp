// MAGMA_SPARSE_DENSE on the sparse fabric (sparse_machine.hpp): for each sparse row, T_N
// neurons of T_K multipliers; the row's non-zeros are distributed T_K at a time (multicast to
// the T_N neurons), then the dense rows they select are streamed T_N columns × T_K non-zeros
// per step, accumulated over the row's K folds. Fast mode skips rows already simulated from
// the same fabric state.
#include <algorithm>

#include "core/error.hpp"
#include "sim/sparse_machine.hpp"

namespace telar::sim {

namespace sparse {

EngineRun SparseMachine::run_magma(const SparseDenseOp& op, const SparseDenseTile& t) {
  const int M = op.M, N = op.N, T_N = t.T_N, T_K = t.T_K;
  const int iter_N = (N + T_N - 1) / T_N;
  const long long n_and_pad = 1LL * iter_N * T_N;
  const CsrMatrix& mk = op.mk;
  const bool with_values = values_ && !op.kn.empty();
  std::vector<float> expected;
  if (with_values) {
    expected = reference_output(op);
    output_.assign(expected.size(), 0.0f);
    from_fabric_.assign(expected.size(), 0);
  }
  // Rows without non-zeros never reach the fabric (STONNE would distribute zero folds of them
  // forever): their zero outputs are stored directly.
  auto retire_empty_rows = [&](int m) {
    while (m < M && mk.row_nnz(m) == 0) {
      direct_writes_ += static_cast<std::uint64_t>(N);
      if (with_values)
        for (int n = 0; n < N; ++n) from_fabric_[static_cast<std::size_t>(m) * N + n] = 1;
      ++m;
    }
    return m;
  };
  long long nonempty = 0;
  int last_row = -1;
  for (int m = 0; m < M; ++m)
    if (mk.row_nnz(m) > 0) ++nonempty, last_row = m;
  const long long total_outputs = nonempty * n_and_pad;

  int cur_m = retire_empty_rows(0), out_row = cur_m, cur_n = 0, cur_k = 0, iter_K = 0;
  std::int64_t k_nnz = 0, sta_base = 0;
  bool sta_complete = false;
  long long current_output = 0, output_iteration = 0;
  std::vector<int> itern(static_cast<std::size_t>(T_N), 0);
  std::vector<int> dests(static_cast<std::size_t>(std::max(T_N, T_K)));
  const std::vector<int> sizes(static_cast<std::size_t>(T_N), T_K);
  const std::vector<std::uint8_t> no_psum(static_cast<std::size_t>(T_N), 0);
  if (total_outputs == 0) return finish(0, 0);

  // Fast mode: a row's timing and counts depend only on its number of non-zeros and on where
  // the bus arbiters stand when it starts (the fabric is otherwise empty), so rows already seen
  // in the same situation are skipped.
  std::uint64_t stepped = 0;
  int skips = 0;

  auto row_output_from_reference = [&](int m) {
    if (!with_values) return;
    for (int n = 0; n < N; ++n) {
      const std::size_t at = static_cast<std::size_t>(m) * N + n;
      output_[at] = expected[at];
    }
  };

  while (true) {
    if (state_ == State::Configuring && fast_) end_phase();
    if (state_ == State::Configuring && fast_ && cur_m != last_row && idle() &&
        repeat_phase({static_cast<std::uint64_t>(mk.row_nnz(cur_m))})) {
      row_output_from_reference(cur_m);
      current_output += n_and_pad;
      ++skips;
      cur_m = retire_empty_rows(cur_m + 1);
      out_row = cur_m;
      continue;
    }
    ++cycle_;
    ++stepped;
    require(stepped < 4'000'000'000ULL, "simulation exceeded 4e9 cycles");
    // --- controller ---
    if (state_ == State::Configuring) {
      k_nnz = mk.row_nnz(cur_m);
      sta_base = mk.row_ptr[cur_m];
      iter_K = static_cast<int>((k_nnz + T_K - 1) / T_K);
      out_row = cur_m;
      configure(sizes, no_psum, iter_K);
      cur_k = 0;
      sta_complete = false;
    } else if (state_ == State::DistSta) {
      for (int j = 0; j < T_K; ++j) {
        const std::int64_t index_k = 1LL * cur_k * T_K + j;
        for (int i = 0; i < T_N; ++i) dests[i] = i * T_K + j;
        const bool real = index_k < k_nnz;
        if (real) ++cnt_[c_gb_w_];
        push_to_ports(kWeight, real && with_values ? mk.values[sta_base + index_k] : 0.0f,
                      dests.data(), static_cast<std::uint32_t>(T_N));
      }
      if (++cur_k == iter_K) {
        cur_k = 0;
        sta_complete = true;
      }
    } else if (state_ == State::DistStr) {
      for (int i = 0; i < T_N; ++i) {
        const int index_n = cur_n * T_N + i;
        for (int j = 0; j < T_K; ++j) {
          const std::int64_t index_k = 1LL * cur_k * T_K + j;
          const bool real = index_k < k_nnz && index_n < N;
          float v = 0.0f;
          if (real) {
            ++cnt_[c_gb_i_];
            if (with_values)
              v = op.kn[static_cast<std::size_t>(mk.col[sta_base + index_k]) * N + index_n];
          }
          const int dest = i * T_K + j;
          push_to_ports(kInput, v, &dest, 1);
        }
      }
      if (++cur_k == iter_K) {
        cur_k = 0;
        if (++cur_n == iter_N) {
          cur_n = 0;
          cur_m = retire_empty_rows(cur_m + 1);
          sta_complete = true;
        }
      }
    }
    receive_results();
    for (std::size_t n = (write_fifo_.size() + 1) / 2; n > 0; --n) {
      const Psum p = write_fifo_.pop();
      const int vn = p.vn;
      const int col = itern[vn] * T_N + vn;
      if (col < N) {
        ++cnt_[c_gb_pw_];
        if (with_values) {
          const std::size_t at = static_cast<std::size_t>(out_row) * N + col;
          output_[at] = p.value;
          from_fabric_[at] = 1;
        }
      }
      if (++itern[vn] == iter_N) itern[vn] = 0;
      if (++current_output == total_outputs) execution_finished_ = true;
      if (++output_iteration == n_and_pad) {
        output_iteration = 0;
        if (state_ == State::Waiting) sta_complete = true;
      }
    }
    step_controller(state_, sta_complete, cur_m >= M, true);
    if (fabric_cycle()) break;
  }
  if (with_values)
    for (std::size_t i = 0; i < output_.size(); ++i)
      if (!from_fabric_[i]) output_[i] = expected[i];
  return finish(stepped, skips);
}

}  // namespace sparse

EngineRun run_magma(const HardwareConfig& hw, const SparseDenseOp& op, const SparseDenseTile& tile,
                    const SparseEngineOptions& options) {
  sparse::SparseMachine machine(hw, options);
  return machine.run_magma(op, tile);
}

}  // namespace telar::sim
