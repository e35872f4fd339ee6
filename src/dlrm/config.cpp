#include "dlrm/config.hpp"

#include <fmt/format.h>

#include <limits>

#include "core/enum_names.hpp"
#include "core/error.hpp"
#include "core/parse.hpp"

namespace telar::dlrm {

constexpr EnumNames<InteractionOp, InteractionOp::Cat> kInteractionOps{{"dot", "cat"}};

InteractionOp parse_interaction_op(std::string_view text) {
  if (auto op = kInteractionOps.find(text)) return *op;
  fail("--arch-interaction-op: '{}' is not an interaction; use {}", text,
       kInteractionOps.choices());
}

std::string_view interaction_op_name(InteractionOp op) {
  return kInteractionOps(op);
}

std::int64_t DlrmConfig::interaction_width() const {
  const std::int64_t features = tables() + 1;
  const std::int64_t d = bottom.back();
  if (interaction == InteractionOp::Cat) return features * d;
  return (interaction_itself ? features * (features + 1) / 2 : features * (features - 1) / 2) + d;
}

std::vector<std::int64_t> DlrmConfig::top_layers() const {
  std::vector<std::int64_t> widths{interaction_width()};
  widths.insert(widths.end(), top.begin(), top.end());
  return widths;
}

std::int64_t DlrmConfig::table_bytes() const {
  std::int64_t bytes = 0;
  for (std::int64_t rows : table_rows) bytes += rows * embedding_dim * 4;
  return bytes;
}

std::int64_t DlrmConfig::mlp_parameters() const {
  std::int64_t n = 0;
  for (std::size_t i = 1; i < bottom.size(); ++i) n += bottom[i - 1] * bottom[i] + bottom[i];
  const auto t = top_layers();
  for (std::size_t i = 1; i < t.size(); ++i) n += t[i - 1] * t[i] + t[i];
  return n;
}

void DlrmConfig::validate() const {
  require(embedding_dim > 0, "--arch-sparse-feature-size must be positive, got {}", embedding_dim);
  require(!table_rows.empty(), "--arch-embedding-size: give at least one table size");
  require(!bottom.empty(), "--arch-mlp-bot: give the dense input width and the layer widths");
  require(!top.empty(), "--arch-mlp-top: give the layer widths, ending with 1");
  for (auto v : table_rows) require(v > 0, "--arch-embedding-size: table sizes must be positive");
  for (auto v : bottom) require(v > 0, "--arch-mlp-bot: widths must be positive");
  for (auto v : top) require(v > 0, "--arch-mlp-top: widths must be positive");
  if (embedding_dim != bottom.back())
    fail(
        "--arch-sparse-feature-size {} does not match the last width of --arch-mlp-bot {} "
        "({}): the embedding width must equal the bottom MLP's output",
        embedding_dim, bottom.back(), fmt::join(bottom, "-"));
  if (top.back() != 1)
    fail(
        "--arch-mlp-top {} ends with {}, but DLRM's top MLP gives one click probability: end "
        "it with 1",
        fmt::join(top, "-"), top.back());
  constexpr std::int64_t kMaxRows = std::numeric_limits<std::int32_t>::max();
  for (auto v : table_rows)
    require(v <= kMaxRows,
            "--arch-embedding-size: a table of {} rows is larger than the {} "
            "supported",
            v, kMaxRows);
  require(embedding_dim <= 65536, "--arch-sparse-feature-size {} is too large (at most 65536)",
          embedding_dim);
}

std::string DlrmConfig::summary() const {
  return fmt::format("Bottom MLP - [{}]\nEmbedding Bags - [{}]\nTop MLP - [{}]\n",
                     fmt::join(bottom, " "), fmt::join(table_rows, " "),
                     fmt::join(top_layers(), " "));
}

DlrmConfig make_config(std::int64_t embedding_dim, std::string_view embedding_sizes,
                       std::string_view mlp_bot, std::string_view mlp_top,
                       std::string_view interaction_op, bool interaction_itself) {
  DlrmConfig c;
  c.embedding_dim = embedding_dim;
  c.table_rows = parse_int_list(embedding_sizes, '-', "--arch-embedding-size");
  c.bottom = parse_int_list(mlp_bot, '-', "--arch-mlp-bot");
  c.top = parse_int_list(mlp_top, '-', "--arch-mlp-top");
  c.interaction = parse_interaction_op(interaction_op);
  c.interaction_itself = interaction_itself;
  c.validate();
  return c;
}

}  // namespace telar::dlrm
