// The gradient of the whole DLRM (bottom MLP, tables, interaction, top MLP, loss) against
// central finite differences of the loss, for MLP weights and biases and for embedding
// entries, with both losses and both interactions.
#include <gtest/gtest.h>

#include <cmath>

#include "dlrm/executor.hpp"

using namespace telar;
using namespace telar::dlrm;

namespace {

void check_gradients(const DlrmConfig& c, LossFunction loss, const char* backend) {
  DlrmModel model(c, StorageKind::Memory, 5);
  CpuExecutor exe(model, backend::parse_backend_spec(backend), {loss, 2});
  auto data = make_random_data(c, BatchPlan{6, 6}, {3, false}, 9, true);
  DlrmBatch b;
  data->batch(0, b);
  exe.forward(b, true);
  exe.backward();
  auto loss_at = [&] { return static_cast<double>(exe.forward(b, false)); };
  const double eps = 1e-2;

  // MLP parameters: a few entries of every weight and bias.
  const graph::Graph& g = exe.training_graph();
  int checked = 0;
  for (graph::ValueId id : g.parameters()) {
    Tensor& p = exe.parameters().at(id);
    const Tensor analytic = exe.gradients().at(id).clone();
    for (std::int64_t i = 0; i < p.numel(); i += std::max<std::int64_t>(1, p.numel() / 4)) {
      const float keep = p.f32()[i];
      p.f32()[i] = keep + static_cast<float>(eps);
      exe.parameters_changed();
      const double up = loss_at();
      p.f32()[i] = keep - static_cast<float>(eps);
      exe.parameters_changed();
      const double down = loss_at();
      p.f32()[i] = keep;
      exe.parameters_changed();
      const double numeric = (up - down) / (2 * eps);
      EXPECT_NEAR(analytic.f32()[i], numeric, 3e-4 + 1e-2 * std::abs(numeric))
          << g.value(id).name << "[" << i << "]";
      ++checked;
    }
  }
  EXPECT_GT(checked, 10);

  // Embedding entries: every used row's first and last columns of table 0, moved with a
  // one-row sparse update (W -= lr * g with lr = -eps, g = e_col).
  const SparseRowGrad grad = exe.table_gradient(0);
  ASSERT_GT(grad.size(), 0);
  for (std::int64_t u = 0; u < grad.size(); ++u)
    for (std::int64_t col : {std::int64_t{0}, c.embedding_dim - 1}) {
      SparseRowGrad nudge;
      nudge.dim = c.embedding_dim;
      nudge.rows = {grad.rows[u]};
      nudge.values.assign(static_cast<std::size_t>(c.embedding_dim), 0.0f);
      nudge.values[static_cast<std::size_t>(col)] = 1.0f;
      model.tables[0].apply_sgd(nudge, -static_cast<float>(eps));
      const double up = loss_at();
      model.tables[0].apply_sgd(nudge, static_cast<float>(2 * eps));
      const double down = loss_at();
      model.tables[0].apply_sgd(nudge, -static_cast<float>(eps));
      const double numeric = (up - down) / (2 * eps);
      EXPECT_NEAR(grad.values[u * c.embedding_dim + col], numeric, 3e-4 + 1e-2 * std::abs(numeric))
          << "table 0 row " << grad.rows[u] << " col " << col;
    }
}

}  // namespace

TEST(DlrmGradient, MseDotMatchesFiniteDifferences) {
  check_gradients(make_config(3, "7-5", "4-5-3", "4-1", "dot", false), LossFunction::Mse,
                  "cpu:ref");
}

TEST(DlrmGradient, BceDotWithDiagonalMatchesFiniteDifferences) {
  check_gradients(make_config(3, "7-5-6", "4-3", "5-1", "dot", true), LossFunction::Bce, "cpu");
}

TEST(DlrmGradient, BceCatMatchesFiniteDifferences) {
  check_gradients(make_config(2, "4-9", "3-2", "3-1", "cat", false), LossFunction::Bce, "cpu");
}
