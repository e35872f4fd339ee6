#pragma once
// What the plans of one executable share where they never run at once (a plan per batch size
// and, for an inference executable's thread choice, per thread count; a training step's
// backward follows its own forward before any other plan runs): the parameters in the layouts
// their primitives want (Winograd's, blocked, bf16: ResNet-18's 3x3 convolutions take 80 MiB a
// copy), the arenas their values and gradients live in, and their scratchpad.
// Each kernel still fills a weight buffer when it sees the parameters changed; the plans run
// one at a time, so no two write it, or the arena, at once. The parts of a batch split across
// threads run together: they share nothing.
#include <oneapi/dnnl/dnnl.hpp>
#include <vector>

#include "core/tensor.hpp"

namespace telar::backend::cpu {

class SharedPlanMemory {
 public:
  // The buffer for `param` in layout `md`, made on the first request.
  dnnl::memory weights(const Tensor& param, const dnnl::memory::desc& md);
  // At least `bytes` (64-byte aligned): the last one given if large enough, else a new one
  // (the plans given the old one keep it; a new scratchpad at least twice the last).
  Tensor arena(std::size_t bytes);
  Tensor gradients(std::size_t bytes);     // a training plan's gradient arena
  Tensor step_buffers(std::size_t bytes);  // a training plan's backward staging (Plan::step_buffer)
  Tensor scratch(std::size_t bytes);
  // Forgets them all (the plans that hold them keep theirs).
  void clear();

 private:
  struct Weights {
    const void* param;
    dnnl::memory::desc md;
    dnnl::memory memory;
  };
  std::vector<Weights> weights_;
  Tensor arena_, gradients_, step_buffers_, scratch_;
};

}  // namespace telar::backend::cpu
