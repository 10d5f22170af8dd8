// codegen/cuda/kernels/norm.cc — BatchNormalization, LRN, Softmax and LogSoftmax in CUDA,
// plain NCHW.
//  BatchNormalization (when the simplify pass could not fold it): one thread per element,
//    y = x * a + b with a = scale / sqrt(var + eps), b = B - mean * a (as the C kernel).
//  LRN: one thread per element sums the squares of its channel window [c - before, c + after]
//    (clipped) at its position, y = x / (bias + alpha / size * sum)^beta.
//  Softmax / LogSoftmax: the [outer, L, inner] problem of softmax_geom; one thread per
//    (outer, inner) row: its max, the sum of exp(x - max), then the outputs.
#include "codegen/cuda/kernels/kernels.h"
#include "ir/ops/norm.h"
#include "ir/ops/softmax.h"

namespace onnxc {
namespace {

void emit_batchnorm(CuEmit& e) {
  const BatchNormAttrs& a = batchnorm_attrs(e.node);
  const std::string sc = e.in(1), B = e.in(2), mean = e.in(3), var = e.in(4), eps = c_float(a.eps);
  e.flat(numel(e.out_shape(0)));
  if (a.spatial) {
    e("const int64_t c = {};", cu_coord("i", a.S, a.C));
    e("const float a = {}[c] / sqrtf({}[c] + {});", sc, var, eps);
    e("const float b = {}[c] - {}[c] * a;", B, mean);
    e("{}", cu_epilogue(e, fmt::format("fmaf({}[i], a, b)", e.in(0)), "i", e.out(0) + "[i]"));
  } else {
    e("const int64_t cs = i % {};", a.C * a.S);
    e("const float a = {}[cs] / sqrtf({}[cs] + {});", sc, var, eps);
    e("{}", cu_epilogue(e, fmt::format("fmaf({}[i] - {}[cs], a, {}[cs])", e.in(0), mean, B), "i", e.out(0) + "[i]"));
  }
}

void emit_lrn(CuEmit& e) {
  const LrnAttrs& a = lrn_attrs(e.node);
  e.flat(numel(e.out_shape(0)));
  e("const int64_t img = i / {};", a.C * a.S);
  e("const int64_t c = {};", cu_coord("i", a.S, a.C));
  e("const int64_t s = i % {};", a.S);
  e("const int64_t q0 = c < {0} ? 0 : c - {0};", a.before());
  e("const int64_t q1 = c + {0} < {1} ? c + {0} : {1};", a.after() + 1, a.C);
  e("const float* __restrict__ xn = {} + img * {} + s;", e.in(0), a.C * a.S);
  e("float sum = 0.0f;");
  e("for (int64_t q = q0; q < q1; ++q) sum = fmaf(xn[q * {0}], xn[q * {0}], sum);", a.S);
  e("{}", cu_epilogue(e, fmt::format("{}[i] / powf(fmaf({}, sum, {}), {})", e.in(0), c_float(a.alpha / static_cast<double>(a.size)),
                                     c_float(a.bias), c_float(a.beta)),
                      "i", e.out(0) + "[i]"));
}

void emit_softmax(CuEmit& e) {
  const SoftmaxGeom& g = softmax_geom(e.node);
  const bool log = e.node.op_type == "LogSoftmax";
  e.flat(g.outer * g.inner);
  e("const int64_t base = (i / {}) * {} + i % {};", g.inner, g.L * g.inner, g.inner);
  e("const float* __restrict__ x = {} + base;", e.in(0));
  e("float* __restrict__ y = {} + base;", e.out(0));
  e("float m = -INFINITY;");
  e("for (int64_t l = 0; l < {}; ++l) {{", g.L);
  e("const float v = x[l * {}];", g.inner);
  e("m = v > m || v != v ? v : m;");
  e("}}");
  e("float s = 0.0f;");
  e("for (int64_t l = 0; l < {0}; ++l) s += expf(x[l * {1}] - m);", g.L, g.inner);
  if (log) {
    e("const float ls = logf(s);");
    e("for (int64_t l = 0; l < {0}; ++l) y[l * {1}] = (x[l * {1}] - m) - ls;", g.L, g.inner);
  } else {
    e("const float r = 1.0f / s;");
    e("for (int64_t l = 0; l < {0}; ++l) y[l * {1}] = expf(x[l * {1}] - m) * r;", g.L, g.inner);
  }
}

}  // namespace

void register_cuda_norm(CuKernelTable& t) {
  t["BatchNormalization"] = {emit_batchnorm, [](const Node& n) { return n.outputs.size() == 1 || !n.out(1); }, nullptr};
  t["LRN"] = {emit_lrn, nullptr, nullptr};
  t["Softmax"] = {emit_softmax, nullptr, nullptr};
  t["LogSoftmax"] = {emit_softmax, nullptr, nullptr};
}

}  // namespace onnxc
