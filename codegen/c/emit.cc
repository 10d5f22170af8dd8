// codegen/c/emit.cc — C literals and the per-node function body writer (see emit.h).
#include "codegen/c/emit.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <type_traits>

#include "ir/ops/elementwise.h"

namespace onnxc {

static std::string fp_literal(double v, int digits, const char* suffix) {
  if (std::isnan(v)) return "NAN";
  if (std::isinf(v)) return v > 0 ? "INFINITY" : "(-INFINITY)";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  s += suffix;
  return v < 0 ? "(" + s + ")" : s;
}

std::string c_float(double v) { return fp_literal(static_cast<float>(v), 9, "f"); }
std::string c_double(double v) { return fp_literal(v, 17, ""); }

std::string c_int(int64_t v) {
  if (v == std::numeric_limits<int64_t>::min()) return "(-9223372036854775807LL - 1)";
  bool big = v > std::numeric_limits<int32_t>::max() || v < std::numeric_limits<int32_t>::min();
  std::string s = std::to_string(v) + (big ? "LL" : "");
  return v < 0 ? "(" + s + ")" : s;
}

std::string c_literal(DType t, double v) {
  if (t == DType::F32) return c_float(v);
  if (t == DType::F64) return c_double(v);
  // An integer as the IR converts a float to it (saturating, NaN to 0: convert_value), so a
  // constant such as Pad's value 1e30 on uint32 is the type's maximum, as folding gives.
  std::string r;
  visit_dtype(t, [&](auto x) {
    using T = decltype(x);
    if constexpr (std::is_integral_v<T>) {
      const T c = convert_value<T>(v, t == DType::Bool);
      if constexpr (std::is_same_v<T, uint64_t>) r = std::to_string(c) + "ULL";
      else r = c_int(static_cast<int64_t>(c));
    }
  });
  ONNXC_ASSERT(!r.empty(), std::string("c_literal of ") + dtype_name(t));
  return r;
}

const std::string& CEmit::in(size_t i) const {
  ONNXC_ASSERT(has_in(i), node.where() + ": emit uses input " + std::to_string(i) + " which is absent or static");
  return ins_[i];
}

const std::string& CEmit::out(size_t i) const {
  ONNXC_ASSERT(i < outs_.size() && !outs_[i].empty(), node.where() + ": emit uses absent output " + std::to_string(i));
  return outs_[i];
}

Shape CEmit::view_of(const Value* v) const {
  const Value* o = node.out(0);
  if (!o || !o->layout.is_nchwc()) {
    ONNXC_ASSERT(v->layout.is_plain(), node.where() + ": input '" + v->name + "' is blocked but the output is plain");
    return v->shape;
  }
  Shape view;
  ONNXC_ASSERT(nchwc_broadcast_view(v->shape, v->layout, o->shape, o->layout.block, &view),
               node.where() + ": input '" + v->name + "' " + v->type_str() + " cannot be read in the output's layout");
  return view;
}

}  // namespace onnxc
