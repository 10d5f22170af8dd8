// codegen/c/kernels/stat_norm.cc — InstanceNormalization, GroupNormalization,
// MeanVarianceNormalization and LpNormalization in C (ir/ops/stat_norm.cc; the view and
// the formulas are ir/ops/stat_norm.h). One loop nest over X's view: the kept dims outside
// (collapsed into one parallel loop when the work is large), then per kept position two
// passes over the reduced dims for the statistics (sum, then the squared deviations from
// the mean; Lp: one pass) in double, the one scalar sqrt, and a last pass writing y. The
// innermost reduced loop carries `omp simd` (with a reduction clause in the statistics).
// Known gap: a reduced set that is not innermost in memory (MVN's default axes [0, 2, 3])
// walks X with strides; fine for the sizes these ops see.
#include "codegen/c/kernels/kernels.h"
#include "codegen/c/loops.h"
#include "ir/ops/stat_norm.h"

namespace onnxc {
namespace {

using K = StatNormGeom::Kind;

void emit_stat_norm(CEmit& e) {
  const StatNormGeom& g = stat_norm_geom(e.node);
  const Shape& dims = g.dims;
  int64_t total = numel(dims);
  if (total == 0) return;
  Shape st = strides_of(dims);
  int64_t cnt = 1, nk = 1;
  std::vector<NestLoop> kept;
  std::vector<size_t> red;
  auto var = [&](size_t d) { return fmt::format("{}{}", g.reduced[d] ? "r" : "k", d); };
  std::string off;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (g.reduced[d]) red.push_back(d), cnt *= dims[d];
    else kept.push_back({var(d), dims[d], 1}), nk *= dims[d];
    off += fmt::format("{}{} * {}", off.empty() ? "" : " + ", var(d), st[d]);
  }
  if (off.empty()) off = "0";
  std::string sc;  // index of scale and bias
  {
    int64_t s = 1;
    for (size_t d = g.scale_hi; d-- > g.scale_lo;) {
      sc = fmt::format("{} * {}{}", var(d), s, sc.empty() ? "" : " + " + sc);
      s *= dims[d];
    }
    if (sc.empty()) sc = "0";
  }
  const char* ct = e.in_ctype(0);
  e("/* {} over view dims [{}] of {} */", e.node.op_type, fmt::join(red, ","), shape_str(dims));
  open_tasks(e, kept, nk > 1 && e.parallel(static_cast<double>(total * 4)));
  // A pass over the reduced dims: body(v) with `const double v` the element.
  auto pass = [&](const std::string& reduction, const std::string& stmt) {
    e("{{");
    for (size_t j = 0; j < red.size(); ++j) {
      size_t d = red[j];
      if (j + 1 == red.size() && dims[d] >= 4) e("ONNXC_PRAGMA(omp simd{})", reduction);
      open_loop(e, var(d), dims[d]);
    }
    e("const double v = (double){}[{}];", e.in(0), off);
    e("{}", stmt);
    for (size_t j = 0; j < red.size(); ++j) e("}}");
    e("}}");
  };
  e("double s1 = 0.0;");
  if (g.kind == K::L1) pass(" reduction(+:s1)", "s1 += fabs(v);");
  else if (g.kind == K::L2) pass(" reduction(+:s1)", "s1 += v * v;");
  else pass(" reduction(+:s1)", "s1 += v;");
  std::string y;
  if (g.kind == K::MeanVar || g.kind == K::MVN) {
    e("const double mean = s1 / {};", c_double(static_cast<double>(cnt)));
    e("double s2 = 0.0;");
    pass(" reduction(+:s2)", "s2 += (v - mean) * (v - mean);");
    if (g.kind == K::MeanVar) {
      e("const double inv = 1.0 / sqrt(s2 / {} + {});", c_double(static_cast<double>(cnt)), c_double(g.eps));
      y = fmt::format("(v - mean) * inv * (double){}[{}] + (double){}[{}]", e.in(1), sc, e.in(2), sc);
    } else {
      e("const double den = sqrt(s2 / {}) + {};", c_double(static_cast<double>(cnt)), c_double(g.eps));
      y = "(v - mean) / den";
    }
  } else {
    e("const double den = {};", g.kind == K::L1 ? "s1" : "sqrt(s1)");
    y = "den == 0.0 ? 0.0 : v / den";
  }
  pass("", fmt::format("{}[{}] = ({})({});", e.out(0), off, ct, y));
  for (size_t j = 0; j < kept.size(); ++j) e("}}");
}

}  // namespace

void register_stat_norm(CKernelTable& t) {
  for (const char* k : {"InstanceNormalization", "GroupNormalization", "MeanVarianceNormalization", "LpNormalization"})
    t[k] = {emit_stat_norm, nullptr, nullptr, nullptr};
}

}  // namespace onnxc
