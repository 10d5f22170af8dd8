// codegen/c/kernels/loss.cc — NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss in C
// (ir/ops/loss.cc; the view [N, C, D] and the formulas are ir/ops/loss.h). One loop over the
// N * D positions; per position, SCE first takes the log-softmax of its C scores (stride D):
// the maximum by compare-selects (NaN skipped, as Softmax), the sum of onnxc_expf(x - max)
// (exp for float64), log_sum = onnxc_logf(sum), written out as (x - max) - log_sum when
// log_prob is an output. Then the label: ignore_index gives 0, a label outside [0, C) gives
// NaN without reading the scores (the node function has no error return), else -v * w.
// reduction none writes each loss and runs the positions in parallel when large; sum adds up
// the losses in double, mean the weights too, in order (serial, so the result does not
// depend on the thread count). Known gaps: with D > 1 the class loop walks the scores with
// stride D; a large sum or mean is one thread's work.
#include "codegen/c/kernels/kernels.h"
#include "codegen/c/loops.h"
#include "ir/ops/loss.h"

namespace onnxc {
namespace {

using R = LossGeom::Reduction;

void emit_loss(CEmit& e) {
  const LossGeom& g = loss_geom(e.node);
  const DType dt = e.in_dtype(0);
  const bool f32 = dt == DType::F32;
  const char* ct = e.in_ctype(0);
  const int64_t C = g.C, D = g.D, P = g.N * g.D;
  const bool none = g.reduction == R::None;
  e("/* {} over [N, C, D] = [{}, {}, {}], reduction {}{}{}{} */", e.node.op_type, g.N, C, D,
    none ? "none" : g.reduction == R::Sum ? "sum" : "mean", g.has_ignore ? fmt::format(", ignore_index {}", g.ignore_index) : "",
    g.has_weight ? ", weighted" : "", g.log_prob ? ", log_prob" : "");
  const bool mean = g.reduction == R::Mean;  // only mean needs the weights' sum
  if (!none) e("double acc = 0.0{};", mean ? ", wsum = 0.0" : "");
  if (P > 0) {
    const double work = static_cast<double>(P) * (g.softmax ? static_cast<double>(C) * 12.0 : 2.0);
    if (none && P > 1 && e.parallel(work)) e.open_nest({.loops = {{"q", P}}});
    else open_loop(e, "q", P);
    if (C > 0 || g.has_ignore) e("const int64_t t = (int64_t){}[q];", e.in(1));  // unread without classes or ignore_index
    // x (and lp) point at class 0 of this position; class c is at c * D.
    const std::string base = D == 1 ? fmt::format("q * {}", C) : fmt::format("q / {0} * {1} + q % {0}", D, C * D);
    auto cls = [&](const std::string& c) { return D == 1 ? c : fmt::format("{} * {}", c, D); };
    if (C > 0) e("const {}* restrict x = {} + {};", ct, e.in(0), base);
    if (g.softmax && C > 0) {
      if (D == 1) {
        emit_max_reduce(e, "m", "(-INFINITY)", "x", C, dt);
      } else {
        e("{} m = -INFINITY;", ct);
        e("for (int64_t c = 0; c < {0}; ++c) m = x[{1}] > m ? x[{1}] : m;", C, cls("c"));
      }
      e("{} s = 0;", ct);
      if (D == 1 && C >= 4) e("ONNXC_PRAGMA(omp simd reduction(+:s))");
      e("for (int64_t c = 0; c < {}; ++c) s += {}(x[{}] - m);", C, f32 ? "onnxc_expf" : "exp", cls("c"));
      e("const {} ls = {}(s);", ct, f32 ? "onnxc_logf" : "log");
      if (g.log_prob) {
        e("{}* restrict lp = {} + {};", ct, e.out(1), base);
        if (D == 1) simd(e, C);
        e("for (int64_t c = 0; c < {0}; ++c) lp[{1}] = (x[{1}] - m) - ls;", C, cls("c"));
      }
    }
    e("{} l;", ct);
    if (mean) e("double w;");
    const char* w0 = mean ? " w = 0.0;" : "";
    const char* wnan = mean ? " w = NAN;" : "";
    std::string els;  // "else " after the ignore_index test
    if (g.has_ignore) {
      e("if (t == {}) {{ l = 0;{} }}", c_int(g.ignore_index), w0);
      els = "else ";
    }
    if (C > 0) {
      e("{}if (t < 0 || t >= {}) {{ l = NAN;{} }} /* a label outside [0, C): NaN, nothing read */", els, C, wnan);
      e("else {{");
      e("const {} v = {};", ct, g.softmax ? fmt::format("(x[{}] - m) - ls", cls("t")) : fmt::format("x[{}]", cls("t")));
      if (g.has_weight) {
        e("const {} wt = {}[t];", ct, e.in(2));
        e("l = -v * wt;");
        if (mean) e("w = (double)wt;");
      } else {
        e("l = -v;");
        if (mean) e("w = 1.0;");
      }
      e("}}");
    } else {
      e("{}{{ l = NAN;{} }} /* no class: every label is outside [0, C) */", els, wnan);
    }
    if (none) {
      e("{}[q] = l;", e.out(0));
    } else {
      e("acc += (double)l;");
      if (mean) e("wsum += w;");
    }
    e("}}");
  }
  if (g.reduction == R::Sum) e("{}[0] = ({})acc;", e.out(0), ct);
  if (mean) e("{}[0] = ({})(acc / wsum); /* 0 / 0 = NaN when every position is ignored */", e.out(0), ct);
}

}  // namespace

void register_loss(CKernelTable& t) {
  t["NegativeLogLikelihoodLoss"] = {emit_loss, nullptr, nullptr, nullptr};
  t["SoftmaxCrossEntropyLoss"] = {emit_loss, nullptr, nullptr, nullptr};
}

}  // namespace onnxc
