// codegen/cuda/kernels/elementwise.cc — CUDA for the elementwise ops (unary, binary,
// variadic, Clip, float32 Identity/Cast), the elements of fused epilogue steps, and the
// shared helpers of kernels.h (flat launch, broadcast offsets, epilogues).
//
// An index-aligned elementwise node (alone, or the anchor of an all-elementwise group such as
// DenseNet's Mul+Add+Relu) is one kernel, one thread per output element: the anchor's element
// from its inputs read at their broadcast offsets, then the group's steps, one store. The
// element formulas are the C backend's (codegen/formulas.h, in the CUDA dialect): clamps and
// Max/Min are NaN-propagating compare-selects, Sigmoid is 1 / (1 + exp(-x)) (exactly 0 or 1
// at the ends, as the C helper); exp, log, tanh, erf and pow are CUDA's float functions
// (within 2 ulp of the C backend's helpers, not bit-equal). Gelu's formula is here.
#include <algorithm>

#include "codegen/cuda/kernels/kernels.h"
#include "codegen/formulas.h"
#include "ir/op.h"
#include "ir/ops/elementwise.h"

namespace onnxc {

void CuEmit::flat(int64_t total) {
  ONNXC_ASSERT(total > 0, node.where() + ": a CUDA kernel over no elements");
  const int64_t threads = 256, blocks = (total + threads - 1) / threads;
  if (blocks > 2147483647) node.unsupported("the CUDA backend launches at most 2^31 - 1 blocks of 256 threads");
  grid = std::to_string(blocks);
  block = std::to_string(threads);
  (*this)("const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;");
  (*this)("if (i >= {}) return;", total);
}

std::string cu_coord(const std::string& flat, int64_t stride, int64_t dim) {
  return stride == 1 ? fmt::format("{} % {}", flat, dim) : fmt::format("({} / {}) % {}", flat, stride, dim);
}

std::string cu_bcast_offset(const Shape& in, const Shape& out, const std::string& flat) {
  if (in == out) return flat;
  if (numel(in) == 1) return "0";
  ONNXC_ASSERT(in.size() <= out.size(), "broadcast of " + shape_str(in) + " to " + shape_str(out));
  const size_t lead = out.size() - in.size();
  std::vector<int64_t> ostride(out.size(), 1), istride(in.size(), 1);
  for (size_t d = out.size(); d-- > 1;) ostride[d - 1] = ostride[d] * out[d];
  for (size_t d = in.size(); d-- > 1;) istride[d - 1] = istride[d] * in[d];
  std::string r;
  for (size_t j = 0; j < in.size(); ++j) {
    if (in[j] == 1) continue;
    const size_t d = j + lead;
    ONNXC_ASSERT(in[j] == out[d], "broadcast of " + shape_str(in) + " to " + shape_str(out));
    std::string c = ostride[d] == 1 ? flat : fmt::format("{} / {}", flat, ostride[d]);
    if (d > 0) c = fmt::format("({}) % {}", c, out[d]);
    r += fmt::format("{}({}){}", r.empty() ? "" : " + ", c, istride[j] == 1 ? "" : " * " + std::to_string(istride[j]));
  }
  return r.empty() ? "0" : r;
}

namespace {

std::string unary_element(const Node& n, const std::vector<std::string>& a, const std::string& dst) {
  const std::string& k = n.op_type;
  if (k == "Gelu") {  // the C backend's formulas (codegen/c/kernels/activation.cc)
    std::string r = activation_attrs(n).tanh
                        ? "0.5f * x * (1.0f + tanhf(0.7978845608028654f * (x + 0.044715f * x * x * x)))"
                        : "0.5f * x * (1.0f + erff(x * 0.7071067811865476f))";
    return fmt::format("float {0}; {{ const float x = {1}; {0} = {2}; }}", dst, a.at(0), r);
  }
  const std::string r = unary_formula(n, MathDialect::Cuda);  // codegen/formulas.h
  return fmt::format("float {0}; {{ const float x = {1}; {0} = {2}; }}", dst, a.at(0), r);
}

std::string binary_element(const Node& n, const std::vector<std::string>& a, const std::string& dst) {
  return fmt::format("const float {} = {};", dst, binary_formula(n.op_type, a.at(0), a.at(1)));
}

std::string sum_element(const Node& n, const std::vector<std::string>& a, const std::string& dst) {
  return fmt::format("const float {} = {};", dst, sum_formula(n, a));
}

std::string max_min_element(const Node& n, const std::vector<std::string>& a, const std::string& dst) {
  return max_min_statements(n, a, dst);
}

// Constant bounds are literals, a runtime bound reads its input (a one-element tensor).
std::string clip_element(const Node& n, const std::vector<std::string>& a, const std::string& dst) {
  std::string bound[3];
  if (n.opset < 11) {
    bound[1] = c_float(clip_attrs(n).lo);
    bound[2] = c_float(clip_attrs(n).hi);
  } else {
    for (size_t i = 1; i < 3; ++i) {
      const Value* v = n.in(i);
      if (!v) continue;
      bound[i] = v->constant ? c_float(v->constant->get(0)) : "(" + a.at(i) + ")";
    }
  }
  return fmt::format("const float {} = {};", dst, clip_formula(a.at(0), bound[1], bound[2]));
}

std::string copy_element(const Node&, const std::vector<std::string>& a, const std::string& dst) {
  return fmt::format("const float {} = {};", dst, a.at(0));
}

std::string element(const Node& m, const std::vector<std::string>& args, const std::string& dst) {
  const CuKernel* k = find_cuda_kernel(m.op_type);
  if (!k || !k->expr) m.unsupported(m.op_type + " as a fused elementwise step is not supported by the CUDA backend");
  return k->expr(m, args, dst);
}

// The arguments of fused step m: the locals of the group's internal values, reads of extra
// inputs at the output element `flat`, "" for absent or static inputs.
std::vector<std::string> step_args(const CuEmit& e, const Node& m, const std::map<const Value*, std::string>& locals, const std::string& flat) {
  const Node& n = e.node;
  std::vector<std::string> args;
  for (size_t i = 0; i < m.inputs.size(); ++i) {
    const Value* v = m.inputs[i];
    if (!v || m.op->static_input(i)) { args.emplace_back(); continue; }
    if (auto it = locals.find(v); it != locals.end()) { args.push_back(it->second); continue; }
    auto it = std::find(n.extra_inputs.begin(), n.extra_inputs.end(), v);
    ONNXC_ASSERT(it != n.extra_inputs.end(), m.where() + ": input '" + v->name + "' is not an extra input of its group");
    const size_t k = static_cast<size_t>(it - n.extra_inputs.begin());
    args.push_back(fmt::format("{}[{}]", e.extra(k), cu_bcast_offset(v->shape, n.out(0)->shape, flat)));
  }
  return args;
}

// An index-aligned elementwise node or group: the anchor's element, then the epilogue.
void emit_elementwise(CuEmit& e) {
  const Node& n = e.node;
  const Shape& os = e.out_shape(0);
  e.flat(numel(os));
  std::vector<std::string> args;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const Value* v = n.inputs[i];
    if (!v || n.op->static_input(i)) args.emplace_back();
    else args.push_back(fmt::format("{}[{}]", e.in(i), cu_bcast_offset(v->shape, os, "i")));
  }
  e("{}", element(n, args, "a"));
  e("{}", cu_epilogue(e, "a", "i", e.out(0) + "[i]"));
}

}  // namespace

std::string cu_epilogue(CuEmit& e, const std::string& src, const std::string& flat, const std::string& dst) {
  const Node& n = e.node;
  e.epilogue_done = true;
  if (n.epilogue.empty()) return fmt::format("{} = {};", dst, src);
  ONNXC_ASSERT(n.anchor_out && n.anchor_out->shape == n.out(0)->shape, n.where() + ": epilogue changes the anchor's shape");
  std::map<const Value*, std::string> locals{{n.anchor_out, "t0"}};
  std::string s = fmt::format("{{ const float t0 = {};", src);
  size_t k = 0;
  for (auto& step : n.epilogue) {
    ++k;
    s += " " + element(*step, step_args(e, *step, locals, flat), "t" + std::to_string(k));
    locals[step->out(0)] = "t" + std::to_string(k);
  }
  return s + fmt::format(" {} = t{}; }}", dst, k);
}

bool cu_epilogue_ok(const Node& n) {
  for (auto& step : n.epilogue) {
    const CuKernel* k = find_cuda_kernel(step->op_type);
    if (!k || !k->expr) return false;
    for (const Value* v : step->outputs)
      if (v && v->dtype != DType::F32) return false;
  }
  for (const Value* v : n.extra_inputs)
    if (v->dtype != DType::F32) return false;
  return true;
}

void register_cuda_elementwise(CuKernelTable& t) {
  for (const char* k : unary_formula_ops()) t[k] = {emit_elementwise, nullptr, unary_element};
  t["Gelu"] = {emit_elementwise, nullptr, unary_element};
  for (const char* k : {"Add", "Sub", "Mul", "Div", "Pow", "PRelu"}) t[k] = {emit_elementwise, nullptr, binary_element};
  t["Sum"] = {emit_elementwise, nullptr, sum_element};
  t["Mean"] = {emit_elementwise, nullptr, sum_element};
  t["Max"] = {emit_elementwise, nullptr, max_min_element};
  t["Min"] = {emit_elementwise, nullptr, max_min_element};
  t["Clip"] = {emit_elementwise, nullptr, clip_element};
  t["Cast"] = {emit_elementwise, nullptr, copy_element};  // float32 to float32 only (supports())
  t["Identity"] = {emit_elementwise, nullptr, copy_element};
}

}  // namespace onnxc
