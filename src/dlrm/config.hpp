#pragma once
// DLRM's architecture as dlrm_s_pytorch.py's flags describe it: the bottom MLP (its first width
// is the dense input), T embedding tables of one width, the feature interaction (dot or cat)
// and the top MLP, to which DLRM prepends the interaction's width.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace telar::dlrm {

enum class InteractionOp { Dot, Cat };

InteractionOp parse_interaction_op(std::string_view text);  // "dot" | "cat"
std::string_view interaction_op_name(InteractionOp op);

struct DlrmConfig {
  std::int64_t embedding_dim = 2;        // --arch-sparse-feature-size
  std::vector<std::int64_t> table_rows;  // --arch-embedding-size
  std::vector<std::int64_t> bottom;      // --arch-mlp-bot, the dense input width first
  std::vector<std::int64_t> top;         // --arch-mlp-top as typed (ends with 1)
  InteractionOp interaction = InteractionOp::Dot;
  bool interaction_itself = false;  // --arch-interaction-itself

  std::int64_t dense_features() const { return bottom.front(); }
  std::int64_t tables() const { return static_cast<std::int64_t>(table_rows.size()); }
  // The top MLP's input width: d + T(T+1)/2 pairs (dot), (T+1)(T+2)/2 with the diagonal, or
  // (T+1)d (cat).
  std::int64_t interaction_width() const;
  // The top MLP's widths with the interaction width prepended, as DLRM prints it.
  std::vector<std::int64_t> top_layers() const;
  std::int64_t table_bytes() const;  // all tables, fp32
  std::int64_t mlp_parameters() const;

  // Throws telar::Error with a one-line message naming the flag to fix.
  void validate() const;
  // The reference's model summary, three lines:
  //   Bottom MLP - [64 32] / Embedding Bags - [1000 1000] / Top MLP - [42 64 1]
  std::string summary() const;
};

// Parses the dash lists ("128-64-64-32") of the reference's flags and validates the result.
DlrmConfig make_config(std::int64_t embedding_dim, std::string_view embedding_sizes,
                       std::string_view mlp_bot, std::string_view mlp_top,
                       std::string_view interaction_op, bool interaction_itself);

}  // namespace telar::dlrm
