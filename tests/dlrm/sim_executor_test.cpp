// DLRM on the simulated hybrid accelerator: the values equal the CPU executor's; every Linear
// is one dense call and every EmbeddingBag one CSR sparse x dense call whose counts equal the
// single-operation simulator's (sim::Accelerator, driven here directly from the shapes and the
// batch's bags) and, for the EmbeddingBags, the closed forms of spec §3.3 (reads = nnz·(1+d),
// writes = bags·d); the interaction stays on the host; figures add up over passes. And the
// thesis' workload list (spec §5.2).
#include "dlrm/sim_executor.hpp"

#include <gtest/gtest.h>

#include "dlrm/thesis.hpp"
#include "sim/accelerator.hpp"
#include "sim/energy.hpp"

using namespace telar;
using namespace telar::dlrm;
namespace bs = telar::backend::sim;

namespace {

// A small hybrid with fixed tiles, so the expectations below can use the same ones: MAERI
// with 64 multipliers, MAGMA with 32.
bs::SimTarget small_hybrid() {
  sim::HardwareConfig maeri;
  maeri.name = "maeri64";
  maeri.ms_size = 64;
  maeri.dn_bw = maeri.rn_bw = 16;
  maeri.accumulation_buffer = true;
  sim::HardwareConfig magma = maeri;
  magma.name = "magma32";
  magma.ms_size = 32;
  magma.controller = sim::Controller::MagmaSparseDense;
  bs::SimTarget t;
  t.name = "small";
  t.dense = bs::AcceleratorChoice{maeri, sim::MapObjective::Performance, {}};
  t.sparse =
      bs::AcceleratorChoice{magma, sim::MapObjective::Performance, sim::SparseDenseTile{4, 8}};
  return t;
}

const DlrmConfig& small_config() {
  static const DlrmConfig c = make_config(8, "1000-300-50", "16-12-8", "8-4-1", "dot", false);
  return c;
}

std::vector<float> probabilities_of(const Executor& exe, std::int64_t n) {
  return {exe.probabilities().f32(), exe.probabilities().f32() + n};
}

}  // namespace

TEST(DlrmSim, OutputsEqualTheCpuExecutorsForEveryStorage) {
  const DlrmConfig& c = small_config();
  auto data = make_random_data(c, BatchPlan{24, 12}, {10, false}, 7);
  for (StorageKind kind : {StorageKind::Memory, StorageKind::Procedural}) {
    DlrmModel cpu_model(c, kind, 3), sim_model(c, kind, 3);
    auto cpu = make_executor(cpu_model, "cpu", {LossFunction::Mse, 5});
    auto sim = make_sim_executor(sim_model, small_hybrid(), "sim:small", {LossFunction::Mse, 5});
    ASSERT_NE(sim->simulation(), nullptr);
    EXPECT_EQ(cpu->simulation(), nullptr);
    DlrmBatch b;
    for (std::int64_t j = 0; j < data->batches(); ++j) {
      data->batch(j, b);
      // Training steps too: backward and the update run on the host, the same arithmetic.
      EXPECT_EQ(cpu->forward(b, true), sim->forward(b, true));
      EXPECT_EQ(probabilities_of(*cpu, b.size()), probabilities_of(*sim, b.size()));
      cpu->backward();
      sim->backward();
      cpu->step(0.3f);
      sim->step(0.3f);
    }
    data->batch(0, b);
    EXPECT_EQ(cpu->forward(b, false), sim->forward(b, false));
    EXPECT_EQ(probabilities_of(*cpu, b.size()), probabilities_of(*sim, b.size()));
  }
}

TEST(DlrmSim, ComponentsEqualTheSingleOperationSimulatorsSums) {
  const DlrmConfig& c = small_config();
  const std::int64_t B = 12, d = c.embedding_dim, T = c.tables();
  auto data = make_random_data(c, BatchPlan{B, B}, {10, false}, 11);
  DlrmBatch b;
  data->batch(0, b);
  DlrmModel model(c, StorageKind::Procedural, 3);
  const bs::SimTarget target = small_hybrid();
  auto exe = make_sim_executor(model, target, "sim:small", {});
  exe->forward(b, false);
  const SimulationSummary& s = *exe->simulation();

  // Expectations: every Linear as FC M=B, N=out, K=in with the tile the executor reports it used
  // (the mapper's); every table as SparseDense from the bags, tile T_N=4 T_K=8.
  const sim::Accelerator maeri(target.dense->hw), magma(target.sparse->hw);
  sim::RunOptions timing;
  timing.compute_values = false;
  std::array<ComponentFigures, kComponents> expected{};
  auto add = [&](Component comp, const sim::Stats& st) {
    ComponentFigures& f = expected[static_cast<std::size_t>(comp)];
    f.cycles += st.cycles;
    f.gb_reads += st.gb.reads();
    f.gb_writes += st.gb.writes();
    f.energy += sim::compute_energy(sim::default_energy_table(), st.counters).total();
    ++f.calls;
  };
  std::size_t node_index = 0;
  std::int64_t fc_calls = 0;
  for (const graph::Node& node : model.graph.nodes()) {
    const bs::NodeSimulation& n = s.nodes.at(node_index++);
    EXPECT_EQ(n.node, node.name);
    if (node.kind == graph::OpKind::Linear) {
      const auto& a = node.attr<graph::LinearAttrs>();
      const sim::DenseOp op =
          sim::make_gemm(sim::OpKind::Fc, static_cast<int>(B), static_cast<int>(a.out_features),
                         static_cast<int>(a.in_features));
      // The reported tile, "T_M=a T_N=b T_K=c (mapper ...)".
      int tm = 0, tn = 0, tk = 0;
      ASSERT_EQ(std::sscanf(n.tile.c_str(), "T_M=%d T_N=%d T_K=%d", &tm, &tn, &tk), 3) << n.tile;
      add(component_of(node), maeri.run(op, sim::make_gemm_tile(tm, tn, tk), timing).stats);
      ++fc_calls;
    } else if (node.kind == graph::OpKind::EmbeddingBag) {
      const std::int64_t t = std::stoll(node.name.substr(4));
      sim::SparseDenseOp op;
      op.M = static_cast<int>(B);
      op.N = static_cast<int>(d);
      op.K = static_cast<int>(c.table_rows[static_cast<std::size_t>(t)]);
      op.mk.rows = op.M;
      op.mk.cols = op.K;
      op.mk.row_ptr.clear();
      for (std::int64_t i = 0; i < B; ++i)
        op.mk.row_ptr.push_back(b.offsets[t].data<std::int64_t>()[i]);
      op.mk.row_ptr.push_back(b.indices[t].numel());
      for (std::int64_t i = 0; i < b.indices[t].numel(); ++i) {
        op.mk.col.push_back(static_cast<int>(b.indices[t].data<std::int64_t>()[i]));
        op.mk.values.push_back(1.0f);
      }
      add(Component::EmbeddingBags, magma.run(op, sim::SparseDenseTile{4, 8}, timing).stats);
    } else {
      EXPECT_EQ(n.target, "host") << node.name;
      EXPECT_EQ(n.calls, 0) << node.name;
    }
  }
  EXPECT_EQ(fc_calls, 2 + 3);  // bottom 16-12-8, top 14-8-4-1
  for (int i = 0; i < kComponents; ++i) {
    SCOPED_TRACE(component_name(static_cast<Component>(i)));
    const ComponentFigures &got = s.components[static_cast<std::size_t>(i)],
                           &want = expected[static_cast<std::size_t>(i)];
    EXPECT_EQ(got.cycles, want.cycles);
    EXPECT_EQ(got.gb_reads, want.gb_reads);
    EXPECT_EQ(got.gb_writes, want.gb_writes);
    EXPECT_EQ(got.calls, want.calls);
    EXPECT_NEAR(got.energy, want.energy, 1e-9 * std::max(1.0, want.energy));
  }
  // The closed forms of CSR sparse x dense (spec §3.3): one read per non-zero (the multi-hot
  // value) and one per element of the rows it selects; one write per output.
  const ComponentFigures& eb = s[Component::EmbeddingBags];
  EXPECT_EQ(eb.gb_writes, static_cast<std::uint64_t>(T * B * d));
  EXPECT_EQ(eb.gb_reads, static_cast<std::uint64_t>(b.lookups() * (1 + d)));
  EXPECT_EQ(eb.calls, T);
  EXPECT_EQ(s[Component::Interaction].cycles, 0u);
  EXPECT_EQ(s.lookups, b.lookups());
  EXPECT_GT(s[Component::BottomMlp].cycles, 0u);
  EXPECT_GT(s[Component::TopMlp].cycles, 0u);
  EXPECT_NEAR(s.cycle_share(Component::EmbeddingBags) + s.cycle_share(Component::BottomMlp) +
                  s.cycle_share(Component::TopMlp),
              1.0, 1e-12);
}

TEST(DlrmSim, FiguresAddUpOverPassesAndReset) {
  const DlrmConfig& c = small_config();
  auto data = make_random_data(c, BatchPlan{20, 10}, {10, false}, 4);
  DlrmModel model(c, StorageKind::Memory, 3);
  auto exe = make_sim_executor(model, small_hybrid(), "sim:small", {});
  DlrmBatch b;
  std::uint64_t cycles = 0, reads = 0;
  std::int64_t lookups = 0;
  for (std::int64_t j = 0; j < 2; ++j) {
    data->batch(j, b);
    exe->reset_times();
    exe->forward(b, false);
    cycles += exe->simulation()->total().cycles;
    reads += exe->simulation()->total().gb_reads;
    lookups += b.lookups();
  }
  exe->reset_times();
  EXPECT_EQ(exe->simulation()->forwards, 0);
  EXPECT_EQ(exe->simulation()->total().cycles, 0u);
  for (std::int64_t j = 0; j < 2; ++j) {
    data->batch(j, b);
    exe->forward(b, false);
  }
  const SimulationSummary& s = *exe->simulation();
  EXPECT_EQ(s.forwards, 2);
  EXPECT_EQ(s.samples, 20);
  EXPECT_EQ(s.lookups, lookups);
  EXPECT_EQ(s.total().cycles, cycles);
  EXPECT_EQ(s.total().gb_reads, reads);
  EXPECT_EQ(s.nodes.front().calls, 2);  // bot/fc1, once per pass
  EXPECT_EQ(s[Component::EmbeddingBags].gb_writes, 2u * 3 * 10 * 8);
}

TEST(DlrmSim, BackendStrings) {
  DlrmModel model(small_config(), StorageKind::Memory, 3);
  EXPECT_THROW(make_executor(model, "cuda:0", {}), Error);
  EXPECT_THROW(make_executor(model, "sim:", {}), Error);
  EXPECT_THROW(make_executor(model, "sim:/nonexistent/hybrid.toml", {}), Error);
  const std::string hybrid = std::string(TELAR_SOURCE_DIR) + "/configs/hybrid_dlrm.toml";
  auto exe = make_executor(model, "sim:" + hybrid, {});
  ASSERT_NE(exe->simulation(), nullptr);
  EXPECT_EQ(exe->simulation()->target, "hybrid_dlrm");
  // A single MAERI configuration: the tables run on the host.
  auto maeri = make_executor(
      model, "sim:" + std::string(TELAR_SOURCE_DIR) + "/configs/maeri_256mses_128_bw.cfg", {});
  auto data = make_random_data(small_config(), BatchPlan{4, 4}, {5, false}, 1);
  DlrmBatch b;
  data->batch(0, b);
  maeri->forward(b, false);
  EXPECT_EQ((*maeri->simulation())[Component::EmbeddingBags].calls, 0);
  EXPECT_GT((*maeri->simulation())[Component::BottomMlp].calls, 0);
}

TEST(DlrmThesis, TheThirteenWorkloads) {
  const auto& all = thesis_workloads();
  ASSERT_EQ(all.size(), 13u);
  EXPECT_EQ(all[0].name, "DLRM(1)");
  EXPECT_EQ(all[12].name, "50-10M-80-1000");
  // Spec §5.2's derived table: the top MLP with its prepended width.
  EXPECT_EQ(all[0].config().top_layers(), (std::vector<std::int64_t>{47, 128, 64, 1}));
  EXPECT_EQ(all[2].config().bottom, (std::vector<std::int64_t>{512, 256, 32}));
  EXPECT_EQ(all[5].config().top_layers(), (std::vector<std::int64_t>{1307, 128, 64, 1}));
  EXPECT_EQ(all[9].config().table_bytes(), 50LL * 10000000 * 32 * 4);
  EXPECT_EQ(select_thesis_workloads("dlrm1,GROUP3").size(), 5u);
  EXPECT_EQ(select_thesis_workloads("all").size(), 13u);
  EXPECT_EQ(select_thesis_workloads("validation")[2].name, "DLRM(6)");
  EXPECT_THROW(select_thesis_workloads("DLRM(2)"), Error);
  const bs::SimTarget t = thesis_hybrid_target();
  ASSERT_TRUE(t.dense && t.sparse);
  EXPECT_EQ(t.dense->hw.ms_size, 256);
  EXPECT_EQ(t.dense->hw.dn_bw, 128);
  EXPECT_EQ(t.sparse->hw.ms_size, 128);
  EXPECT_EQ(t.sparse->hw.controller, sim::Controller::MagmaSparseDense);
}
