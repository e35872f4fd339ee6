#include "backend/cpu/dnnl_context.hpp"

#include "backend/cpu/cpu_backend.hpp"

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
  // Row-major by rank; a scalar, or a rank oneDNN runs nothing on, has none.
  static constexpr tag kPlain[] = {tag::undef, tag::a,      tag::ab,      tag::abc,     tag::abcd,
                                   tag::abcde, tag::abcdef, tag::abcdefg, tag::abcdefgh};
  const tag t = shape.size() < std::size(kPlain) ? kPlain[shape.size()] : tag::undef;
  return dnnl::memory::desc(to_dims(shape), dnnl::memory::data_type::f32, t);
}

bool is_plain(const dnnl::memory::desc& md, const Shape& shape) { return md == plain_f32(shape); }

bool is_int8(const dnnl::memory::desc& md) {
  return md.data_type() == dnnl::memory::data_type::s8 ||
         md.data_type() == dnnl::memory::data_type::u8;
}

dnnl::memory::data_type int8_type(bool is_unsigned) {
  return is_unsigned ? dnnl::memory::data_type::u8 : dnnl::memory::data_type::s8;
}

dnnl::memory::desc with_data_type(const dnnl::memory::desc& md, dnnl::memory::data_type type) {
  dnnl_memory_desc_t c = md.data;
  c.data_type = dnnl::memory::convert_to_c(type);
  return dnnl::memory::desc(c);
}

dnnl::primitive_attr default_attr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

std::string dispatched_isa() {
  using isa = dnnl::cpu_isa;
  switch (dnnl::get_effective_cpu_isa()) {
    case isa::sse41: return "sse41";
    case isa::avx: return "avx";
    case isa::avx2: return "avx2";
    case isa::avx2_vnni: return "avx2_vnni";
    case isa::avx512_mic: return "avx512_mic";
    case isa::avx512_mic_4ops: return "avx512_mic_4ops";
    case isa::avx512_core: return "avx512_core";
    case isa::avx512_core_vnni: return "avx512_core_vnni";
    case isa::avx512_core_bf16: return "avx512_core_bf16";
    case isa::avx512_core_amx: return "avx512_core_amx";
    default: return "all";
  }
}

bool has_int8() {
  using isa = dnnl::cpu_isa;
  const auto have = dnnl::get_effective_cpu_isa();
  return have == isa::avx2_vnni || have == isa::avx512_core_vnni || have == isa::avx512_core_bf16 ||
         have == isa::avx512_core_amx;
}

bool has_bf16() {
  const auto isa = dnnl::get_effective_cpu_isa();
  return isa == dnnl::cpu_isa::avx512_core_bf16 || isa == dnnl::cpu_isa::avx512_core_amx;
}

}  // namespace telar::backend::cpu
