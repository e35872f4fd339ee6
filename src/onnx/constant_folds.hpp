#pragma once
// The ONNX ops the importer evaluates at import time on constants (constant.hpp): the shape
// arithmetic PyTorch's exporter writes (x.view(b, g, c // g, h, w), expand(B, -1, -1)) and the
// masks and index tables models build from their sizes (Swin's shifted-window mask: Range,
// ScatterND, Mod, Not, Where; its relative-position bias: a Gather of a table by an index).
// Each follows the ONNX operator's definition (numpy broadcasting, negative indices and steps)
// and carries the batch marks of the elements it moves; `who` ("node 'n' (Mod)") starts every
// error, which is a telar::Error.
#include <string>

#include "onnx/constant.hpp"

namespace telar::onnx {

// More values than this in one folded constant is refused (a damaged or hostile shape).
inline constexpr std::int64_t kMaxFoldedValues = std::int64_t{1} << 24;

enum class Arithmetic { Add, Sub, Mul, Div, Mod, FMod, Pow };
enum class CastTo { Float, Integer, Bool };

// ONNX Cast: to float, to an integer (truncating), or to bool (non-zero is 1; the batch size
// and its multiples stop being marked as such).
Constant cast(const Constant& c, CastTo to);

// Element-wise a op b, broadcast. Integers stay integers (Div truncates, Mod takes the divisor's
// sign, FMod the dividend's); Pow's result has a's type. A multiple of the batch size times a
// whole number, or divided by one that divides it, stays a multiple of it (bsz * num_heads,
// B_ // num_windows); anything else computed from it is marked as such.
Constant arithmetic(const std::string& who, Arithmetic op, const Constant& a, const Constant& b);
// Element-wise a == b (1 or 0), broadcast. The batch size compared with a constant below 1 is
// unequal whatever the batch (the -1 test of x.expand(B, -1)).
Constant equal(const std::string& who, const Constant& a, const Constant& b);
// Element-wise cond ? x : y, broadcast.
Constant where(const std::string& who, const Constant& cond, const Constant& x, const Constant& y);
// Element-wise logical not of an integer (bool) constant.
Constant logical_not(const std::string& who, const Constant& c);
// `c` broadcast to `shape` (ONNX Expand: a 1 in either keeps the other's size).
Constant expand(const std::string& who, const Constant& c, const std::vector<std::int64_t>& shape);
// The parts joined along `axis` (negative counts from the end).
Constant concat(const std::string& who, const std::vector<const Constant*>& parts,
                std::int64_t axis);
// ONNX Slice: for each listed axis, from start towards end by step (negative steps walk back).
Constant slice(const std::string& who, const Constant& c, const std::vector<std::int64_t>& starts,
               const std::vector<std::int64_t>& ends, const std::vector<std::int64_t>& axes,
               const std::vector<std::int64_t>& steps);
// ONNX Gather: the entries of `data` along `axis` at `indices` (of any rank; negative from the
// end).
Constant gather(const std::string& who, const Constant& data, const Constant& indices,
                std::int64_t axis);
// `c` with its axes permuted (`perm` empty: reversed).
Constant transpose(const std::string& who, const Constant& c, std::vector<std::int64_t> perm);
// start, start + delta, ... before limit (scalars of one type).
Constant range(const std::string& who, const Constant& start, const Constant& limit,
               const Constant& delta);
// ONNX ScatterND without reduction: `data` with the slices `indices` names replaced by
// `updates`.
Constant scatter_nd(const std::string& who, const Constant& data, const Constant& indices,
                    const Constant& updates);

}  // namespace telar::onnx
