#include "backend/cpu/dnnl_context.hpp"

namespace telar::backend::cpu {

dnnl::engine& cpu_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::stream& cpu_stream() {
  thread_local dnnl::stream stream(cpu_engine());
  return stream;
}

dnnl::memory::dims to_dims(const Shape& shape) { return {shape.begin(), shape.end()}; }

dnnl::memory::desc plain_f32(const Shape& shape) {
  using tag = dnnl::memory::format_tag;
  tag t = tag::a;
  switch (shape.size()) {
    case 1: t = tag::a; break;
    case 2: t = tag::ab; break;
    case 3: t = tag::abc; break;
    case 4: t = tag::abcd; break;
    case 5: t = tag::abcde; break;
    default: t = tag::undef;
  }
  return dnnl::memory::desc(to_dims(shape), dnnl::memory::data_type::f32, t);
}

bool is_plain(const dnnl::memory::desc& md, const Shape& shape) { return md == plain_f32(shape); }

dnnl::primitive_attr default_attr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

}  // namespace telar::backend::cpu
