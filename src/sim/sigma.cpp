// SIGMA_SPARSE_GEMM on the sparse fabric (sparse_machine.hpp): the stationary non-zeros are
// packed, row after row, into clusters of multipliers; a row longer than the array is folded:
// its first part uses the whole array, later parts keep multiplier 0 for the partial sum read
// back from the Global Buffer. Each streamed element is multicast to the multipliers holding a
// stationary non-zero of its column. Fast mode skips streamed rows once the fabric repeats.
#include <algorithm>
#include <map>

#include "core/error.hpp"
#include "sim/sparse_machine.hpp"

namespace telar::sim {

namespace sparse {

EngineRun SparseMachine::run_sigma(const SparseGemmOp& op) {
  const bool mk_stationary = op.dataflow == SparseDataflow::MkStaKnStr;
  const CsrMatrix& sta = mk_stationary ? op.mk : op.kn_t;
  const CsrMatrix& str = mk_stationary ? op.kn_t : op.mk;
  const int dim_sta = sta.rows, dim_str = str.rows, K = op.K;
  // Output (stationary row i, streamed row s) is MK·KN at (i, s) or (s, i).
  auto out_index = [&](int i, int s) {
    return mk_stationary ? static_cast<std::size_t>(i) * op.N + s
                         : static_cast<std::size_t>(s) * op.N + i;
  };
  if (values_) {
    output_.assign(static_cast<std::size_t>(op.M) * op.N, 0.0f);
    from_fabric_.assign(output_.size(), 0);
  }
  // The streamed matrix as a bitmap (one bit per element) for the per-element tests.
  const std::size_t words_per_row = (static_cast<std::size_t>(K) + 63) / 64;
  std::vector<std::uint64_t> str_bits(static_cast<std::size_t>(dim_str) * words_per_row, 0);
  for (int s = 0; s < dim_str; ++s)
    for (std::int64_t e = str.row_ptr[s]; e < str.row_ptr[s + 1]; ++e)
      str_bits[s * words_per_row + static_cast<std::size_t>(str.col[e]) / 64] |=
          1ULL << (str.col[e] % 64);
  auto str_value = [&](int s, int j) {
    const auto first = str.col.begin() + str.row_ptr[s];
    const auto last = str.col.begin() + str.row_ptr[s + 1];
    return str.values[static_cast<std::size_t>(std::lower_bound(first, last, j) - str.col.begin())];
  };
  auto str_nnz_in = [&](int s, int lo, int hi) {  // streamed non-zeros of row s in [lo, hi)
    const auto first = str.col.begin() + str.row_ptr[s];
    const auto last = str.col.begin() + str.row_ptr[s + 1];
    return std::lower_bound(first, last, hi) - std::lower_bound(first, last, lo);
  };

  int sta_row = 0;  // first stationary row not finished
  int fold_j = 0;   // > 0: the next part of row sta_row starts at this column
  while (sta_row < dim_sta && sta.row_nnz(sta_row) == 0) ++sta_row;
  if (sta_row >= dim_sta) return finish(0, 0);

  // The current configuration.
  struct Cluster {
    int row;
    std::int64_t first, last;  // stationary entries [first, last) of the row
  };
  std::vector<Cluster> clusters;
  std::vector<int> sizes;
  std::vector<std::uint8_t> psum_first;
  int end_j = K, next_row = 0, str_index = 0;
  long long outputs_expected = 0, outputs_seen = 0;
  bool iteration_complete = false;
  std::vector<int> vnat;
  // Per column with stationary non-zeros in this configuration: the multipliers holding them.
  std::vector<int> columns;
  std::vector<std::uint32_t> column_first;
  std::vector<int> column_dests;
  std::vector<int> psum_dest{0};

  auto build_configuration = [&]() {
    clusters.clear();
    sizes.clear();
    psum_first.clear();
    const int num_ms = ms_;
    if (fold_j > 0) {
      // A later part of a folded row: multiplier 0 takes the partial sum.
      const std::int64_t begin = sta.row_ptr[sta_row], end = sta.row_ptr[sta_row + 1];
      std::int64_t first =
          std::lower_bound(sta.col.begin() + begin, sta.col.begin() + end, fold_j) -
          sta.col.begin();
      const std::int64_t last = std::min<std::int64_t>(end, first + (num_ms - 1));
      clusters.push_back(Cluster{sta_row, first, last});
      sizes.push_back(static_cast<int>(last - first) + 1);
      psum_first.push_back(1);
      end_j = last < end ? sta.col[last - 1] + 1 : K;
      next_row = end_j == K ? sta_row + 1 : sta_row;
    } else {
      // Whole rows while they fit; a first row longer than the array starts folding.
      int used = 0, r = sta_row;
      while (r < dim_sta) {
        const std::int64_t n = sta.row_nnz(r);
        if (n == 0) {
          ++r;
          continue;
        }
        if (used + n > num_ms) break;
        clusters.push_back(Cluster{r, sta.row_ptr[r], sta.row_ptr[r + 1]});
        sizes.push_back(static_cast<int>(n));
        psum_first.push_back(0);
        used += static_cast<int>(n);
        ++r;
      }
      // STONNE's compiler can make neighbouring small clusters share an adder (its adders then
      // abort); the configuration ends before such a cluster instead.
      while (clusters.size() > 1 &&
             neurons_mix(compile_reduce_tree(ReduceNetwork::Art, num_ms, sizes), sizes)) {
        r = clusters.back().row;
        clusters.pop_back();
        sizes.pop_back();
        psum_first.pop_back();
      }
      if (clusters.empty()) {
        const std::int64_t first = sta.row_ptr[sta_row];
        const std::int64_t last = first + num_ms;
        clusters.push_back(Cluster{sta_row, first, last});
        sizes.push_back(num_ms);
        psum_first.push_back(0);
        end_j = last < sta.row_ptr[sta_row + 1] ? sta.col[last - 1] + 1 : K;
        next_row = end_j == K ? sta_row + 1 : sta_row;
      } else {
        end_j = K;
        next_row = r;
      }
    }
    // Destinations per column.
    std::map<int, std::vector<int>> by_column;
    int ms = 0;
    for (std::size_t v = 0; v < clusters.size(); ++v) {
      if (psum_first[v]) ++ms;
      for (std::int64_t e = clusters[v].first; e < clusters[v].last; ++e)
        by_column[sta.col[e]].push_back(ms++);
    }
    columns.clear();
    column_first.clear();
    column_dests.clear();
    for (auto& [col, d] : by_column) {
      columns.push_back(col);
      column_first.push_back(static_cast<std::uint32_t>(column_dests.size()));
      std::sort(d.begin(), d.end());
      column_dests.insert(column_dests.end(), d.begin(), d.end());
    }
    column_first.push_back(static_cast<std::uint32_t>(column_dests.size()));
    vnat.assign(clusters.size(), 0);
    outputs_expected = static_cast<long long>(clusters.size()) * dim_str;
    outputs_seen = 0;
  };

  // After a configuration's last output: the next configuration, or the end (false).
  auto next_configuration = [&]() {
    str_index = 0;
    if (next_row == sta_row) {
      fold_j = end_j;
    } else {
      fold_j = 0;
      sta_row = next_row;
      while (sta_row < dim_sta && sta.row_nnz(sta_row) == 0) ++sta_row;
    }
    if (sta_row >= dim_sta) {
      execution_finished_ = true;
      state_ = State::AllSent;
      return false;
    }
    state_ = State::Configuring;
    return true;
  };
  // The streamed non-zeros a configuration reads (they differ from row to row; the fabric's
  // work does not depend on them).
  auto streamed_reads = [&](int from, int to) {
    std::uint64_t n = 0;
    for (int s = from; s < to; ++s)
      n += static_cast<std::uint64_t>(str_nnz_in(s, fold_j, end_j));
    return n;
  };

  // Fast mode, twice:
  //  * A configuration that starts on an idle fabric takes the same cycles and counts as an
  //    earlier one with the same clusters, the same multipliers for each column and the bus
  //    arbiters in the same positions (folded rows repeat their middle parts): it is skipped.
  //  * While it streams, the controller pushes the same packets every cycle (one streamed row,
  //    to the multipliers holding its columns; only the values differ), so when the fabric's
  //    state at the start of a cycle repeats within a configuration, the cycles between the
  //    two points repeat until the last row is pushed. States are compared every `stride`
  //    rows; the stride doubles while none repeats (a growing backlog), to bound their cost.
  int skips = 0;
  auto configuration_words = [&]() {
    std::vector<std::uint64_t> words{clusters.size(), fold_j > 0 ? 1u : 0u};
    for (std::size_t v = 0; v < clusters.size(); ++v)
      words.push_back(static_cast<std::uint64_t>(sizes[v]) << 1 | psum_first[v]);
    for (std::size_t c = 0; c + 1 < column_first.size(); ++c) {
      words.push_back(column_first[c + 1] - column_first[c]);
      for (std::uint32_t d = column_first[c]; d < column_first[c + 1]; ++d)
        words.push_back(static_cast<std::uint64_t>(column_dests[d]));
    }
    return words;
  };
  auto skip_configuration = [&](const PhaseEffect& e) {
    // The streamed rows' non-zeros (input reads) differ from configuration to configuration.
    cnt_[c_gb_i_] += streamed_reads(0, dim_str) - e.d_counters[c_gb_i_];
    if (values_)  // this configuration's outputs, maybe written by an earlier part of its row
      for (const Cluster& c : clusters)
        for (int s = 0; s < dim_str; ++s) from_fabric_[out_index(c.row, s)] = 0;
    values_valid_ = false;
    ++skips;
  };

  struct Mark {
    int str_index;
    std::uint64_t cycle;
    std::vector<std::uint64_t> counters;
    long long outputs;
    std::vector<int> vnat;
  };
  StateMemory<Mark> marks(0x5a);
  std::vector<std::uint64_t> state;
  int stride = 1;
  // The first rows fill the pipeline (distribution, multipliers, the adder tree): their
  // states cannot repeat yet.
  const int warm_up = rn_.levels;
  auto skip_rows = [&](const Mark& a) {
    const int p = str_index - a.str_index;
    const long long periods = (dim_str - 1 - str_index) / p;  // keep the last row to push
    if (periods <= 0) return false;
    const int to = str_index + static_cast<int>(periods) * p;
    const std::uint64_t gb_i = cnt_[c_gb_i_];
    repeat_change(cycle_, a.cycle, periods);
    repeat_change(cnt_, a.counters, periods);
    cnt_[c_gb_i_] = gb_i + streamed_reads(str_index, to);
    repeat_change(outputs_seen, a.outputs, periods);
    for (std::size_t vn = 0; vn < vnat.size(); ++vn) {
      const int from = vnat[vn];
      repeat_change(vnat[vn], a.vnat[vn], periods);
      if (values_)  // outputs the skipped cycles would have written
        for (int i = from; i < vnat[vn]; ++i) from_fabric_[out_index(clusters[vn].row, i)] = 0;
    }
    str_index = to;
    values_valid_ = false;
    ++skips;
    return true;
  };

  std::uint64_t stepped = 0;
  while (true) {
    if (state_ == State::Configuring) {
      build_configuration();
      marks.clear();
      stride = 1;
      if (fast_) end_phase();
      if (fast_ && idle()) {
        if (const PhaseEffect* e = repeat_phase(configuration_words())) {
          skip_configuration(*e);
          if (!next_configuration()) break;
          continue;
        }
      }
    }
    if (fast_ && state_ == State::DistStr && str_index >= warm_up && str_index % stride == 0) {
      fabric_state(state);
      const std::uint64_t key = marks.key(state);
      const Mark* seen = marks.find(key, state);
      if (seen && skip_rows(*seen)) {
        marks.clear();
        continue;
      }
      if (marks.size() >= 64) {
        marks.clear();
        stride = std::min(2 * stride, 1024);
      }
      marks.remember(key, state, Mark{str_index, cycle_, cnt_, outputs_seen, vnat});
    }
    ++cycle_;
    ++stepped;
    require(stepped < 4'000'000'000ULL, "simulation exceeded 4e9 cycles");
    if (state_ == State::Configuring) {
      configure(sizes, psum_first, 1);
    } else if (state_ == State::DistSta) {
      int ms = 0;
      for (std::size_t v = 0; v < clusters.size(); ++v) {
        if (psum_first[v]) ++ms;
        for (std::int64_t e = clusters[v].first; e < clusters[v].last; ++e) {
          ++cnt_[c_gb_w_];
          const int dest = ms++;
          push_to_ports(kWeight, values_ ? sta.values[e] : 0.0f, &dest, 1);
        }
      }
    } else if (state_ == State::DistStr) {
      const int s = str_index;
      const int init_j = fold_j;
      if (init_j > 0) {
        // The partial sum of this output from the previous part of the row.
        const float psum = values_ ? output_[out_index(clusters[0].row, s)] : 0.0f;
        ++cnt_[c_gb_pr_];
        push_to_ports(kPsum, psum, psum_dest.data(), 1);
      }
      // Streamed non-zeros with no stationary partner are read and go nowhere.
      cnt_[c_gb_i_] += static_cast<std::uint64_t>(str_nnz_in(s, init_j, end_j));
      const std::uint64_t* bits = &str_bits[s * words_per_row];
      for (std::size_t c = 0; c < columns.size(); ++c) {
        const int j = columns[c];
        if (j < init_j || j >= end_j) continue;
        const bool nonzero = (bits[j / 64] >> (j % 64)) & 1;
        push_to_ports(kInput, nonzero && values_ ? str_value(s, j) : 0.0f,
                      column_dests.data() + column_first[c], column_first[c + 1] - column_first[c]);
      }
      ++str_index;
    }
    receive_results();
    for (std::size_t n = (write_fifo_.size() + 1) / 2; n > 0; --n) {
      const Psum p = write_fifo_.pop();
      const int vn = p.vn;
      ++cnt_[c_gb_pw_];
      if (values_) {
        const std::size_t at = out_index(clusters[vn].row, vnat[vn]);
        output_[at] = p.value;
        from_fabric_[at] = values_valid_;
      }
      ++vnat[vn];
      if (++outputs_seen == outputs_expected) iteration_complete = true;
    }
    switch (state_) {
      case State::Configuring:
        state_ = State::DistSta;
        break;
      case State::DistSta:
        state_ = State::DistStr;
        break;
      case State::DistStr:
        if (str_index == dim_str) state_ = State::Waiting;
        break;
      case State::Waiting:
        if (iteration_complete) {
          iteration_complete = false;
          next_configuration();
        }
        break;
      case State::AllSent:
        break;
    }
    if (fabric_cycle()) break;
  }
  return finish(stepped, skips);
}

}  // namespace sparse

EngineRun run_sigma(const HardwareConfig& hw, const SparseGemmOp& op,
                    const SparseEngineOptions& options) {
  sparse::SparseMachine machine(hw, options);
  return machine.run_sigma(op);
}

}  // namespace telar::sim
