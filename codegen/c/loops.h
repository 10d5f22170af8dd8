// codegen/c/loops.h — the loop helpers every C kernel shares: index arithmetic, loops and
// task loops, the broadcasting loop nest of elementwise code, and copies.
//
// Conventions: loop counters are int64_t; bounds are compile-time constants. Parallel
// loops are OpenMP `parallel for` through ONNXC_PRAGMA, and whether a nest goes parallel
// is asked of the target (CEmit::parallel, codegen/target.h) with the nest's work in
// scalar operations. Single-trip loops become blocks declaring their counter (clang 14
// fails to vectorize simd loops nested in some single-trip loops), and loops shorter than
// 4 iterations get no simd hint (clang warns it cannot vectorize them).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "codegen/c/emit.h"

namespace onnxc {

// "2 * ow - 1", "ow + 3", "ow", "5" (var empty → constant).
std::string affine(const std::string& var, int64_t coef, int64_t off);

// Pieces of an index expression: "i * 5", "i" (stride 1) or "" (stride 0); and their sum
// without the empty and "0" ones ("0" when none is left).
std::string index_term(const std::string& var, int64_t stride);
std::string index_sum(const std::vector<std::string>& parts);

// `omp simd` (with `clauses`, e.g. "reduction(+:s)") for a loop of `trip` iterations; none
// for very short loops.
void simd(CEmit& e, int64_t trip, const std::string& clauses = "");

// Opens `for (int64_t v = 0; v < end; v += step) {`, or, when that would run once, a block
// declaring `const int64_t v = 0;`. One `}` closes either.
void open_loop(CEmit& e, const std::string& v, int64_t end, int64_t step = 1);

// The task loops of a kernel (variable, end, step; from 0), outermost first: the single-trip ones
// become constants, then the others open, the first carrying `omp parallel for` that
// collapses them all when `par`. One `}` per loop closes them.
void open_tasks(CEmit& e, const std::vector<NestLoop>& loops, bool par);

// The loops, outermost first, each opening a block: one collapsed `omp parallel for
// schedule(static)` nest when `par` (CEmit::open_nest), plain loops otherwise.
void open_collapsed(CEmit& e, const std::vector<NestLoop>& loops, bool par);

// Emits a loop nest over `out`; stmt() receives, per input shape, the C index expression of
// the element to read, and the output index; it returns one C statement. One flat loop when
// every input has the output's element count, otherwise one loop per (merged) output
// dimension, each input indexed with its own strides (0 on broadcast dimensions). The
// outer loop goes parallel when the target says so for numel(out) operations.
void emit_broadcast(CEmit& e, const Shape& out, const std::vector<Shape>& ins,
                    const std::function<std::string(const std::vector<std::string>&, const std::string&)>& stmt);
// The same loops with the caller deciding whether a loop of `trip` iterations running `body`
// gets `omp simd` (codegen/c/kernels/ew_loop.h).
void emit_broadcast_simd(CEmit& e, const Shape& out, const std::vector<Shape>& ins,
                         const std::function<std::string(const std::vector<std::string>&, const std::string&)>& stmt,
                         const std::function<bool(const std::string& body, int64_t trip)>& simd_ok);

// `static const DECL DIMS = { ITEMS };` at the top of the function (CEmit::local), the items (C
// literals, or braced rows of a 2-D table) several per line: emit_table(e, "int32_t wsum",
// "[64]", items). The second form: one row of integers, DIMS its length.
void emit_table(CEmit& e, const std::string& decl, const std::string& dims, const std::vector<std::string>& items);
void emit_table(CEmit& e, const std::string& decl, const std::vector<int64_t>& values);

// Declares `T acc` (T the C type of t) holding the maximum of `init` and x[0..n) (`x` a
// pointer expression), by compare-selects `v > acc ? v : acc`: with a non-NaN init the
// running maximum is never NaN, so NaN elements are skipped as std::fmax skips them, and
// all-NaN input leaves init. No libm call and no `omp simd reduction(max:...)` (clang
// neither vectorizes that compare-select reduction nor starts it at -INFINITY): one vector
// of lane maxima in a local array (simd over the lanes), the tail into its first lanes, then
// the lanes folded in halves.
void emit_max_reduce(CEmit& e, const std::string& acc, const std::string& init, const std::string& x, int64_t n, DType t);

// A strided view of a buffer: element (i_0, ..., i_{r-1}) of the logical shape lives at
// element offset `offset + sum_d i_d * stride[d]` (strides in elements, may be negative).
struct StridedView {
  int64_t offset = 0;
  Shape stride;
};

// Writes `memcpy(dst, src, numel * sizeof(T))` for a whole tensor (nothing when empty).
void emit_copy_all(CEmit& e, const std::string& dst, const std::string& src, int64_t numel, DType t);
// Copies every element of the logical shape `dims` from view `sv` of `src` to view `dv`
// of `dst`. Size-1 dimensions are dropped, adjacent dimensions that are contiguous in both
// views are merged, a contiguous innermost dimension becomes one memcpy per run; a
// transpose-like nest (innermost read strided, an outer dim read contiguously) loops over
// tiles of one cache line per side; the outermost loop goes parallel when the copy is large.
void emit_strided_copy(CEmit& e, const std::string& dst, const StridedView& dv, const std::string& src,
                       const StridedView& sv, const Shape& dims, DType t);
// Several strided copies to disjoint parts of their destinations (Concat's inputs, Split's
// outputs), each as emit_strided_copy writes it, except that when two or more of them would go
// parallel they all run in one parallel region (`omp for nowait` each, a lone memcpy `omp single
// nowait`): one fork-join for the op instead of one per copy.
struct StridedCopy {
  std::string dst;
  StridedView dv;
  std::string src;
  StridedView sv;
  Shape dims;
  DType t;
  // A C expression: copy only the first `rows` entries of dims[0] (a run-time size, Node::run_a;
  // "" copies them all). Used where dims[0] stays a loop of its own; otherwise all are copied.
  std::string rows;
};
void emit_strided_copies(CEmit& e, const std::vector<StridedCopy>& copies);

// Exact C literal of element i of t, in t's own dtype ("0.5f", "-3", "18446744073709551615ULL").
std::string c_elem_literal(const Tensor& t, int64_t i);
// C expression converting `x` (a side-effect-free expression of dtype `from`) to dtype `to`
// with the semantics of convert_value (ir/ops/elementwise.h); `x` may be evaluated several
// times.
std::string c_convert(DType from, DType to, const std::string& x);

}  // namespace onnxc
