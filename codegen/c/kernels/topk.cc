// codegen/c/kernels/topk.cc — TopK in C (ir/ops/topk.cc): per (outer, inner) position an
// insertion into the output itself, which holds the best k so far sorted (an element
// equal to one already there goes after it, so ties keep the lower index first); the
// positions go parallel when the work is large. Known gap: O(len * k) per position in the
// worst case — fine for the small k of classifiers and beam search, slow for k near a long
// axis (a heap or a partial sort would be better there).
#include "codegen/c/kernels/kernels.h"
#include "codegen/c/loops.h"
#include "ir/ops/index_ops.h"

namespace onnxc {
namespace {

void emit_topk(CEmit& e) {
  const TopKGeom& g = topk_geom(e.node);
  int64_t n = g.outer * g.inner;
  if (n == 0 || g.k == 0) return;
  const char* ct = e.in_ctype(0);
  const char* cmp = g.largest ? ">" : "<";
  const int64_t in = g.inner;
  if (n > 1 && e.parallel(static_cast<double>(n * g.len * 4))) e.open_nest({.loops = {{"q", n}}});
  else open_loop(e, "q", n);
  e("const int64_t o = q / {}, i = q % {};", in, in);
  e("const {}* restrict x = {} + o * {} + i;", ct, e.in(0), g.len * in);
  e("{}* restrict bv = {} + o * {} + i;", ct, e.out(0), g.k * in);
  e("int64_t* restrict bi = {} + o * {} + i;", e.out(1), g.k * in);
  e("int64_t cnt = 0;");
  e("for (int64_t j = 0; j < {}; ++j) {{", g.len);
  e("const {} c = x[j * {}];", ct, in);
  e("if (cnt == {} && !(c {} bv[{}])) continue;", g.k, cmp, (g.k - 1) * in);
  e("int64_t p = cnt < {0} ? cnt++ : {1};", g.k, g.k - 1);
  e("for (; p > 0 && c {} bv[(p - 1) * {}]; --p) {{", cmp, in);
  e("bv[p * {0}] = bv[(p - 1) * {0}];", in);
  e("bi[p * {0}] = bi[(p - 1) * {0}];", in);
  e("}}");
  e("bv[p * {}] = c;", in);
  e("bi[p * {}] = j;", in);
  e("}}");
  e("}}");
}

}  // namespace

void register_topk(CKernelTable& t) { t["TopK"] = {emit_topk, nullptr, nullptr, nullptr}; }

}  // namespace onnxc
