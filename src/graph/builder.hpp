#pragma once
// GraphBuilder: adds layers with their parameters, PyTorch-style default initializers and
// unique names, so model definitions read like the networks they describe.
#include <map>
#include <string>

#include "graph/graph.hpp"

namespace telar::graph {

class GraphBuilder {
 public:
  explicit GraphBuilder(std::string name) : graph_(std::move(name)) {}

  ValueId input(const std::string& name, Shape shape_without_batch, DType dtype = DType::F32);
  // An input whose first dimension is dynamic (e.g. EmbeddingBag indices), no batch dimension.
  ValueId dynamic_input(const std::string& name, DType dtype);

  // in_features 0: taken from x. A declared width (e.g. the first number of an MLP spec) is
  // checked against x, so a model that does not fit its input fails with a clear message.
  ValueId linear(ValueId x, std::int64_t out_features, const std::string& name = "",
                 bool bias = true, std::int64_t in_features = 0);
  ValueId conv2d(ValueId x, std::int64_t out_channels, std::int64_t kernel, std::int64_t stride = 1,
                 std::int64_t pad = 0, std::int64_t groups = 1, bool bias = true,
                 const std::string& name = "", std::int64_t dilation = 1);
  ValueId conv2d(ValueId x, const Conv2dAttrs& attrs, const std::string& name = "");
  ValueId batchnorm2d(ValueId x, const std::string& name = "");
  ValueId relu(ValueId x, const std::string& name = "");
  ValueId relu6(ValueId x, const std::string& name = "");
  ValueId sigmoid(ValueId x, const std::string& name = "");
  ValueId tanh(ValueId x, const std::string& name = "");
  ValueId softmax(ValueId x, const std::string& name = "");
  ValueId maxpool2d(ValueId x, std::int64_t kernel, std::int64_t stride, std::int64_t pad = 0,
                    const std::string& name = "");
  ValueId avgpool2d(ValueId x, std::int64_t kernel, std::int64_t stride, std::int64_t pad = 0,
                    const std::string& name = "");
  ValueId global_avgpool(ValueId x, const std::string& name = "");
  ValueId flatten(ValueId x, const std::string& name = "");
  ValueId dropout(ValueId x, float p, const std::string& name = "");
  ValueId add(ValueId a, ValueId b, const std::string& name = "");
  ValueId concat(const std::vector<ValueId>& xs, const std::string& name = "");
  // Table initialized U(-sqrt(1/rows), sqrt(1/rows)) as DLRM does.
  ValueId embedding_bag(ValueId indices, ValueId offsets, std::int64_t rows, std::int64_t dim,
                        EmbeddingBagMode mode = EmbeddingBagMode::Sum,
                        const std::string& name = "", ValueId per_sample_weights = kNoValue);
  ValueId dot_interaction(ValueId dense, const std::vector<ValueId>& embeddings,
                          bool self_interaction = false, const std::string& name = "");

  void output(ValueId v) { graph_.add_output(v); }
  const Shape& shape(ValueId v) const { return graph_.value(v).shape; }
  Graph& graph() { return graph_; }
  Graph finish() { return std::move(graph_); }

 private:
  std::string unique(const std::string& requested, const char* prefix);
  Graph graph_;
  std::map<std::string, int> counters_;
};

}  // namespace telar::graph
