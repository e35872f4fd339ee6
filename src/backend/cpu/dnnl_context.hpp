#pragma once
// The oneDNN engine and stream telar's CPU backend uses, and small helpers around memory
// descriptors. Only backend/cpu includes oneDNN headers.
#include <oneapi/dnnl/dnnl.hpp>

#include "core/shape.hpp"

namespace telar::backend::cpu {

dnnl::engine& cpu_engine();
// A stream per calling thread (workers of the thread communicator run graphs concurrently).
dnnl::stream& cpu_stream();

dnnl::memory::dims to_dims(const Shape& shape);
// Row-major f32 descriptor of a shape (nc, nchw, oihw, goihw ... as the rank says).
dnnl::memory::desc plain_f32(const Shape& shape);
bool is_plain(const dnnl::memory::desc& md, const Shape& shape);
// Whether a descriptor holds 8-bit integers (s8 or u8).
bool is_int8(const dnnl::memory::desc& md);
// The 8-bit type of an int8 encoding: u8 for unsigned values (e.g. after a ReLU), else s8.
dnnl::memory::data_type int8_type(bool is_unsigned);
// `md`'s layout (dims, strides, blocking) holding another data type.
dnnl::memory::desc with_data_type(const dnnl::memory::desc& md, dnnl::memory::data_type type);

// Primitive attributes every telar primitive uses: user-managed scratchpad (one buffer per
// plan, so the steady-state step allocates nothing).
dnnl::primitive_attr default_attr();

}  // namespace telar::backend::cpu
