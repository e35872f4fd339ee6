#pragma once
// The storage of one graph value inside a plan: data (and gradient) in a layout chosen by the
// value's producer. Plain values hold a tensor of the logical shape; values a oneDNN producer
// keeps in a blocked layout (e.g. nChw16c) hold a flat buffer of the descriptor's size.
#include <oneapi/dnnl/dnnl.hpp>

#include "backend/quantization.hpp"
#include "core/tensor.hpp"
#include "graph/graph.hpp"

namespace telar::backend::cpu {

struct Slot {
  graph::ValueId id = graph::kNoValue;
  Shape shape;                 // concrete (batch bound); kDynamicDim stays for dynamic inputs
  DType dtype = DType::F32;
  graph::ValueKind kind = graph::ValueKind::Activation;
  dnnl::memory::desc md;       // storage layout of data and grad (f32 values only)
  // Precision::INT8: the value's calibrated encoding (scale 0: none). Where md's data type is
  // s8 or u8 the storage holds q with real = int8.scale * q.
  Int8Encoding int8;
  bool plain = true;
  Tensor data;
  bool requires_grad = false;
  Tensor grad;                 // same layout as data; allocated for training
  // A training plan's value whose one reader may write its output over it: no other step
  // reads it, it is no graph output, and its producer's backward does not read it (a ReLU
  // after BatchNorm then keeps one tensor where it would keep two).
  bool overwritable = false;

  bool dynamic() const { return !shape_is_concrete(shape); }
  // A oneDNN memory over this slot's data or gradient (created on demand; cheap).
  dnnl::memory data_memory() const;
  dnnl::memory grad_memory() const;
};

// Where a plan's kernels get memory: the storage of the values they write (the plan gives each
// its own buffer, or for inference a place in one arena shared by values whose lifetimes do not
// meet), scratch space their primitives use while their step runs (the plan's steps run one
// at a time, so one buffer serves them all), and buffers a backward step stages data in.
class SlotMemory {
 public:
  virtual ~SlotMemory() = default;
  virtual Tensor allocate(const Shape& shape, DType dtype) = 0;
  // At least `bytes`; its content is not kept from one step to the next.
  virtual Tensor scratch(std::size_t bytes) = 0;
  // A buffer of layout `md` that the step whose backward is being prepared uses only while that
  // backward runs (a gradient or input in the layout its primitive wants): a step's buffers lie
  // side by side, other steps' in the same memory. The memory has no address until every step
  // is prepared (the plan sets it before backward first runs); it is not a scratchpad, which
  // may be in use at the same time.
  virtual dnnl::memory step_buffer(const dnnl::memory::desc& md) = 0;
};

// The shape of a value's storage: its logical shape if plain, else a flat f32 buffer of the
// descriptor's size.
Shape storage_shape(const dnnl::memory::desc& md, const Shape& shape, bool plain);

// Allocates a tensor of storage_shape(): from `memory` where given, else a buffer of its own.
Tensor allocate_for(const dnnl::memory::desc& md, const Shape& shape, bool plain,
                    SlotMemory* memory = nullptr);

}  // namespace telar::backend::cpu
