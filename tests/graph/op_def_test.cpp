// The op table: every kind has one definition, and what callers read through it (names, loss
// flags, lowering classes) is what the IR documents.
#include "graph/op_def.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "core/error.hpp"

using namespace telar::graph;

namespace {
OpKind kind_at(std::size_t i) {
  return static_cast<OpKind>(i);
}
}  // namespace

TEST(OpDef, EveryKindHasANamedDefinitionWithShapeInference) {
  std::set<std::string> names;
  for (std::size_t i = 0; i < kOpKindCount; ++i) {
    const OpDef& def = op_def(kind_at(i));
    EXPECT_FALSE(def.name.empty()) << "kind " << i;
    EXPECT_NE(def.infer, nullptr) << def.name;
    EXPECT_EQ(op_name(kind_at(i)), def.name);
    names.insert(std::string(def.name));
  }
  EXPECT_EQ(names.size(), kOpKindCount) << "two kinds share a name";
  EXPECT_EQ(op_name(OpKind::Conv2d), "Conv2d");
  EXPECT_EQ(op_name(OpKind::GlobalAvgPool), "GlobalAvgPool");
}

TEST(OpDef, ExactlyTheLossesAreLosses) {
  const std::set<OpKind> losses{OpKind::CrossEntropy, OpKind::BCEWithLogits, OpKind::MSE};
  for (std::size_t i = 0; i < kOpKindCount; ++i)
    EXPECT_EQ(op_is_loss(kind_at(i)), losses.count(kind_at(i)) == 1) << op_name(kind_at(i));
}

TEST(OpDef, AcceleratorsLowerLinearConvAndEmbeddingBagOnly) {
  for (std::size_t i = 0; i < kOpKindCount; ++i) {
    const OpKind k = kind_at(i);
    const Lowering expected = k == OpKind::Linear         ? Lowering::Gemm
                              : k == OpKind::Conv2d       ? Lowering::Conv
                              : k == OpKind::EmbeddingBag ? Lowering::SparseDense
                                                          : Lowering::Host;
    EXPECT_EQ(op_def(k).lowering, expected) << op_name(k);
  }
}

// Kinds share a kernel family exactly where one backend kernel serves several ops: the
// element-wise activations and the losses; every other op has its own.
// Families shared by several ops: the activations, the binary arithmetic ops, the relabellings
// and the losses. Every other op has its own.
TEST(OpDef, OnlyTheListedFamiliesAreShared) {
  const std::set<OpKind> activations{OpKind::ReLU,      OpKind::ReLU6,     OpKind::Sigmoid,
                                     OpKind::Tanh,      OpKind::LeakyReLU, OpKind::HardSigmoid,
                                     OpKind::HardSwish, OpKind::SiLU,      OpKind::GELU,
                                     OpKind::Sqrt,      OpKind::Erf,       OpKind::Pow};
  const std::set<OpKind> binary{OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div};
  const std::set<OpKind> relabel{OpKind::Flatten, OpKind::Reshape};
  std::set<KernelFamily> own;
  for (std::size_t i = 0; i < kOpKindCount; ++i) {
    const OpKind kind = kind_at(i);
    const KernelFamily family = kernel_family(kind);
    EXPECT_LT(static_cast<std::size_t>(family), static_cast<std::size_t>(KernelFamily::Count));
    if (activations.count(kind)) {
      EXPECT_EQ(family, KernelFamily::Activation) << op_name(kind);
    } else if (binary.count(kind)) {
      EXPECT_EQ(family, KernelFamily::Binary) << op_name(kind);
    } else if (relabel.count(kind)) {
      EXPECT_EQ(family, KernelFamily::Flatten) << op_name(kind);
    } else if (op_is_loss(kind)) {
      EXPECT_EQ(family, KernelFamily::Loss) << op_name(kind);
    } else {
      EXPECT_TRUE(own.insert(family).second) << op_name(kind) << " shares its kernels";
    }
  }
  // Every family runs some op.
  EXPECT_EQ(own.size() + 4, static_cast<std::size_t>(KernelFamily::Count));
}

TEST(OpDef, AKindOutsideTheEnumIsAnInternalError) {
  EXPECT_THROW(op_def(OpKind::Count), telar::Error);
}
