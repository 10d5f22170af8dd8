// codegen/c/kernels/movement.cc — the data-movement ops in C: Flatten, Reshape, Squeeze,
// Unsqueeze (one memcpy: the data is unchanged; none where memory planning stored the input as
// the output), Transpose, Concat, Split, Slice, Gather.
// Everything is a copy between strided views (emit_strided_copy, codegen/c/loops.h), which
// merges dimensions and turns contiguous runs into memcpy, any dtype.
//  Transpose  walks the output in order (contiguous writes) and reads the input through
//             permuted strides; an identity-like perm is a single memcpy and a perm that
//             keeps the innermost dims becomes memcpy runs. A 2-D-like transpose (innermost
//             read strided, an outer dim read contiguously) goes in tiles of one cache line
//             per side.
//  Concat     each input as [outer, axis_k * inner] rows into its slot of the output rows.
//             NCHWc (axis 1): whole blocks, one run per input and image, when every input
//             but the last fills whole blocks; otherwise lane-shifted runs per position.
//  Split      each piece as [outer, size_k * inner] rows (with a run-time size, Node::run_a,
//             the run's rows only).
//  Concat's and Split's copies share one parallel region when two or more of them go parallel
//  (emit_strided_copies): one fork-join per op, not one per input (4 per inception block).
//  Slice      a strided view of the input (offset = starts, strides = steps).
//  DepthToSpace, SpaceToDepth  the output as a 6-D view of the input (ir/ops/index_ops.h).
//  Gather     constant indices in arithmetic progression: a strided copy; other constant
//             indices: a static index table; runtime indices: read, wrapped once and
//             clamped to the axis (ir/ops/gather.cc). The innermost block is a memcpy.
#include <algorithm>
#include <cstdint>

#include "codegen/c/kernels/kernels.h"
#include "codegen/c/loops.h"
#include "ir/ops/index_ops.h"
#include "ir/ops/move_common.h"

namespace onnxc {
namespace {

// Whether input k of e.node already lies at byte offset `off` of the output (memory planning
// put it there, inputs_in_output): then its copy would write every byte with itself, and is
// left out.
bool already_in_place(const CEmit& e, size_t k, int64_t off) {
  const Value *x = e.node.in(k), *y = e.node.out(0);
  return off >= 0 && x && y && x->arena_offset >= 0 && y->arena_offset >= 0 && x->arena_offset == y->arena_offset + off;
}

void emit_copy(CEmit& e) {
  if (already_in_place(e, 0, 0)) return;  // memory planning stored the input as the output
  emit_copy_all(e, e.out(0), e.in(0), numel(e.out_shape(0)), e.out_dtype(0));
}

void emit_transpose(CEmit& e) {
  const std::vector<int64_t>& perm = transpose_perm(e.node);
  const Shape& os = e.out_shape(0);
  Shape ist = strides_of(e.in_shape(0));
  StridedView dv{0, strides_of(os)}, sv{0, Shape(os.size())};
  for (size_t d = 0; d < os.size(); ++d) sv.stride[d] = ist[static_cast<size_t>(perm[d])];
  emit_strided_copy(e, e.out(0), dv, e.in(0), sv, os, e.out_dtype(0));
}

// NCHWc: channel concatenation (axis 1). Input k's channel c goes to output channel o_k + c,
// i.e. block (o_k + c) / b, lane (o_k + c) % b. When every input but the last fills whole
// blocks, each input is one run of whole output blocks per image (the last one's padding
// lanes become the output's). Otherwise an input starting at lane s = o_k % b splits each of
// its blocks in two: lanes [0, b - s) go to lanes [s, b) of one output block and lanes
// [b - s, b) to lanes [0, s) of the next; its last, partial block copies only its real lanes.
// Lanes past C in the output's last block are padding (ir/layout.h) and are not written.
bool concat_nchwc(const Node& n, int64_t b) { return concat_axis(n) == 1 && b >= 1 && n.out(0)->shape.size() >= 3; }

void emit_concat_nchwc(CEmit& e) {
  const Shape& os = e.out_shape(0);
  const int64_t b = e.out_layout(0).block;
  int64_t inner = 1;
  for (size_t d = 2; d < os.size(); ++d) inner *= os[d];
  const int64_t out_blocks = ceil_div_pos(os[1], b);
  bool whole = true;
  for (size_t k = 0; k + 1 < e.node.inputs.size(); ++k) whole = whole && e.in_shape(k)[1] % b == 0;
  int64_t off = 0;  // channels before input k
  std::vector<StridedCopy> copies;  // one parallel region for them all (emit_strided_copies)
  const std::vector<int64_t> at = inputs_in_output(e.node);
  for (size_t k = 0; k < e.node.inputs.size(); ++k) {
    ONNXC_ASSERT(e.in_layout(k) == Layout::nchwc(b), "NCHWc concat input " + e.node.in(k)->type_str());
    const int64_t C = e.in_shape(k)[1], in_blocks = ceil_div_pos(C, b);
    if (!at.empty() && already_in_place(e, k, at[k])) {
      off += C;
      continue;
    }
    if (whole) {  // one run of whole blocks per image
      const int64_t len = in_blocks * inner * b;
      StridedView dv{off / b * inner * b, {out_blocks * inner * b, 1}}, sv{0, {len, 1}};
      copies.push_back({e.out(0), dv, e.in(k), sv, {os[0], len}, e.out_dtype(0), ""});
      off += C;
      continue;
    }
    // Lanes [from, from + w) of `blocks` input blocks starting at block ib, to lane `to` of
    // output block (off + ib * b + from) / b onwards, for every image and position.
    auto piece = [&](int64_t ib, int64_t blocks, int64_t from, int64_t w) {
      if (blocks <= 0 || w <= 0) return;
      const int64_t c = off + ib * b + from;  // first output channel written
      StridedView dv{c / b * inner * b + c % b, {out_blocks * inner * b, inner * b, b, 1}};
      StridedView sv{ib * inner * b + from, {in_blocks * inner * b, inner * b, b, 1}};
      copies.push_back({e.out(0), dv, e.in(k), sv, {os[0], blocks, inner, w}, e.out_dtype(0), ""});
    };
    const int64_t s = off % b, full = C / b, tail = C % b;
    piece(0, full, 0, b - s);  // whole input blocks: the part that fits the first output block
    if (s) piece(0, full, b - s, s);  // ... and the rest, into the next output block
    if (tail) {
      piece(full, 1, 0, std::min(tail, b - s));
      if (tail > b - s) piece(full, 1, b - s, tail - (b - s));
    }
    off += C;
  }
  emit_strided_copies(e, copies);
}

void emit_concat(CEmit& e) {
  if (e.out_layout(0).is_nchwc()) return emit_concat_nchwc(e);
  const int64_t axis = concat_axis(e.node);
  const Shape& os = e.out_shape(0);
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < os.size(); ++d)
    if (static_cast<int64_t>(d) < axis) outer *= os[d];
    else if (static_cast<int64_t>(d) > axis) inner *= os[d];
  int64_t row = os[static_cast<size_t>(axis)] * inner, off = 0;
  std::vector<StridedCopy> copies;
  const std::vector<int64_t> at = inputs_in_output(e.node);
  for (size_t k = 0; k < e.node.inputs.size(); ++k) {
    int64_t len = e.in_shape(k)[static_cast<size_t>(axis)] * inner;
    if (!at.empty() && already_in_place(e, k, at[k])) {
      off += len;
      continue;
    }
    StridedView dv{off, {row, 1}}, sv{0, {len, 1}};
    copies.push_back({e.out(0), dv, e.in(k), sv, {outer, len}, e.out_dtype(0), ""});
    off += len;
  }
  emit_strided_copies(e, copies);
}

void emit_split(CEmit& e) {
  const SplitGeom& g = split_geom(e.node);
  const Shape& is = e.in_shape(0);
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < is.size(); ++d)
    if (static_cast<int64_t>(d) < g.axis) outer *= is[d];
    else if (static_cast<int64_t>(d) > g.axis) inner *= is[d];
  int64_t row = is[static_cast<size_t>(g.axis)] * inner, off = 0;
  // A run-time size (compile-model --dynamic seq=MAX, Node::run_a): the run's rows only.
  const std::string rows = e.node.run_a != 0 && !e.in_layout(0).is_nchwc() ? fmt::format("{} * onnxc_n + {}", e.node.run_a, e.node.run_b) : "";
  std::vector<StridedCopy> copies;
  for (size_t j = 0; j < g.sizes.size(); ++j) {
    int64_t len = g.sizes[j] * inner;
    if (e.node.out(j)) {
      StridedView dv{0, {len, 1}}, sv{off, {row, 1}};
      copies.push_back({e.out(j), dv, e.in(0), sv, {outer, len}, e.in_dtype(0), rows});
    }
    off += len;
  }
  emit_strided_copies(e, copies);
}

void emit_slice(CEmit& e) {
  const SliceGeom& g = slice_geom(e.node);
  const Shape& os = e.out_shape(0);
  Shape ist = strides_of(e.in_shape(0));
  StridedView dv{0, strides_of(os)}, sv{0, Shape(os.size())};
  for (size_t d = 0; d < os.size(); ++d) {
    sv.offset += g.start[d] * ist[d];
    sv.stride[d] = g.step[d] * ist[d];
  }
  emit_strided_copy(e, e.out(0), dv, e.in(0), sv, os, e.out_dtype(0));
}

void emit_gather(CEmit& e) {
  const GatherGeom& g = gather_geom(e.node);
  const Shape& xs = e.in_shape(0);
  int64_t outer = 1, inner = 1, dim = xs[static_cast<size_t>(g.axis)];
  for (size_t d = 0; d < xs.size(); ++d)
    if (static_cast<int64_t>(d) < g.axis) outer *= xs[d];
    else if (static_cast<int64_t>(d) > g.axis) inner *= xs[d];
  int64_t k = numel(e.in_shape(1));
  if (outer * k * inner == 0) return;
  DType t = e.out_dtype(0);
  const char* ct = dtype_ctype(t);
  if (g.baked) {
    int64_t step = k > 1 ? g.idx[1] - g.idx[0] : 1;
    bool progression = true;
    for (int64_t j = 1; j < k && progression; ++j) progression = g.idx[static_cast<size_t>(j)] - g.idx[static_cast<size_t>(j - 1)] == step;
    if (progression) {
      StridedView dv{0, {k * inner, inner, 1}}, sv{g.idx[0] * inner, {dim * inner, step * inner, 1}};
      emit_strided_copy(e, e.out(0), dv, e.in(0), sv, {outer, k, inner}, t);
      return;
    }
    bool small = dim <= INT32_MAX;
    e.local("static const {} idx[{}] = {{", small ? "int32_t" : "int64_t", k);
    for (int64_t j0 = 0; j0 < k; j0 += 16) {
      std::string row;
      for (int64_t j = j0; j < std::min(k, j0 + 16); ++j) row += (j == j0 ? "" : ", ") + std::to_string(g.idx[static_cast<size_t>(j)]);
      e("{}{}", row, j0 + 16 < k ? "," : "");
    }
    e("}};");
  }
  bool big = e.parallel(static_cast<double>(outer * k * inner));
  std::string dst_row, src_row;  // element offsets of the output row (o, j) and input row (o, q)
  if (outer > 1) {
    if (big) e.open_nest({.loops = {{"o", outer}}});
    else e("for (int64_t o = 0; o < {}; ++o) {{", outer);
    dst_row = fmt::format("(o * {} + j)", k);
    src_row = fmt::format("(o * {} + q)", dim);
  } else {
    dst_row = "j";
    src_row = "q";
  }
  if (outer == 1 && big) e.open_nest({.loops = {{"j", k}}});
  else e("for (int64_t j = 0; j < {}; ++j) {{", k);
  if (g.baked) {
    e("const int64_t q = idx[j];");
  } else {
    e("int64_t q = (int64_t){}[j];", e.in(1));
    e("if (q < 0) q += {};", dim);
    e("q = q < 0 ? 0 : q > {0} ? {0} : q; /* out-of-range indices are clamped */", dim - 1);
  }
  if (inner == 1) e("{}[{}] = {}[{}];", e.out(0), dst_row, e.in(0), src_row);
  else e("memcpy({} + {} * {}, {} + {} * {}, {} * sizeof({}));", e.out(0), dst_row, inner, e.in(0), src_row, inner, inner, ct);
  e("}}");
  if (outer > 1) e("}}");
}

void emit_space_depth(CEmit& e) {
  const SpaceDepthGeom& g = space_depth_geom(e.node);
  StridedView dv{0, strides_of(g.dims)}, sv{0, g.src_stride};
  emit_strided_copy(e, e.out(0), dv, e.in(0), sv, g.dims, e.out_dtype(0));
}

}  // namespace

std::vector<int64_t> inputs_in_output(const Node& n) {
  const Value* y = n.out(0);
  if (n.op_type == "Reshape" || n.op_type == "Flatten" || n.op_type == "Squeeze" || n.op_type == "Unsqueeze") {
    const Value* x = n.in(0);
    if (!x || !y || n.outputs.size() != 1 || !x->layout.is_plain() || !y->layout.is_plain() || x->dtype != y->dtype ||
        x->nbytes() != y->nbytes())
      return {};
    std::vector<int64_t> at(n.inputs.size(), -2);  // the shape / axes inputs are not data
    at[0] = 0;
    return at;
  }
  if (n.op_type != "Concat" || !y || !y->shape_known || n.outputs.size() != 1 || n.inputs.empty()) return {};
  const Shape& os = y->shape;
  const int64_t axis = concat_axis(n), esize = static_cast<int64_t>(dtype_size(y->dtype));
  std::vector<int64_t> at(n.inputs.size(), -1);
  for (const Value* x : n.inputs)
    if (!x || !x->shape_known || x->layout != y->layout || x->dtype != y->dtype) return {};
  if (y->layout.is_nchwc()) {
    const int64_t b = y->layout.block;
    if (axis != 1 || os.size() < 3 || os[0] != 1) return {};
    int64_t inner = 1;
    for (size_t d = 2; d < os.size(); ++d) inner *= os[d];
    int64_t c = 0;  // channels before input k
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      if (c % b != 0) break;  // this input and the ones after it start mid-block
      const int64_t C = n.in(k)->shape[1];
      // An input that ends mid-block (but the last) shares its last block with the next one:
      // its own padding lanes there would be the next input's channels.
      if (C % b == 0 || k + 1 == n.inputs.size()) at[k] = c / b * inner * b * esize;
      c += C;
    }
    return at;
  }
  if (!y->layout.is_plain()) return {};
  int64_t inner = 1;
  for (size_t d = 0; d < os.size(); ++d)
    if (static_cast<int64_t>(d) < axis && os[d] != 1) return {};
    else if (static_cast<int64_t>(d) > axis) inner *= os[d];
  int64_t e = 0;  // elements before input k
  for (size_t k = 0; k < n.inputs.size(); ++k) {
    at[k] = e * esize;
    e += n.in(k)->shape[static_cast<size_t>(axis)] * inner;
  }
  return at;
}

void register_movement(CKernelTable& t) {
  for (const char* k : {"Flatten", "Reshape", "Squeeze", "Unsqueeze"}) t[k] = {emit_copy, nullptr, nullptr, nullptr};
  t["Transpose"] = {emit_transpose, nullptr, nullptr, nullptr};
  t["Concat"] = {emit_concat, concat_nchwc, nullptr, nullptr};
  t["Split"] = {emit_split, nullptr, nullptr, nullptr};
  t["Slice"] = {emit_slice, nullptr, nullptr, nullptr};
  t["Gather"] = {emit_gather, nullptr, nullptr, nullptr};
  t["DepthToSpace"] = {emit_space_depth, nullptr, nullptr, nullptr};
  t["SpaceToDepth"] = {emit_space_depth, nullptr, nullptr, nullptr};
}

}  // namespace onnxc
