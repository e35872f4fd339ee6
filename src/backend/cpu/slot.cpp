#include "backend/cpu/slot.hpp"

#include "backend/cpu/dnnl_context.hpp"

namespace telar::backend::cpu {

Shape storage_shape(const dnnl::memory::desc& md, const Shape& shape, bool plain) {
  return plain ? shape : Shape{(static_cast<std::int64_t>(md.get_size()) + 3) / 4};
}

Tensor allocate_for(const dnnl::memory::desc& md, const Shape& shape, bool plain,
                    SlotMemory* memory) {
  const Shape storage = storage_shape(md, shape, plain);
  return memory ? memory->allocate(storage, DType::F32) : Tensor(storage);
}

dnnl::memory Slot::data_memory() const { return dnnl::memory(md, cpu_engine(), data.raw()); }
dnnl::memory Slot::grad_memory() const { return dnnl::memory(md, cpu_engine(), grad.raw()); }

}  // namespace telar::backend::cpu
