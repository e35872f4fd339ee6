// The three embedding storages hold the same model: equal outputs bit for bit before and after
// training steps (the sparse updates take the same arithmetic), and procedural tables hold
// memory only for the rows training changed.
#include <gtest/gtest.h>

#include "dlrm/executor.hpp"

using namespace telar;
using namespace telar::dlrm;

namespace {

struct Trace {
  std::vector<float> losses;
  std::vector<float> probabilities;
  std::vector<float> row;  // a trained row after the steps
};

Trace train(StorageKind kind, LossFunction loss) {
  const DlrmConfig c = make_config(16, "5000-300-7", "5-16", "8-1", "dot", false);
  DlrmModel model(c, kind, 21);
  auto exe = make_executor(model, "cpu", {loss, 4});
  auto data = make_random_data(c, BatchPlan{96, 32}, {6, false}, 3, true);
  Trace tr;
  DlrmBatch b;
  for (int epoch = 0; epoch < 2; ++epoch)
    for (std::int64_t j = 0; j < data->batches(); ++j) {
      data->batch(j, b);
      tr.losses.push_back(exe->forward(b, true));
      exe->backward();
      exe->step(0.5f);
    }
  data->batch(0, b);
  exe->forward(b, false);
  tr.probabilities.assign(exe->probabilities().f32(), exe->probabilities().f32() + b.size());
  tr.row.resize(16);
  model.tables[1].read_row(b.indices[1].data<std::int64_t>()[0], tr.row.data());
  return tr;
}

}  // namespace

TEST(DlrmStorage, InitialValuesAreTheSameFunctionEverywhere) {
  const DlrmConfig c = make_config(4, "100-50", "3-4", "1", "dot", false);
  EmbeddingTables mem(c, StorageKind::Memory, 5), map(c, StorageKind::Mmap, 5),
      proc(c, StorageKind::Procedural, 5);
  float a[4], b[4], p[4];
  for (std::int64_t r : {0, 17, 49}) {
    mem[1].read_row(r, a);
    map[1].read_row(r, b);
    proc[1].read_row(r, p);
    for (int k = 0; k < 4; ++k) {
      EXPECT_EQ(a[k], b[k]);
      EXPECT_EQ(a[k], p[k]);
      EXPECT_EQ(a[k], initial_embedding_value(5, 1, 50, r, k));
      // DLRM's U(-sqrt(1/rows), sqrt(1/rows)).
      EXPECT_LE(std::abs(a[k]), std::sqrt(1.0f / 50.0f));
    }
  }
  // Another seed or table gives other values.
  EXPECT_NE(initial_embedding_value(5, 1, 50, 3, 0), initial_embedding_value(6, 1, 50, 3, 0));
  EXPECT_NE(initial_embedding_value(5, 1, 50, 3, 0), initial_embedding_value(5, 0, 50, 3, 0));
  EXPECT_EQ(proc.held_bytes(), 0);
  EXPECT_EQ(mem.held_bytes(), (100 + 50) * 4 * 4);
}

TEST(DlrmStorage, MemoryMmapAndProceduralTrainIdentically) {
  for (LossFunction loss : {LossFunction::Mse, LossFunction::Bce}) {
    SCOPED_TRACE(loss_function_name(loss));
    const Trace m = train(StorageKind::Memory, loss);
    const Trace f = train(StorageKind::Mmap, loss);
    const Trace p = train(StorageKind::Procedural, loss);
    EXPECT_EQ(m.losses, f.losses);
    EXPECT_EQ(m.losses, p.losses);
    EXPECT_EQ(m.probabilities, f.probabilities);
    EXPECT_EQ(m.probabilities, p.probabilities);
    EXPECT_EQ(m.row, p.row);
    EXPECT_NE(m.losses.front(), m.losses.back());  // it did train
  }
}

TEST(DlrmStorage, ProceduralTablesHoldOnlyTrainedRows) {
  // A billion-row table costs nothing until rows are trained, then ~dim floats per row.
  const DlrmConfig c = make_config(8, "1000000000", "3-8", "1", "dot", false);
  DlrmModel model(c, StorageKind::Procedural, 1);
  EXPECT_EQ(model.tables.held_bytes(), 0);
  auto exe = make_executor(model, "cpu", {LossFunction::Mse, 1});
  auto data = make_random_data(c, BatchPlan{64, 64}, {10, true}, 3);
  DlrmBatch b;
  data->batch(0, b);
  exe->forward(b, true);
  exe->backward();
  exe->step(0.1f);
  const std::int64_t rows = b.indices[0].numel();
  EXPECT_GE(model.tables.held_bytes(), rows * 8 * 4);
  EXPECT_LT(model.tables.held_bytes(), rows * 8 * 4 * 4 + 4096);
}

TEST(DlrmStorage, AutoChoosesByBudget) {
  const DlrmConfig c = make_config(32, "1000000-1000000", "3-32", "1", "dot", false);  // 256 MB
  StorageOptions o;
  o.budget_bytes = 300 << 20;
  EXPECT_EQ(choose_storage(c, o), StorageKind::Memory);
  o.budget_bytes = 100 << 20;
  EXPECT_EQ(choose_storage(c, o), StorageKind::Procedural);
  o.mode = "mmap";
  EXPECT_EQ(choose_storage(c, o), StorageKind::Mmap);
  o.mode = "disk";
  EXPECT_THROW(choose_storage(c, o), Error);
}

// Issue 23, item 1: tables larger than the memory available are never put in memory: auto
// falls back to procedural whatever the budget, and memory is refused naming both sizes.
TEST(DlrmStorage, TablesLargerThanTheMemoryAvailableAreNotPutInMemory) {
  const DlrmConfig c = make_config(32, "1000000-1000000", "3-32", "1", "dot", false);  // 256 MB
  StorageOptions o;
  o.budget_bytes = std::int64_t{1} << 40;
  EXPECT_EQ(choose_storage(c, o, std::int64_t{1} << 30), StorageKind::Memory);
  EXPECT_EQ(choose_storage(c, o, std::int64_t{100} << 20), StorageKind::Procedural);
  o.mode = "memory";
  EXPECT_EQ(choose_storage(c, o, std::nullopt), StorageKind::Memory);  // unknown: allowed
  try {
    choose_storage(c, o, std::int64_t{100} << 20);
    ADD_FAILURE() << "memory storage of 256 MB accepted with 100 MB available";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("256.0 MB, more than the 104.9 MB"), std::string::npos)
        << e.what();
  }
  o.mode = "mmap";
  EXPECT_EQ(choose_storage(c, o, std::int64_t{100} << 20), StorageKind::Mmap);
}

// A checkpoint's view of the tables: what trained_rows() gives, restore_rows() puts back into a
// fresh table of the same seed, row for row, for every storage; foreign rows are refused.
TEST(DlrmStorage, TrainedRowsRestoreIntoAFreshTable) {
  const DlrmConfig c = make_config(16, "5000-300-7", "5-16", "8-1", "dot", false);
  auto data = make_random_data(c, BatchPlan{96, 32}, {6, false}, 3, true);
  for (StorageKind kind : {StorageKind::Memory, StorageKind::Mmap, StorageKind::Procedural}) {
    SCOPED_TRACE(storage_name(kind));
    DlrmModel trained(c, kind, 21);
    auto exe = make_executor(trained, "cpu", {LossFunction::Mse, 4});
    DlrmBatch b;
    for (std::int64_t j = 0; j < data->batches(); ++j) {
      data->batch(j, b);
      exe->forward(b, true);
      exe->backward();
      exe->step(0.5f);
    }
    DlrmModel fresh(c, kind, 21);
    for (std::int64_t t = 0; t < trained.tables.size(); ++t) {
      const auto saved = trained.tables[t].trained_rows();
      // Array tables give every row; a procedural one only those training changed.
      EXPECT_EQ(saved.rows.defined(), kind == StorageKind::Procedural);
      if (kind == StorageKind::Procedural) {
        EXPECT_GT(saved.rows.numel(), 0);
        EXPECT_LE(saved.rows.numel(), trained.tables[t].rows());
        if (t == 0) {
          EXPECT_LT(saved.rows.numel(), 5000);
        }
      }
      fresh.tables[t].restore_rows(saved, "test");
      std::vector<float> a(16), f(16);
      for (std::int64_t r = 0; r < trained.tables[t].rows(); ++r) {
        trained.tables[t].read_row(r, a.data());
        fresh.tables[t].read_row(r, f.data());
        ASSERT_EQ(a, f) << "table " << t << " row " << r;
      }
    }
    // Rows of another table's shape are refused with the source's name.
    try {
      fresh.tables[2].restore_rows(trained.tables[0].trained_rows(), "ckpt.telar");
      ADD_FAILURE() << "restored table 0's rows into table 2";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("ckpt.telar"), std::string::npos) << e.what();
    }
  }
  // A procedural overlay naming a row twice, or past the table, is refused.
  DlrmModel proc(c, StorageKind::Procedural, 21);
  EmbeddingTable::TrainedRows bad{Tensor(Shape{2}, DType::I64), Tensor(Shape{2, 16})};
  bad.rows.data<std::int64_t>()[0] = 3;
  bad.rows.data<std::int64_t>()[1] = 3;
  EXPECT_THROW(proc.tables[1].restore_rows(bad, "x"), Error);
  bad.rows.data<std::int64_t>()[1] = 300;
  EXPECT_THROW(proc.tables[1].restore_rows(bad, "x"), Error);
}
