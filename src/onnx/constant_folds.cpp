#include "onnx/constant_folds.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.hpp"

namespace telar::onnx {

namespace {

using Batch = Constant::Batch;

// The number of values of `dims`, refused past kMaxFoldedValues; so are dimensions whose
// product (those of 0 counted as 1) passes it, whose strides would overflow.
std::int64_t count_of(const std::string& who, const std::vector<std::int64_t>& dims) {
  std::int64_t n = 1, bound = 1;
  for (auto d : dims) {
    require(d >= 0, "{}: a negative dimension in {}; the file is damaged", who, shape_str(dims));
    if (__builtin_mul_overflow(bound, std::max<std::int64_t>(d, 1), &bound) ||
        bound > kMaxFoldedValues)
      fail(
          "{}: folding it makes a constant of shape {}, more than {} values; the file is damaged "
          "or computes something telar does not fold",
          who, shape_str(dims), kMaxFoldedValues);
    n *= d;
  }
  return n;
}

// Checks the operands' shapes as count_of does the results' (an initializer of shape
// [0, 2^40, 2^40] holds nothing but would overflow strides).
void check_operands(const std::string& who, std::initializer_list<const Constant*> operands) {
  for (const Constant* c : operands) count_of(who, c->dims);
}

// Every element of `c` computed from the batch where `by` (indices) depends on it.
void mark_all_from_batch_if(const Constant& by, Constant& c) {
  if (by.depends_on_batch())
    c.batch.assign(c.integer ? c.i.size() : c.f.size(), Constant::Batch::From);
}

std::vector<std::int64_t> strides_of(const std::vector<std::int64_t>& dims) {
  std::vector<std::int64_t> s(dims.size(), 1);
  for (std::size_t d = dims.size(); d-- > 1;) s[d - 1] = s[d] * dims[d];
  return s;
}

// The flat positions in a tensor of the elements of a result of `dims`, whose element
// (i_0, ..., i_n) lies at base + sum of i_d * step[d] there (broadcasting: steps of 0;
// transposing: permuted strides; slicing: strides times the slice's steps).
std::vector<std::size_t> positions(const std::vector<std::int64_t>& dims,
                                   const std::vector<std::int64_t>& step, std::int64_t base = 0) {
  const auto out_strides = strides_of(dims);
  const std::int64_t count = shape_numel(dims);
  std::vector<std::size_t> from(static_cast<std::size_t>(count));
  for (std::int64_t k = 0; k < count; ++k) {
    std::int64_t rest = k, at = base;
    for (std::size_t d = 0; d < dims.size(); ++d) {
      at += rest / out_strides[d] * step[d];
      rest %= out_strides[d];
    }
    from[static_cast<std::size_t>(k)] = static_cast<std::size_t>(at);
  }
  return from;
}

// An axis of a rank-`rank` tensor, negative counting from the end.
std::int64_t axis_of(const std::string& who, std::int64_t axis, std::size_t rank) {
  const auto r = static_cast<std::int64_t>(rank);
  require(axis >= -r && axis < r, "{}: axis {} is out of range for rank {}", who, axis, r);
  return axis < 0 ? axis + r : axis;
}

// A constant of `dims` made of c's values at the flat positions `from` (marks along).
Constant take(const Constant& c, std::vector<std::int64_t> dims,
              const std::vector<std::size_t>& from) {
  Constant out;
  out.integer = c.integer;
  out.dims = std::move(dims);
  const bool marked = c.depends_on_batch();
  c.integer ? out.i.reserve(from.size()) : out.f.reserve(from.size());
  if (marked) out.batch.reserve(from.size());
  for (std::size_t k : from) {
    if (c.integer)
      out.i.push_back(c.i[k]);
    else
      out.f.push_back(c.f[k]);
    if (marked) out.batch.push_back(c.batch[k]);
  }
  return out;
}

// numpy broadcasting of the operands' shapes: the result's dims, and for each operand the flat
// position of its value at each of the result's elements.
struct Broadcast {
  std::vector<std::int64_t> dims;
  std::vector<std::vector<std::size_t>> from;
};

Broadcast broadcast(const std::string& who,
                    const std::vector<const std::vector<std::int64_t>*>& shapes) {
  for (const auto* s : shapes) count_of(who, *s);
  std::size_t rank = 0;
  for (const auto* s : shapes) rank = std::max(rank, s->size());
  Broadcast b;
  b.dims.assign(rank, 1);
  for (const auto* s : shapes)
    for (std::size_t d = 0; d < s->size(); ++d) {
      auto& out = b.dims[rank - s->size() + d];
      const std::int64_t v = (*s)[d];
      if (out == 1)
        out = v;
      else if (v != 1 && v != out)
        fail("{}: shapes {} do not broadcast together", who, [&] {
          std::string all;
          for (const auto* t : shapes) all += (all.empty() ? "" : " and ") + shape_str(*t);
          return all;
        }());
    }
  count_of(who, b.dims);
  for (const auto* s : shapes) {
    // The operand's stride along each of the result's axes (0 where it broadcasts).
    std::vector<std::int64_t> stride(rank, 0);
    const auto own = strides_of(*s);
    for (std::size_t d = 0; d < s->size(); ++d)
      if ((*s)[d] != 1) stride[rank - s->size() + d] = own[d];
    b.from.push_back(positions(b.dims, stride));
  }
  return b;
}

bool multiple_of_batch(Batch m) {
  return m == Batch::Is || m == Batch::Times;
}

// The mark of `a op b` from the operands' marks and values (integers).
Batch arithmetic_mark(Arithmetic op, Batch ma, Batch mb, std::int64_t a, std::int64_t b,
                      bool integer) {
  if (ma == Batch::No && mb == Batch::No) return Batch::No;
  if (!integer) return Batch::From;
  if (op == Arithmetic::Mul && ((multiple_of_batch(ma) && mb == Batch::No && b >= 1) ||
                                (ma == Batch::No && multiple_of_batch(mb) && a >= 1)))
    return Batch::Times;
  if (op == Arithmetic::Div && multiple_of_batch(ma) && mb == Batch::No && b >= 1 && a % b == 0)
    return Batch::Times;
  return Batch::From;
}

std::int64_t integer_result(const std::string& who, Arithmetic op, std::int64_t u, double v_real,
                            std::int64_t v) {
  constexpr auto kMin = std::numeric_limits<std::int64_t>::min();
  std::int64_t out = 0;
  bool overflow = false;
  switch (op) {
    case Arithmetic::Add:
      overflow = __builtin_add_overflow(u, v, &out);
      break;
    case Arithmetic::Sub:
      overflow = __builtin_sub_overflow(u, v, &out);
      break;
    case Arithmetic::Mul:
      overflow = __builtin_mul_overflow(u, v, &out);
      break;
    case Arithmetic::Div:
    case Arithmetic::Mod:
    case Arithmetic::FMod:
      require(v != 0, "{}: an integer division by zero", who);
      if (u == kMin && v == -1) {
        overflow = op == Arithmetic::Div;
        break;  // the remainder is 0
      }
      out = op == Arithmetic::Div ? u / v : u % v;
      if (op == Arithmetic::Mod && out != 0 && ((out < 0) != (v < 0))) out += v;
      break;
    case Arithmetic::Pow: {
      const double p = std::pow(static_cast<double>(u), v_real);
      require(std::isfinite(p) && std::fabs(p) < 9.2e18,
              "{}: {} to the power {} is no 64-bit integer; the file is damaged", who, u, v_real);
      out = static_cast<std::int64_t>(p);
      break;
    }
  }
  if (overflow)
    fail("{}: folding {} and {} overflows 64 bits; the file is damaged", who, u, v_real);
  return out;
}

float float_result(Arithmetic op, float u, float v) {
  switch (op) {
    case Arithmetic::Add:
      return u + v;
    case Arithmetic::Sub:
      return u - v;
    case Arithmetic::Mul:
      return u * v;
    case Arithmetic::Div:
      return u / v;
    case Arithmetic::Mod:
      return u - v * std::floor(u / v);
    case Arithmetic::FMod:
      return std::fmod(u, v);
    case Arithmetic::Pow:
      return std::pow(u, v);
  }
  return 0.0f;
}

double number(const Constant& c, std::size_t k) {
  return c.integer ? static_cast<double>(c.i[k]) : static_cast<double>(c.f[k]);
}

void require_integer(const std::string& who, const Constant& c, const char* what) {
  require(c.integer, "{}: {} must be integers", who, what);
}

}  // namespace

Constant cast(const Constant& c, CastTo to) {
  Constant out = c;
  if (to == CastTo::Float) {
    if (c.integer) out.f.assign(c.i.begin(), c.i.end());
    out.integer = false;
    out.i.clear();
    return out;
  }
  out.integer = true;
  out.f.clear();
  if (to == CastTo::Integer) {
    out.i = c.ints();
    return out;
  }
  out.i.clear();
  for (std::size_t k = 0; k < (c.integer ? c.i.size() : c.f.size()); ++k)
    out.i.push_back(c.integer ? c.i[k] != 0 : c.f[k] != 0.0f);
  for (auto& m : out.batch)
    if (m != Batch::No) m = Batch::From;
  return out;
}

Constant arithmetic(const std::string& who, Arithmetic op, const Constant& a, const Constant& b) {
  if (op != Arithmetic::Pow && a.integer != b.integer)
    fail("{}: folding an integer and a float constant", who);
  const Broadcast bc = broadcast(who, {&a.dims, &b.dims});
  Constant c;
  c.integer = a.integer;
  c.dims = bc.dims;
  const bool marked = a.depends_on_batch() || b.depends_on_batch();
  for (std::size_t e = 0; e < bc.from[0].size(); ++e) {
    const std::size_t ia = bc.from[0][e], ib = bc.from[1][e];
    if (c.integer) {
      const std::int64_t v = b.integer ? b.i[ib] : 0;  // a float exponent: Pow's alone
      c.i.push_back(integer_result(who, op, a.i[ia], number(b, ib), v));
    } else {
      c.f.push_back(float_result(op, a.f[ia], static_cast<float>(number(b, ib))));
    }
    if (marked)
      c.batch.push_back(arithmetic_mark(op, a.batch_at(ia), b.batch_at(ib), a.integer ? a.i[ia] : 0,
                                        b.integer ? b.i[ib] : 0, a.integer && b.integer));
  }
  return c;
}

Constant equal(const std::string& who, const Constant& a, const Constant& b) {
  if (a.integer != b.integer) fail("{}: Equal of an integer and a float constant", who);
  const Broadcast bc = broadcast(who, {&a.dims, &b.dims});
  Constant c = int_constant({}, bc.dims);
  const bool marked = a.depends_on_batch() || b.depends_on_batch();
  for (std::size_t e = 0; e < bc.from[0].size(); ++e) {
    const std::size_t ia = bc.from[0][e], ib = bc.from[1][e];
    const auto ma = a.batch_at(ia), mb = b.batch_at(ib);
    const bool never = a.integer && ((ma == Batch::Is && mb == Batch::No && b.i[ib] < 1) ||
                                     (mb == Batch::Is && ma == Batch::No && a.i[ia] < 1));
    c.i.push_back(!never && number(a, ia) == number(b, ib));
    if (marked)
      c.batch.push_back(never || (ma == Batch::No && mb == Batch::No) ? Batch::No : Batch::From);
  }
  return c;
}

Constant where(const std::string& who, const Constant& cond, const Constant& x, const Constant& y) {
  if (x.integer != y.integer) fail("{}: Where of an integer and a float constant", who);
  const Broadcast bc = broadcast(who, {&cond.dims, &x.dims, &y.dims});
  Constant c;
  c.integer = x.integer;
  c.dims = bc.dims;
  const bool marked = cond.depends_on_batch() || x.depends_on_batch() || y.depends_on_batch();
  const auto conds = cond.ints();
  for (std::size_t e = 0; e < bc.from[0].size(); ++e) {
    const std::size_t ic = bc.from[0][e];
    const bool pick_x = conds[ic] != 0;
    const Constant& from = pick_x ? x : y;
    const std::size_t k = bc.from[pick_x ? 1 : 2][e];
    if (c.integer)
      c.i.push_back(from.i[k]);
    else
      c.f.push_back(from.f[k]);
    if (marked) c.batch.push_back(cond.batch_at(ic) != Batch::No ? Batch::From : from.batch_at(k));
  }
  return c;
}

Constant logical_not(const std::string& who, const Constant& c) {
  require_integer(who, c, "Not's operands");
  Constant out = c;
  for (auto& v : out.i) v = v == 0;
  for (auto& m : out.batch)
    if (m != Batch::No) m = Batch::From;
  return out;
}

Constant expand(const std::string& who, const Constant& c, const std::vector<std::int64_t>& shape) {
  const Broadcast bc = broadcast(who, {&c.dims, &shape});
  return take(c, bc.dims, bc.from[0]);
}

Constant concat(const std::string& who, const std::vector<const Constant*>& parts,
                std::int64_t axis) {
  require(!parts.empty(), "{}: Concat of nothing", who);
  for (const Constant* p : parts) count_of(who, p->dims);
  const Constant& first = *parts[0];
  require(!first.dims.empty(), "{}: Concat of scalars", who);
  const auto a = static_cast<std::size_t>(axis_of(who, axis, first.dims.size()));
  std::vector<std::int64_t> dims = first.dims;
  dims[a] = 0;
  bool marked = false;
  for (const Constant* p : parts) {
    bool fits = p->dims.size() == first.dims.size();
    for (std::size_t d = 0; fits && d < dims.size(); ++d)
      fits = d == a || p->dims[d] == first.dims[d];
    if (!fits || p->integer != first.integer)
      fail("{}: Concat along axis {} of constants of shapes {} and {}{}", who, axis,
           shape_str(first.dims), shape_str(p->dims),
           p->integer != first.integer ? " (integer and float)" : "");
    dims[a] += p->dims[a];
    marked = marked || p->depends_on_batch();
  }
  const auto total = static_cast<std::size_t>(count_of(who, dims));
  std::int64_t outer = 1, inner = 1;
  for (std::size_t d = 0; d < a; ++d) outer *= dims[d];
  for (std::size_t d = a + 1; d < dims.size(); ++d) inner *= dims[d];
  Constant c;
  c.integer = first.integer;
  c.dims = dims;
  c.integer ? c.i.reserve(total) : c.f.reserve(total);
  if (marked) c.batch.reserve(total);
  for (std::int64_t o = 0; o < outer; ++o)
    for (const Constant* p : parts) {
      const std::int64_t block = p->dims[a] * inner;
      for (std::int64_t k = o * block; k < (o + 1) * block; ++k) {
        const auto at = static_cast<std::size_t>(k);
        if (c.integer)
          c.i.push_back(p->i[at]);
        else
          c.f.push_back(p->f[at]);
        if (marked) c.batch.push_back(p->batch_at(at));
      }
    }
  return c;
}

Constant slice(const std::string& who, const Constant& c, const std::vector<std::int64_t>& starts,
               const std::vector<std::int64_t>& ends, const std::vector<std::int64_t>& axes,
               const std::vector<std::int64_t>& steps) {
  check_operands(who, {&c});
  const std::size_t rank = c.dims.size();
  require(
      starts.size() == ends.size() && starts.size() == axes.size() && starts.size() == steps.size(),
      "{}: starts, ends, axes and steps of different lengths", who);
  std::vector<std::int64_t> first(rank, 0), step(rank, 1), dims = c.dims;
  std::vector<bool> seen(rank, false);
  for (std::size_t k = 0; k < starts.size(); ++k) {
    const auto a = static_cast<std::size_t>(axis_of(who, axes[k], rank));
    require(!seen[a], "{}: axis {} is sliced twice", who, axes[k]);
    seen[a] = true;
    require(steps[k] != 0 && steps[k] != std::numeric_limits<std::int64_t>::min(),
            "{}: a step of {}", who, steps[k]);
    const std::int64_t size = c.dims[a], s = steps[k];
    std::int64_t b = starts[k] < 0 ? starts[k] + size : starts[k];
    std::int64_t e = ends[k] < 0 ? ends[k] + size : ends[k];
    if (size == 0) {  // nothing to take (and no last element to clamp to)
      b = 0;
      dims[a] = 0;
    } else if (s > 0) {
      b = std::clamp<std::int64_t>(b, 0, size);
      e = std::clamp<std::int64_t>(e, 0, size);
      dims[a] = e > b ? (e - b - 1) / s + 1 : 0;
    } else {
      b = std::clamp<std::int64_t>(b, 0, size - 1);
      e = std::clamp<std::int64_t>(e, -1, size - 1);
      dims[a] = b > e ? (b - e - 1) / -s + 1 : 0;
    }
    first[a] = b;
    step[a] = dims[a] > 1 ? s : 0;  // one element taken: any step (INT64_MAX) is no step
  }
  count_of(who, dims);
  const auto in_strides = strides_of(c.dims);
  std::int64_t base = 0;
  for (std::size_t d = 0; d < rank; ++d) {
    base += first[d] * in_strides[d];
    step[d] *= in_strides[d];
  }
  return take(c, dims, positions(dims, step, base));
}

Constant gather(const std::string& who, const Constant& data, const Constant& indices,
                std::int64_t axis) {
  require_integer(who, indices, "Gather's indices");
  check_operands(who, {&data, &indices});
  require(!data.dims.empty(), "{}: Gather from a scalar", who);
  const auto a = static_cast<std::size_t>(axis_of(who, axis, data.dims.size()));
  std::vector<std::int64_t> dims(data.dims.begin(),
                                 data.dims.begin() + static_cast<std::ptrdiff_t>(a));
  dims.insert(dims.end(), indices.dims.begin(), indices.dims.end());
  dims.insert(dims.end(), data.dims.begin() + static_cast<std::ptrdiff_t>(a) + 1, data.dims.end());
  count_of(who, dims);
  std::int64_t outer = 1, inner = 1;
  for (std::size_t d = 0; d < a; ++d) outer *= data.dims[d];
  for (std::size_t d = a + 1; d < data.dims.size(); ++d) inner *= data.dims[d];
  const std::int64_t size = data.dims[a];
  std::vector<std::size_t> from;
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t j : indices.i) {
      require(j >= -size && j < size, "{}: index {} is out of range for an axis of {}", who, j,
              size);
      if (j < 0) j += size;
      for (std::int64_t in = 0; in < inner; ++in)
        from.push_back(static_cast<std::size_t>((o * size + j) * inner + in));
    }
  Constant c = take(data, dims, from);
  mark_all_from_batch_if(indices, c);
  return c;
}

Constant transpose(const std::string& who, const Constant& c, std::vector<std::int64_t> perm) {
  check_operands(who, {&c});
  const std::size_t rank = c.dims.size();
  if (perm.empty())
    for (std::size_t d = rank; d-- > 0;) perm.push_back(static_cast<std::int64_t>(d));
  std::vector<bool> seen(rank, false);
  require(perm.size() == rank, "{}: perm of {} axes for a constant of rank {}", who, perm.size(),
          rank);
  std::vector<std::int64_t> dims;
  for (auto p : perm) {
    require(p >= 0 && p < static_cast<std::int64_t>(rank) && !seen[static_cast<std::size_t>(p)],
            "{}: perm is not a permutation of the {} axes", who, rank);
    seen[static_cast<std::size_t>(p)] = true;
    dims.push_back(c.dims[static_cast<std::size_t>(p)]);
  }
  const auto in_strides = strides_of(c.dims);
  std::vector<std::int64_t> step;
  for (auto p : perm) step.push_back(in_strides[static_cast<std::size_t>(p)]);
  return take(c, dims, positions(dims, step));
}

Constant range(const std::string& who, const Constant& start, const Constant& limit,
               const Constant& delta) {
  for (const Constant* c : {&start, &limit, &delta}) {
    require(c->numel() == 1, "{}: Range of scalars, not of shape {}", who, shape_str(c->dims));
    require(c->integer == start.integer, "{}: Range of an integer and a float", who);
  }
  Constant c;
  c.integer = start.integer;
  if (c.integer) {
    const std::int64_t s = start.i[0], l = limit.i[0], d = delta.i[0];
    require(d != 0, "{}: a Range with a delta of 0", who);
    // ceil((l - s) / d), exact in 128 bits; every value lies between s and l.
    const __int128 span = static_cast<__int128>(l) - s;
    const __int128 n = span == 0 || (span > 0) != (d > 0) ? 0 : (span - (d > 0 ? 1 : -1)) / d + 1;
    c.dims = {static_cast<std::int64_t>(std::min<__int128>(n, kMaxFoldedValues + 1))};
    count_of(who, c.dims);
    for (std::int64_t k = 0; k < c.dims[0]; ++k)
      c.i.push_back(static_cast<std::int64_t>(s + static_cast<__int128>(k) * d));
  } else {
    const float s = start.f[0], l = limit.f[0], d = delta.f[0];
    require(d != 0.0f && std::isfinite(s) && std::isfinite(l) && std::isfinite(d),
            "{}: a Range of non-finite bounds or a delta of 0", who);
    const double n = std::ceil((static_cast<double>(l) - s) / d);
    c.dims = {std::max<std::int64_t>(
        0, static_cast<std::int64_t>(std::min(n, static_cast<double>(kMaxFoldedValues + 1))))};
    count_of(who, c.dims);
    for (std::int64_t k = 0; k < c.dims[0]; ++k) c.f.push_back(s + static_cast<float>(k) * d);
  }
  return c;
}

Constant scatter_nd(const std::string& who, const Constant& data, const Constant& indices,
                    const Constant& updates) {
  require_integer(who, indices, "ScatterND's indices");
  check_operands(who, {&data, &indices, &updates});
  require(data.integer == updates.integer, "{}: ScatterND of an integer and a float constant", who);
  require(!indices.dims.empty() && indices.dims.back() >= 1 &&
              indices.dims.back() <= static_cast<std::int64_t>(data.dims.size()),
          "{}: indices of shape {} for data of rank {}", who, shape_str(indices.dims),
          data.dims.size());
  const auto k = static_cast<std::size_t>(indices.dims.back());
  std::vector<std::int64_t> expected(indices.dims.begin(), indices.dims.end() - 1);
  expected.insert(expected.end(), data.dims.begin() + static_cast<std::ptrdiff_t>(k),
                  data.dims.end());
  require(updates.dims == expected, "{}: updates of shape {} where the indices need {}", who,
          shape_str(updates.dims), shape_str(expected));
  std::int64_t slice_size = 1;
  for (std::size_t d = k; d < data.dims.size(); ++d) slice_size *= data.dims[d];
  const auto strides = strides_of(data.dims);
  Constant c = data;
  const bool marked = data.depends_on_batch() || updates.depends_on_batch();
  if (marked && c.batch.empty()) c.batch.assign(c.integer ? c.i.size() : c.f.size(), Batch::No);
  const std::int64_t tuples = indices.numel() / static_cast<std::int64_t>(k);
  for (std::int64_t t = 0; t < tuples; ++t) {
    std::int64_t at = 0;
    for (std::size_t d = 0; d < k; ++d) {
      std::int64_t j = indices.i[static_cast<std::size_t>(t) * k + d];
      const std::int64_t size = data.dims[d];
      require(j >= -size && j < size, "{}: index {} is out of range for an axis of {}", who, j,
              size);
      if (j < 0) j += size;
      at += j * strides[d];
    }
    for (std::int64_t e = 0; e < slice_size; ++e) {
      const auto to = static_cast<std::size_t>(at + e),
                 from = static_cast<std::size_t>(t * slice_size + e);
      if (c.integer)
        c.i[to] = updates.i[from];
      else
        c.f[to] = updates.f[from];
      if (marked) c.batch[to] = updates.batch_at(from);
    }
  }
  mark_all_from_batch_if(indices, c);
  return c;
}

}  // namespace telar::onnx
