// `telar demo`'s profiler step. For now the profiled work is a stand-in for one training epoch:
// three "layers" whose forward and backward passes are double matmuls (the lead swaps this body
// for a real profiled training epoch once the Trainer exists).
#include <fmt/format.h>

#include <iostream>
#include <vector>

#include "cli/demo_prof_step.hpp"
#include "prof/html_report.hpp"
#include "prof/matmul/kernels.hpp"
#include "prof/session.hpp"
#include "prof/table_writer.hpp"

namespace telar::cli {

void demo_profiler_step(const std::filesystem::path& out_dir) {
  prof::SessionOptions options;
  options.events = {"task-clock", "page-faults", "context-switches", "cycles", "instructions"};
  prof::Session session(options);

  const struct Layer {
    const char* name;
    int n;
  } layers[] = {{"fc1", 96}, {"relu", 24}, {"fc2", 64}};
  std::vector<double> a(96 * 96, 0.5), b(96 * 96, 0.25), c(96 * 96);
  {
    prof::Scope run(session, prof::ScopeLabel::run());
    prof::Scope epoch(session, prof::ScopeLabel::epoch(0));
    for (int batch = 0; batch < 8; ++batch) {
      prof::Scope scope(session, prof::ScopeLabel::batch(batch));
      for (const auto& layer : layers) {
        prof::Scope node(session, prof::ScopeLabel::node(layer.name, prof::Pass::Forward));
        prof::matmul::naive_o3(a.data(), b.data(), c.data(), layer.n);
      }
      for (auto it = std::rbegin(layers); it != std::rend(layers); ++it) {
        prof::Scope node(session, prof::ScopeLabel::node(it->name, prof::Pass::Backward));
        prof::matmul::naive_o3(a.data(), b.data(), c.data(), it->n);
        prof::matmul::naive_o3(a.data(), b.data(), c.data(), it->n);  // weight and input grads
      }
    }
  }
  const prof::Profile profile = session.finish();
  std::cout << "profiled epoch (run ⊃ epoch ⊃ batch ⊃ node fwd/bwd):\n"
            << prof::format_table(profile, {12});
  prof::write_profile_files(profile, out_dir, "telar demo: profiled epoch");
  std::cout << fmt::format("profile written to {}\n", (out_dir / "report.html").string());
}

}  // namespace telar::cli
