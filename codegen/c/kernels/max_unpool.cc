// codegen/c/kernels/max_unpool.cc — MaxUnpool in C (ir/ops/max_unpool.cc; the index
// convention is ir/ops/max_unpool.h). Plain layout. Y is zeroed (memset), then one serial
// loop over X (the order of equal indices matters) reads each index, wraps and clamps it,
// and writes the value; when output_shape is larger than the unpooled shape, the index is
// split into (N, C) plane and spatial position and placed at the same position of Y.
#include "codegen/c/kernels/kernels.h"
#include "codegen/c/loops.h"
#include "ir/ops/max_unpool.h"

namespace onnxc {
namespace {

void emit_max_unpool(CEmit& e) {
  const MaxUnpoolGeom& g = max_unpool_geom(e.node);
  DType t = e.out_dtype(0);
  const int64_t n_out = numel(g.out), n_in = numel(g.in), total = numel(g.inferred);
  if (n_out == 0) return;
  e("memset({}, 0, {} * sizeof({}));", e.out(0), n_out, dtype_ctype(t));
  if (n_in == 0) return;
  e("/* MaxUnpool: {} values at their indices in {}{} */", n_in, shape_str(g.inferred),
    g.out == g.inferred ? std::string() : " placed in " + shape_str(g.out));
  open_loop(e, "i", n_in);
  e("int64_t k = {}[i];", e.in(1));
  e("if (k < 0) k += {};", total);
  e("k = k < 0 ? 0 : k > {0} ? {0} : k;", total - 1);
  if (g.out == g.inferred) {
    e("{}[k] = {}[i];", e.out(0), e.in(0));
  } else {
    // k = plane * S + spatial position (row-major over the unpooled spatial dims)
    Shape si(g.inferred.begin() + 2, g.inferred.end()), so(g.out.begin() + 2, g.out.end());
    Shape sti = strides_of(si), sto = strides_of(so);
    e("int64_t rem = k % {};", numel(si));
    std::string off = fmt::format("(k / {}) * {}", numel(si), numel(so));
    for (size_t d = 0; d < si.size(); ++d) {
      e("const int64_t d{} = rem / {};", d, sti[d]);
      if (d + 1 < si.size()) e("rem %= {};", sti[d]);
      off += fmt::format(" + d{} * {}", d, sto[d]);
    }
    e("{}[{}] = {}[i];", e.out(0), off, e.in(0));
  }
  e("}}");
}

}  // namespace

void register_max_unpool(CKernelTable& t) { t["MaxUnpool"] = {emit_max_unpool, nullptr, nullptr, nullptr}; }

}  // namespace onnxc
