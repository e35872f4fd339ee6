#include "optimize/inference.hpp"

#include "optimize/passes.hpp"

namespace telar::optimize {

InferenceGraph optimize_for_inference(const graph::Graph& graph, const graph::ParameterSet& params,
                                      const InferenceOptions& options) {
  using Pass = Rewritten (*)(const graph::Graph&, const graph::ParameterSet&);
  struct Named {
    std::string_view name;
    Pass run;
    bool fusion;
  };
  static constexpr Named kPasses[] = {
      {"remove_dropout", remove_dropout, false},
      {"fold_batchnorm", fold_batchnorm, false},
      {"fold_bias_add", fold_bias_add, false},
      {"fold_scale_into_linear", fold_scale_into_linear, false},
      {"schedule_shortcuts_first", schedule_shortcuts_first, true},
      {"fuse_residual_add", fuse_residual_add, true},
      {"fuse_gated_activation", fuse_gated_activation, true},
      {"fuse_gelu", fuse_gelu, true},
      {"fuse_layer_norm", fuse_layer_norm, true},
      {"fold_pad_into_pool", fold_pad_into_pool, true},
      {"fuse_activation", fuse_activation, true},
  };
  InferenceGraph out{graph, params, {}};
  for (const Named& p : kPasses) {
    if (p.fusion && !options.fuse) continue;
    Rewritten r = p.run(out.graph, out.params);
    out.graph = std::move(r.graph);
    out.params = std::move(r.params);
    out.passes.push_back({p.name, r.rewrites});
  }
  return out;
}

}  // namespace telar::optimize
