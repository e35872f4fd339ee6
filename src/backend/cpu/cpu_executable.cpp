// The CPU executable: plans (one per batch size seen) over one set of gradients.
//
// With several threads, a batch of a graph whose samples are independent of each other is
// split into one part per thread: each thread runs its own plan over its rows with one-thread
// primitives, and the parts' parameter gradients are summed. A step then synchronises the
// threads twice (after forward, after backward and the sum) instead of around every primitive,
// and each thread runs whole GEMMs at one-thread efficiency. For the Fashion-MNIST MLP it was
// the faster threading in bench/train; in `telar train` the two are within noise of each other
// (docs/benchmarks.md). cpu:split=off runs every primitive across the threads instead.
#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <exception>
#include <map>
#include <set>

#include "backend/compiled_executable.hpp"
#include "backend/cpu/cpu_backend.hpp"
#include "backend/cpu/plan.hpp"
#include "backend/cpu/shared_plan_memory.hpp"
#include "backend/cpu/thread_choice.hpp"
#include "backend/schedule.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/parse.hpp"
#include "core/threads.hpp"

namespace telar::backend::cpu {

namespace {

// Each part of a split batch has at least this many rows: below it, per-part overheads and
// thin GEMMs cost more than the split saves.
constexpr std::int64_t kMinRowsPerPart = 32;

// Whether every sample's outputs and gradients depend on that sample only, so that a batch
// can be run as parts and the parts' gradients summed: no batch statistics (BatchNorm in
// training), no random masks (each part's plan would draw the same ones), no CSR inputs, no
// input gradients; every input and output has the batch first, except scalar (mean) losses.
bool samples_independent(const graph::Graph& graph, const CompileOptions& options) {
  using graph::OpKind;
  if (!options.input_gradients.empty()) return false;
  std::vector<bool> is_loss(graph.values().size(), false);
  for (const auto& node : graph.nodes()) {
    if (node.kind == OpKind::BatchNorm2d || node.kind == OpKind::Dropout ||
        node.kind == OpKind::EmbeddingBag)
      return false;
    if (graph::op_is_loss(node.kind))
      for (graph::ValueId out : node.outputs) is_loss[static_cast<std::size_t>(out)] = true;
  }
  for (graph::ValueId id : graph.inputs()) {
    const Shape& shape = graph.value(id).shape;
    if (shape.empty() || shape[0] != kBatchDim) return false;
    if (std::any_of(shape.begin() + 1, shape.end(), [](std::int64_t d) { return d < 0; }))
      return false;
  }
  for (graph::ValueId id : graph.outputs()) {
    const Shape& shape = graph.value(id).shape;
    const bool batch_first = !shape.empty() && shape[0] == kBatchDim;
    if (!batch_first && !(shape.empty() && is_loss[static_cast<std::size_t>(id)])) return false;
  }
  return true;
}

// One batch size run as parts, one per thread.
struct SplitPlan {
  std::vector<std::unique_ptr<Plan>> parts;
  std::deque<graph::ParameterSet> part_grads;  // parts 1..n-1 (part 0 writes the executable's)
  std::vector<RowRange> rows;
  std::vector<Tensor> outputs;             // the whole batch's, assembled from the parts
  std::vector<std::exception_ptr> errors;  // by part, rethrown after the parallel region
};

class CpuExecutable final : public CompiledExecutable {
 public:
  CpuExecutable(const graph::Graph& graph, graph::ParameterSet& params, bool use_dnnl, int threads,
                bool split, bool adapt_threads, bool winograd, bool reuse,
                const CompileOptions& options, std::string name)
      : CompiledExecutable(graph, params, options, std::move(name)),
        use_dnnl_(use_dnnl),
        threads_(threads),
        split_(split && samples_independent(graph, options)),
        parameter_ids_(graph.parameters()),
        adapt_threads_(adapt_threads && options.inference),
        bf16_(options.precision == Precision::BF16),
        int8_(options.precision == Precision::INT8 ? options.quantization : nullptr),
        winograd_(winograd && options.inference),
        inference_(options.inference && options.input_gradients.empty()),
        memory_(!reuse       ? PlanMemory::Own
                : inference_ ? PlanMemory::Inference
                             : PlanMemory::Training) {}

  void forward(std::span<const Tensor> inputs, Mode mode) override {
    if (threads_ > 0) set_compute_threads(threads_);
    const std::int64_t batch = batch_size_of(graph_, inputs);
    current_ = nullptr;
    current_split_ = nullptr;
    last_probe_ = false;
    // Node observers (profiling scopes) see one node at a time on one thread: no split then.
    const int parts = observer_ ? 1 : parts_for(batch);
    if (parts > 1) {
      current_split_ = &split_plan(batch, parts);
      forward_split(*current_split_, inputs, mode, random_stream_++);
      return;
    }
    const int threads = threads_in_use();
    if (mode == Mode::Eval && adapt_threads_ && threads > 1 && !observer_) {
      forward_adapting_threads(inputs, batch, threads);
      return;
    }
    current_ = &plan(plans_, batch);
    current_->forward(inputs, mode, random_stream_++, observer_);
  }

  bool last_forward_was_probe() const override { return last_probe_; }

  const Tensor& output(std::size_t i) const override {
    if (current_split_) return current_split_->outputs.at(i);
    if (!current_) fail("internal: output() before forward()");
    return current_->output(i);
  }

  void backward(std::span<const Tensor> output_grads) override {
    if (current_split_) {
      backward_split(*current_split_, output_grads);
      return;
    }
    if (!current_) fail("internal: backward() before forward()");
    if (threads_ > 0) set_compute_threads(threads_);
    current_->backward(output_grads, observer_);
  }

  const Tensor& input_gradient(std::size_t i) const override {
    if (!current_) fail("internal: input_gradient() before forward() (or of a batch run in parts)");
    return current_->input_gradient(i);
  }

  std::optional<std::int64_t> planned_bytes() const override {
    std::int64_t bytes = 0;
    std::set<const void*> seen;  // the parameters every plan reads, counted once
    const auto add = [&](const Plan& p) { bytes += p.held_bytes(seen); };
    plans_.for_each(add);
    one_thread_plans_.for_each(add);
    split_plans_.for_each([&](const SplitPlan& s) {
      for (const auto& part : s.parts) add(*part);
    });
    return bytes;
  }

  void release_plans() override {
    current_ = nullptr;
    current_split_ = nullptr;
    thread_choices_.clear();
    timed_plans_.clear();
    plans_.clear();
    split_plans_.clear();
    one_thread_plans_.clear();
    shared_.clear();
  }

 private:
  // `together`: for the parts of a split batch, which run at once (they share no memory).
  PlanOptions plan_options(bool together = false) {
    PlanOptions o{use_dnnl_,        seed_,   &params_version_,
                  input_gradients_, bf16_,   int8_.get(),
                  winograd_,        memory_, together ? nullptr : &shared_};
    o.inference = inference_;
    return o;
  }

  // The plan for `batch` in `cache`, its primitives made for the current compute threads.
  Plan& plan(PlanCache<Plan>& cache, std::int64_t batch) {
    return cache.at(batch, [&] {
      return std::make_unique<Plan>(graph_, params_, grads_, batch, plan_options());
    });
  }

  // An evaluation forward on the executable's threads or on one (thread_choice.hpp), timed.
  void forward_adapting_threads(std::span<const Tensor> inputs, std::int64_t batch, int threads) {
    auto [it, fresh] = thread_choices_.try_emplace(batch, threads);
    ThreadChoice& choice = it->second;
    struct Restore {
      int threads;
      ~Restore() { set_compute_threads(threads); }
    } restore{threads};
    if (fresh) {
      // The one-thread plan is made and run once now, with the first call (which sets up its
      // own plan anyway), so that no later call pays for setting it up.
      set_compute_threads(1);
      Plan& one = plan(one_thread_plans_, batch);
      one.forward(inputs, Mode::Eval, random_stream_, nullptr);
      timed_plans_.insert(&one);
    }
    const int use = choice.next();
    last_probe_ = choice.probing();
    set_compute_threads(use);
    Plan& p = plan(use == threads ? plans_ : one_thread_plans_, batch);
    const bool first = timed_plans_.insert(&p).second;  // binds primitives: not timed
    Stopwatch sw;
    p.forward(inputs, Mode::Eval, random_stream_++, nullptr);
    if (!first) choice.record(use, sw.seconds());
    current_ = &p;
  }

  // cpu:threads=N, or the process's compute threads.
  int threads_in_use() const { return threads_ > 0 ? threads_ : compute_threads(); }

  int parts_for(std::int64_t batch) const {
    if (!split_) return 1;
    return static_cast<int>(std::min<std::int64_t>(threads_in_use(), batch / kMinRowsPerPart));
  }

  SplitPlan& split_plan(std::int64_t batch, int parts) {
    return split_plans_.at(batch, [&] { return make_split_plan(batch, parts); });
  }

  std::unique_ptr<SplitPlan> make_split_plan(std::int64_t batch, int parts) {
    auto s = std::make_unique<SplitPlan>();
    // The parts' primitives are made for one thread, the thread that runs them.
    const int threads = compute_threads();
    set_compute_threads(1);
    for (int p = 0; p < parts; ++p) {
      const RowRange rows{batch * p / parts, batch * (p + 1) / parts};
      graph::ParameterSet* grads = &grads_;
      if (p > 0)
        grads = &s->part_grads.emplace_back(graph::ParameterSet::zeros_like_parameters(graph_));
      s->parts.push_back(std::make_unique<Plan>(graph_, params_, *grads, rows.end - rows.begin,
                                                plan_options(/*together=*/true)));
      s->rows.push_back(rows);
    }
    set_compute_threads(threads);
    for (graph::ValueId id : graph_.outputs()) {
      const graph::Value& v = graph_.value(id);
      s->outputs.emplace_back(bind_batch(v.shape, batch), v.dtype);
    }
    s->errors.resize(static_cast<std::size_t>(parts));
    return s;
  }

  // Runs body(part, thread, threads) on every thread of one parallel region (parts are dealt
  // round-robin if the runtime gives fewer threads), with one-thread primitives inside.
  template <typename Body>
  static void run_parts(SplitPlan& s, const Body& body) {
    const int parts = static_cast<int>(s.parts.size());
#pragma omp parallel num_threads(parts)
    {
      omp_set_num_threads(1);
      const int thread = omp_get_thread_num(), threads = omp_get_num_threads();
      body(thread, threads);
    }
    for (std::exception_ptr& e : s.errors)
      if (e) {
        std::exception_ptr error = e;
        for (std::exception_ptr& other : s.errors) other = nullptr;
        std::rethrow_exception(error);
      }
  }

  void forward_split(SplitPlan& s, std::span<const Tensor> inputs, Mode mode,
                     std::uint64_t stream) {
    const int parts = static_cast<int>(s.parts.size());
    run_parts(s, [&](int thread, int threads) {
      for (int p = thread; p < parts; p += threads) {
        try {
          Plan& plan = *s.parts[static_cast<std::size_t>(p)];
          const RowRange rows = s.rows[static_cast<std::size_t>(p)];
          plan.forward(inputs, mode, stream, nullptr, rows);
          for (std::size_t i = 0; i < s.outputs.size(); ++i) {
            Tensor& whole = s.outputs[i];
            if (whole.rank() == 0) continue;  // a mean loss: combined below
            const Tensor& part = plan.output(i);
            std::memcpy(static_cast<char*>(whole.raw()) +
                            static_cast<std::size_t>(rows.begin) *
                                (whole.nbytes() / static_cast<std::size_t>(whole.dim(0))),
                        part.raw(), part.nbytes());
          }
        } catch (...) {
          s.errors[static_cast<std::size_t>(p)] = std::current_exception();
        }
      }
    });
    const double batch = static_cast<double>(s.rows.back().end);
    for (std::size_t i = 0; i < s.outputs.size(); ++i) {
      Tensor& whole = s.outputs[i];
      if (whole.rank() != 0) continue;
      double mean = 0.0;  // the parts' means weighted by their rows
      for (std::size_t p = 0; p < s.parts.size(); ++p)
        mean += static_cast<double>(s.parts[p]->output(i).f32()[0]) *
                static_cast<double>(s.rows[p].end - s.rows[p].begin) / batch;
      whole.f32()[0] = static_cast<float>(mean);
    }
  }

  void backward_split(SplitPlan& s, std::span<const Tensor> output_grads) {
    const int parts = static_cast<int>(s.parts.size());
    const double batch = static_cast<double>(s.rows.back().end);
    run_parts(s, [&](int thread, int threads) {
      for (int p = thread; p < parts; p += threads) {
        try {
          const RowRange rows = s.rows[static_cast<std::size_t>(p)];
          const auto share = static_cast<float>(static_cast<double>(rows.end - rows.begin) / batch);
          s.parts[static_cast<std::size_t>(p)]->backward(output_grads, nullptr, rows, share);
        } catch (...) {
          s.errors[static_cast<std::size_t>(p)] = std::current_exception();
        }
      }
#pragma omp barrier
      for (const std::exception_ptr& e : s.errors)
        if (e) return;
      // The sum of the parts' gradients, each thread over its share of every tensor.
      for (graph::ValueId id : parameter_ids_) {
        float* sum = grads_.at(id).f32();
        const std::int64_t n = grads_.at(id).numel();
        const std::int64_t begin = n * thread / threads, end = n * (thread + 1) / threads;
        for (const graph::ParameterSet& part : s.part_grads) {
          const float* g = part.at(id).f32();
          for (std::int64_t j = begin; j < end; ++j) sum[j] += g[j];
        }
      }
    });
  }

  bool use_dnnl_;
  int threads_;
  bool split_;
  std::vector<graph::ValueId> parameter_ids_;
  PlanCache<Plan> plans_;
  PlanCache<SplitPlan> split_plans_;
  bool adapt_threads_;
  PlanCache<Plan> one_thread_plans_;              // evaluation on one thread (thread_choice.hpp)
  std::map<std::int64_t, ThreadChoice> thread_choices_;  // by batch size
  bool last_probe_ = false;  // the last forward was a probe of the thread choice
  std::set<const Plan*> timed_plans_;             // plans past their first call
  bool bf16_;
  std::shared_ptr<const QuantizationTable> int8_;  // Precision::INT8's calibration
  bool winograd_;  // cpu:winograd=on (the default) in an inference executable
  bool inference_;           // evaluation forwards only (PlanOptions::inference)
  PlanMemory memory_;        // cpu:reuse=on (the default): Inference or Training; off: Own
  SharedPlanMemory shared_;  // what its plans share (they never run at once)
  Plan* current_ = nullptr;
  SplitPlan* current_split_ = nullptr;
};

}  // namespace

namespace {

// The value of an on|off option of a cpu backend string; `hint` is what to give instead.
bool on_off(const BackendSpec& spec, const std::string& key, const std::string& value,
            std::string_view hint) {
  require(value == "on" || value == "off", "backend '{}': {}={} is not on or off; {}", spec.text,
          key, value, hint);
  return value == "on";
}

}  // namespace

std::unique_ptr<Executable> compile(const BackendSpec& spec, const graph::Graph& graph,
                                    graph::ParameterSet& params, const CompileOptions& options) {
  int threads = 0;
  bool use_dnnl = true;
  bool split = true;
  bool adapt = true;
  bool winograd = true;
  bool reuse = true;
  if (spec.target == "ref")
    use_dnnl = false;
  else if (!spec.target.empty())
    fail("backend '{}': unknown cpu variant '{}'; use cpu or cpu:ref", spec.text, spec.target);
  for (const auto& [key, value] : spec.options) {
    if (key == "threads") {
      threads = static_cast<int>(parse_int(value, "cpu:threads"));
      require(threads > 0 && threads <= max_compute_threads(),
              "cpu:threads={} is out of range; give 1 to {} (this machine has {} cores)", threads,
              max_compute_threads(), hardware_threads());
    } else if (key == "ref") {
      use_dnnl = false;
    } else if (key == "adapt") {
      adapt = on_off(spec, key, value,
                     "give cpu:adapt=off to keep every evaluation on all the threads, even on a "
                     "shared machine");
    } else if (key == "split") {
      split = on_off(spec, key, value,
                     "give cpu:threads=N:split=off to run every primitive across the threads "
                     "instead of a batch part per thread");
    } else if (key == "winograd") {
      winograd = on_off(spec, key, value,
                        "give cpu:winograd=off to run every convolution as a direct one");
    } else if (key == "reuse") {
      reuse = on_off(spec, key, value,
                     "give cpu:reuse=off to keep every value of an inference plan, and every "
                     "gradient of a training plan, in a buffer of its own");
    } else {
      fail(
          "backend '{}': unknown option '{}'; cpu takes threads=N, split=on|off, "
          "adapt=on|off, winograd=on|off and reuse=on|off",
          spec.text, key);
    }
  }
  for (graph::ValueId id : graph.parameters())
    if (!params.has(id)) fail("internal: parameter '{}' has no tensor", graph.value(id).name);
  if (options.precision == Precision::BF16) {
    require(use_dnnl,
            "--precision bf16 runs on oneDNN's primitives; cpu:ref has fp32 reference "
            "kernels only: run it on cpu, not cpu:ref");
    require(has_bf16(),
            "--precision bf16 needs a CPU with AVX-512 BF16 (avx512_bf16) or AMX; oneDNN "
            "dispatches to {} here: use --precision fp32",
            dispatched_isa());
  }
  if (options.precision == Precision::INT8) {
    require(use_dnnl,
            "--precision int8 runs on oneDNN's primitives; cpu:ref has fp32 reference "
            "kernels only: run it on cpu, not cpu:ref");
    require(has_int8(),
            "--precision int8 needs a CPU with VNNI (avx512_vnni or avx_vnni); oneDNN "
            "dispatches to {} here: use --precision fp32",
            dispatched_isa());
    require(options.quantization != nullptr,
            "--precision int8 needs calibration: quantize the model first (telar quantize "
            "--checkpoint RUN --data fashion-mnist --out DIR), then run DIR (telar eval|bench "
            "--checkpoint DIR)");
  }
  std::string name = use_dnnl ? "cpu" : "cpu:ref";
  if (threads > 0) name += fmt::format(":threads={}", threads);
  if (!split) name += ":split=off";
  if (!adapt) name += ":adapt=off";
  if (!winograd) name += ":winograd=off";
  if (options.precision != Precision::FP32)
    name += fmt::format(" ({})", precision_name(options.precision));
  return std::make_unique<CpuExecutable>(graph, params, use_dnnl, threads, split, adapt, winograd,
                                         reuse, options, name);
}

}  // namespace telar::backend::cpu
