// Scope labels, path segments and the --profile-scopes set.
#include "prof/scope.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

using namespace telar::prof;

TEST(ProfScopeLabel, PathSegments) {
  EXPECT_EQ(path_segment(ScopeLabel::run()), "run");
  EXPECT_EQ(path_segment(ScopeLabel::epoch(0)), "epoch[0]");
  EXPECT_EQ(path_segment(ScopeLabel::batch(17)), "batch[17]");
  EXPECT_EQ(path_segment(ScopeLabel::node("conv2", Pass::Forward)), "node[conv2].fwd");
  EXPECT_EQ(path_segment(ScopeLabel::node("conv2", Pass::Backward)), "node[conv2].bwd");
  EXPECT_EQ(path_segment(ScopeLabel::node("conv2", Pass::None)), "node[conv2]");
  EXPECT_EQ(path_segment(ScopeLabel::eval()), "eval");
  EXPECT_EQ(path_segment(ScopeLabel::eval(2)), "eval[2]");
  EXPECT_EQ(path_segment(ScopeLabel::region("naive-O3", 512)), "naive-O3[512]");
  EXPECT_EQ(path_segment(ScopeLabel::region("load")), "load");
  EXPECT_EQ(node_column(ScopeLabel::node("fc1", Pass::Backward)), "fc1.bwd");
  EXPECT_EQ(node_column(ScopeLabel::batch(1)), "");
}

TEST(ProfScopeSet, ParsesKindsAndRejectsUnknownOnes) {
  const ScopeSet s = ScopeSet::parse("run,batch, node");
  EXPECT_TRUE(s.contains(ScopeKind::Run));
  EXPECT_FALSE(s.contains(ScopeKind::Epoch));
  EXPECT_TRUE(s.contains(ScopeKind::Node));
  EXPECT_EQ(s.str(), "run,batch,node");
  EXPECT_EQ(ScopeSet::parse("all").str(), "run,epoch,batch,eval,node,region");
  try {
    ScopeSet::parse("run,epoc");
    FAIL();
  } catch (const telar::Error& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean 'epoch'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ScopeSet::parse(""), telar::Error);
}
