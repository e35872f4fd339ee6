#include "dlrm/model.hpp"

#include <fmt/format.h>

#include <cmath>

#include "core/enum_names.hpp"
#include "core/error.hpp"
#include "graph/builder.hpp"

namespace telar::dlrm {

constexpr EnumNames<Component, Component::Loss> kComponentNames{
    {"Bottom MLP", "EmbeddingBags", "Interaction", "Top MLP", "Loss"}};
static_assert(kComponentNames.kCount == kComponents);

std::string_view component_name(Component c) {
  return kComponentNames(c);
}

Component component_of(const graph::Node& node) {
  return component_of(std::string_view(node.name));
}

Component component_of(std::string_view n) {
  if (n.starts_with("bot/")) return Component::BottomMlp;
  if (n.starts_with("emb/")) return Component::EmbeddingBags;
  if (n == "interaction") return Component::Interaction;
  if (n.starts_with("top/")) return Component::TopMlp;
  if (n.starts_with("loss")) return Component::Loss;
  fail("internal: node '{}' is not part of a DLRM graph", n);
}

std::string table_node_name(std::int64_t t) {
  return fmt::format("emb/{}", t);
}
std::string table_output_name(std::int64_t t) {
  return fmt::format("emb/{}.out", t);
}

namespace {

graph::ValueId mlp(graph::GraphBuilder& b, graph::ValueId x,
                   const std::vector<std::int64_t>& widths, const std::string& prefix,
                   bool sigmoid_last, bool final_sigmoid) {
  for (std::size_t i = 1; i < widths.size(); ++i) {
    const std::string k = std::to_string(i);
    x = b.linear(x, widths[i], prefix + "fc" + k, true, widths[i - 1]);
    const bool last = i + 1 == widths.size();
    if (last && sigmoid_last) {
      if (final_sigmoid) x = b.sigmoid(x, prefix + "sigmoid");
    } else {
      x = b.relu(x, prefix + "relu" + k);
    }
  }
  return x;
}

// DLRM's initialisation of every Linear layer (create_mlp in dlrm_s_pytorch.py).
void dlrm_initializers(graph::Graph& g) {
  for (const auto& node : g.nodes()) {
    if (node.kind != graph::OpKind::Linear) continue;
    const auto& a = node.attr<graph::LinearAttrs>();
    const float n = static_cast<float>(a.in_features), m = static_cast<float>(a.out_features);
    g.value(node.inputs[1]).init = graph::Initializer::normal(0.0f, std::sqrt(2.0f / (m + n)));
    if (a.bias)
      g.value(node.inputs[2]).init = graph::Initializer::normal(0.0f, std::sqrt(1.0f / m));
  }
}

}  // namespace

graph::Graph build_graph(const DlrmConfig& c, const GraphOptions& options) {
  c.validate();
  graph::GraphBuilder b("dlrm");
  const graph::ValueId dense = b.input("dense", {c.dense_features()});
  std::vector<graph::ValueId> embeddings;
  for (std::int64_t t = 0; t < c.tables(); ++t) {
    if (options.embeddings_as_inputs) {
      embeddings.push_back(b.input(table_output_name(t), {c.embedding_dim}));
    } else {
      const graph::ValueId idx = b.dynamic_input(fmt::format("indices/{}", t), DType::I64);
      const graph::ValueId off = b.input(fmt::format("offsets/{}", t), {}, DType::I64);
      embeddings.push_back(b.embedding_bag(idx, off, c.table_rows[t], c.embedding_dim,
                                           graph::EmbeddingBagMode::Sum, table_node_name(t)));
    }
  }
  const graph::ValueId x = mlp(b, dense, c.bottom, "bot/", false, false);
  graph::ValueId z;
  if (c.interaction == InteractionOp::Dot) {
    z = b.dot_interaction(x, embeddings, c.interaction_itself, "interaction");
  } else {
    std::vector<graph::ValueId> all{x};
    all.insert(all.end(), embeddings.begin(), embeddings.end());
    z = b.concat(all, "interaction");
  }
  const graph::ValueId p = mlp(b, z, c.top_layers(), "top/", true, options.final_sigmoid);
  b.output(p);
  graph::Graph g = b.finish();
  dlrm_initializers(g);
  return g;
}

constexpr EnumNames<LossFunction, LossFunction::Bce> kLossFunctions{{"mse", "bce"}};

LossFunction parse_loss_function(std::string_view text) {
  if (auto f = kLossFunctions.find(text)) return *f;
  fail("--loss-function: '{}' is not supported; use {}", text, kLossFunctions.choices());
}

std::string_view loss_function_name(LossFunction f) {
  return kLossFunctions(f);
}

graph::Graph build_training_graph(const DlrmConfig& config, LossFunction loss) {
  GraphOptions o;
  o.embeddings_as_inputs = true;
  o.final_sigmoid = loss == LossFunction::Mse;
  return graph::with_loss(build_graph(config, o), loss == LossFunction::Mse
                                                      ? graph::LossKind::MSE
                                                      : graph::LossKind::BCEWithLogits);
}

}  // namespace telar::dlrm
