#include "train/model_fingerprint.hpp"

#include <fmt/format.h>

#include <bit>
#include <cstring>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <variant>

#include "core/enum_names.hpp"

namespace telar::train {

namespace {

// FNV-1a, 64-bit. Every field is fed in a fixed width and byte order, and strings carry their
// length, so distinct structures cannot produce the same byte stream.
class StableHasher {
 public:
  void bytes(const void* data, std::size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < n; ++i) {
      hash_ ^= p[i];
      hash_ *= 0x100000001b3ULL;
    }
  }
  void u64(std::uint64_t v) {
    unsigned char le[8];
    for (int i = 0; i < 8; ++i) le[i] = static_cast<unsigned char>(v >> (8 * i));
    bytes(le, 8);
  }
  void i64(std::int64_t v) { u64(static_cast<std::uint64_t>(v)); }
  void f32(float v) { u64(std::bit_cast<std::uint32_t>(v)); }
  void flag(bool v) { u64(v ? 1 : 0); }
  void text(std::string_view s) {
    u64(s.size());
    bytes(s.data(), s.size());
  }
  std::uint64_t value() const { return hash_; }

 private:
  std::uint64_t hash_ = 0xcbf29ce484222325ULL;
};

// Names rather than enum ordinals, so reordering an enum does not change fingerprints.
constexpr EnumNames<graph::ValueKind, graph::ValueKind::Activation> kValueKindNames{
    {"input", "parameter", "buffer", "activation"}};

// One attribute field, by its type: integers as i64, floats as f32, flags, enums by name, lists
// of integers as their length and elements.
template <typename F> void hash_field(StableHasher& h, const F& f) {
  if constexpr (std::is_same_v<F, bool>) {
    h.flag(f);
  } else if constexpr (std::is_same_v<F, float>) {
    h.f32(f);
  } else if constexpr (std::is_integral_v<F>) {
    h.i64(f);
  } else if constexpr (std::is_same_v<F, std::vector<std::int64_t>>) {
    h.i64(static_cast<std::int64_t>(f.size()));
    for (auto v : f) h.i64(v);
  } else if constexpr (std::is_same_v<F, graph::EmbeddingBagMode> ||
                       std::is_same_v<F, graph::ResizeMode>) {
    h.text(graph::mode_name(f));
  } else if constexpr (std::is_same_v<F, graph::OpKind>) {
    h.text(f == graph::OpKind::Count ? std::string_view("none") : graph::op_name(f));
  } else if constexpr (std::is_same_v<F, graph::PostOps> || std::is_same_v<F, graph::EndPadding> ||
                       std::is_same_v<F, graph::SliceStep>) {
    // Nothing when there are none (PostOps, EndPadding) or it is 1 (SliceStep), so the
    // fingerprints of models (and their checkpoints and tables) predating them stay as they were.
    if (f.any()) std::apply([&h](const auto&... g) { (hash_field(h, g), ...); }, f.fields());
  } else {
    static_assert(sizeof(F) == 0, "model_fingerprint: say how to hash this attribute field type");
  }
}

// The op name, hashed by the caller, determines which struct is present; its fields() are
// hashed in their order.
void hash_attrs(StableHasher& h, const graph::Attrs& attrs) {
  std::visit(
      [&h](const auto& a) {
        if constexpr (!std::is_same_v<std::decay_t<decltype(a)>, std::monostate>)
          std::apply([&h](const auto&... f) { (hash_field(h, f), ...); }, a.fields());
      },
      attrs);
}

}  // namespace

std::uint64_t model_fingerprint(const graph::Graph& graph) {
  StableHasher h;
  h.text("telar-model-fingerprint-v1");
  h.u64(graph.values().size());
  for (const graph::Value& v : graph.values()) {
    h.text(kValueKindNames(v.kind));
    h.text(v.name);
    h.text(dtype_name(v.dtype));
    h.u64(v.shape.size());
    for (std::int64_t d : v.shape) h.i64(d);
  }
  h.u64(graph.nodes().size());
  for (const graph::Node& n : graph.nodes()) {
    h.text(graph::op_name(n.kind));
    h.text(n.name);
    hash_attrs(h, n.attrs);
    h.u64(n.inputs.size());
    for (graph::ValueId id : n.inputs) h.i64(id);
    h.u64(n.outputs.size());
    for (graph::ValueId id : n.outputs) h.i64(id);
  }
  h.u64(graph.inputs().size());
  for (graph::ValueId id : graph.inputs()) h.i64(id);
  h.u64(graph.outputs().size());
  for (graph::ValueId id : graph.outputs()) h.i64(id);
  return h.value();
}

std::string fingerprint_str(std::uint64_t fingerprint) {
  return fmt::format("0x{:016x}", fingerprint);
}

}  // namespace telar::train
