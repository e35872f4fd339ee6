// report.html of a profiled training-shaped run: per-batch timelines and per-layer bars.
#include "prof/html_report.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "core/error.hpp"
#include "core/files.hpp"
#include "prof/session.hpp"
#include "test_work.hpp"

using namespace telar::prof;

namespace {

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

Profile two_epochs_of_three_batches() {
  SessionOptions o;
  o.events = {"task-clock", "page-faults"};
  Session s(o);
  Scope run(s, ScopeLabel::run());
  for (int e = 0; e < 2; ++e) {
    Scope epoch(s, ScopeLabel::epoch(e));
    for (int b = 0; b < 3; ++b) {
      Scope batch(s, ScopeLabel::batch(b));
      for (const char* n : {"conv1", "fc"}) {
        Scope f(s, ScopeLabel::node(n, Pass::Forward));
        telar::prof::testing::small_matmul(12, 1);
      }
      for (const char* n : {"fc", "conv1"}) {
        Scope f(s, ScopeLabel::node(n, Pass::Backward));
        telar::prof::testing::small_matmul(12, 2);
      }
    }
  }
  return s.finish();
}

}  // namespace

TEST(ProfHtml, TimelinePerEpochAndBarsPerLayer) {
  const Profile p = two_epochs_of_three_batches();
  telar::report::HtmlReport html("profile");
  add_profile_sections(html, p);
  const std::string page = html.render();
  EXPECT_NE(page.find("Per-batch timeline"), std::string::npos);
  EXPECT_NE(page.find("Per layer"), std::string::npos);
  // Timelines: wall time, 2 events and the derived cpus_utilized, one polyline per epoch each.
  EXPECT_EQ(occurrences(page, "<polyline"), 4u * 2u);
  EXPECT_NE(page.find("task-clock per layer"), std::string::npos);
  EXPECT_NE(page.find("conv1"), std::string::npos);
  EXPECT_EQ(page.find("<script"), std::string::npos);
}

TEST(ProfHtml, RunDirectoryFilesAndUnwritableOutput) {
  const Profile p = two_epochs_of_three_batches();
  const auto dir =
      std::filesystem::temp_directory_path() / ("telar_prof_html_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  write_profile_files(p, dir, "profile");
  for (const char* f : {"counters.csv", "metrics.csv", "report.html"})
    EXPECT_TRUE(std::filesystem::exists(dir / f)) << f;
  EXPECT_EQ(telar::read_file(dir / "counters.csv").rfind("scope,epoch,batch,node,cpu,event", 0),
            0u);
  std::filesystem::remove_all(dir);
  EXPECT_THROW(write_profile_files(p, "/proc/telar-prof-out", "x"), telar::Error);
}
