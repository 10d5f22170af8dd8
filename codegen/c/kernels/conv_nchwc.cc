// codegen/c/kernels/conv_nchwc.cc — the C kernel of 2-D convolutions on NCHW[b]c
// activations (ir/layout.h), for the variants of conv_blocking (ir/ops/conv.h): regular,
// depthwise, first-layer (plain X) and whole-block grouped convs, with W repacked at
// compile time by the layout pass. What each kernel writes is decided in
// conv_nchwc_plan.h (register tiles, the cut of a row, the reduction's steps, the order and
// parallelism of the tasks, the Winograd blocking); this file prints the plans and decides
// nothing itself.
//
// Register tiles (ONNX Runtime's MLAS NCHWc kernels, written as C): the output channels are
// cut into chunks of V = min(b, target vector length) lanes, a vector each (b = 64 or 256
// on a 16-float machine: 4 or 16 chunks per block); accumulators are vector-extension
// locals (codegen/c/vector_types.h) and every loop over a tile is unrolled here, at
// emission time.
//  - broadcast kernel (regular, grouped, first layer): a tile of RC chunks × RW output
//    pixels, RC·RW accumulators within 3/4 of the target's vector registers (4 × 6 with 32
//    registers); per input channel, one broadcast input element × one weight vector per
//    chunk. The input-channel lanes of a block go in a loop over groups of 4 lanes, unrolled.
//  - depthwise kernel: lanes are channels; a tile of RW pixels of one chunk, the KW weight
//    vectors of a kernel row in registers, each input column loaded once per kernel row
//    and used by every output pixel that reads it.
//  - Winograd kernel (3×3, stride 1, W in Layout::winograd by the pack-weights pass when
//    conv_winograd says so): F(2×2, 3×3), input transform, products of register tiles (as
//    the broadcast kernel's) per position, output transform with the epilogue (see
//    emit_winograd_kernel).
// Each output row is cut at compile time into tiles of RW pixels and a shorter last one, with
// the edge pixels (those whose taps reach the padding) inside full tiles, so the edges run at
// the tile's register reuse rather than one pixel at a time and no padded copy is made. The
// tiles of one width form a loop; in a loop that holds an edge tile, each pixel that may read
// padding gets a pointer per kernel column, to zeros where the column is outside the input. A
// lone tile (a row of one tile, the last shorter one) is emitted at its position with only
// the (pixel, column) pairs inside the input. Rows with more than 8 edge tiles (large
// dilations) keep one-pixel edge tiles whose valid taps are found at run time. 1×1 convs with unit strides and
// no pads treat H×W as one row, cut into segments for the threads. Tasks: (image, tile of
// chunks, output row or segment), parallel when the target says so; rows (segments) go before
// the chunks where X outweighs W, so each thread reads only its share of X.
//
// A fused epilogue (the group's Relu, Clip, SiLU, residual Add, per-channel Mul...,
// passes/fuse.cc) runs on each tile: on the accumulators as they are stored when every step
// has a vector form (fused.h epilogue_vector: Relu, LeakyRelu, Clip, Add, Sub, Mul, Div),
// else right after the store, while the tile is in L1, from the same element expressions as
// the group loop (fused.h epilogue_element); there is no second sweep over the output. Output lanes >= M get bias 0 and zero weights; lanes of
// whole padding chunks are written with zeros and get no epilogue (padding lanes never reach
// real lanes of a consumer, ir/layout.h).
//
// When a tile's weights (its chunks' slab over every input block) would not stay in half of
// L2, the reduction runs in steps of input blocks: a task then covers a block of rows, and per
// step every tile of those rows loads its accumulators from Y (the bias on the first step),
// adds the step's input blocks and stores them, so each step's weights come from L3 once per
// row block rather than once per tile; the epilogue runs after the last step. Where the slab
// outgrows two L1s the steps are smaller, so that a step's weights stay in L1 across the
// tiles of a task (1×1 convs too: a segment of the line).
//
// Known gaps: first layers never run in steps; a chunk spanning several
// machine registers (generic-vector targets wider than the host) tiles fewer pixels but is not
// split.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include "codegen/c/fused.h"
#include "codegen/c/kernels/conv.h"
#include "codegen/c/kernels/conv_nchwc_plan.h"
#include "codegen/c/vector_types.h"
#include "ir/ops/elementwise.h"

namespace onnxc {
namespace {

// "(e) * c", "e", "" (c == 0): a term of an index sum.
std::string term(const std::string& e, int64_t c) {
  if (c == 0) return "";
  if (c == 1) return e;
  bool ident = true;
  for (char ch : e) ident = ident && (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_');
  return ident ? fmt::format("{} * {}", e, c) : fmt::format("({}) * {}", e, c);
}

std::string sum(const std::vector<std::string>& ts) {
  std::string s;
  for (auto& t : ts)
    if (!t.empty()) s += (s.empty() ? "" : " + ") + t;
  return s.empty() ? "0" : s;
}

// A conv being printed: the conv (conv_nchwc_plan.h), its emitter, the C names.
struct K : NchwcConv {
  CEmit& e;
  std::string vt, vtu, X, W, Y;  // the vector type (aligned, unaligned); X, W and Y
  std::vector<int64_t> group;    // a masked tile at a run-time position: the positions its loop takes

  K(CEmit& em, const NchwcConv& c) : NchwcConv(c), e(em) {}

  std::string load(const std::string& p) const { return fmt::format("*(const {}*)({})", vtu, p); }
  // The block and first lane of chunk `q` (an expression).
  std::string block_of(const std::string& q) const { return CPB == 1 ? q : fmt::format("{} / {}", q, CPB); }
  std::string lane_of(const std::string& q) const { return CPB == 1 ? "0" : fmt::format("{} % {} * {}", q, CPB, V); }
  std::string with_lane(const std::string& base, const std::string& q) const {
    return CPB == 1 ? base : fmt::format("{} + {}", base, lane_of(q));
  }
};

// The valid kernel rows of output row `oh`: declares ih0 (and kh0, kh1 where pads or the
// bottom edge cut them); returns the bounds.
std::pair<std::string, std::string> kernel_rows(K& k) {
  CEmit& e = k.e;
  std::string kh0 = "0", kh1 = std::to_string(k.KH);
  if (k.line) return {kh0, kh1};
  e("const int64_t ih0 = {};", affine("oh", k.SH, -k.PH));
  if (k.PH > 0) {
    kh0 = "kh0";
    if (k.DH == 1) e("const int64_t kh0 = ih0 < 0 ? -ih0 : 0;");
    else e("const int64_t kh0 = ih0 < 0 ? (-ih0 + {}) / {} : 0;", k.DH - 1, k.DH);
  }
  if ((k.OH - 1) * k.SH - k.PH + (k.KH - 1) * k.DH > k.IH - 1) {
    kh1 = "kh1";
    std::string room = k.DH == 1 ? fmt::format("{} - ih0", k.IH) : fmt::format("({} - ih0 + {}) / {}", k.IH, k.DH - 1, k.DH);
    e("const int64_t kh1 = {0} < {1} ? {0} : {1};", room, k.KH);
  }
  return {kh0, kh1};
}

// Opens the loop over kernel rows [kh0, kh1) (a block when it is the single row 0).
void open_kernel_rows(K& k, const std::pair<std::string, std::string>& kh) {
  if (kh.first == "0" && kh.second == "1") open_loop(k.e, "kh", 1);
  else k.e("for (int64_t kh = {}; kh < {}; ++kh) {{", kh.first, kh.second);
}
// X row of kernel row kh (an element offset in units of X's pixels).
std::string input_row(const K& k) { return k.line ? affine("kh", k.DH, 0) : "ih0 + " + affine("kh", k.DH, 0); }

// An edge pixel `ow`: declares iw0 and its valid taps [kw0, kw1).
void edge_taps(K& k) {
  CEmit& e = k.e;
  e("const int64_t iw0 = {};", affine("ow", k.SW, -k.PW));
  if (k.DW == 1) e("const int64_t kw0 = iw0 < 0 ? -iw0 : 0;");
  else e("const int64_t kw0 = iw0 < 0 ? (-iw0 + {}) / {} : 0;", k.DW - 1, k.DW);
  std::string room = k.DW == 1 ? fmt::format("{} - iw0", k.IW) : fmt::format("({} - iw0 + {}) / {}", k.IW, k.DW - 1, k.DW);
  e("const int64_t kw1 = {0} < {1} ? {0} : {1};", room, k.KW);
}

// Element offset in extra input `x` (strides st against the output's [N, MB, OH, OW, b]
// view) of chunk `qe`, pixel `px` of the row (expressions), lane `lane` ("" for lane 0).
std::string extra_offset(const K& k, const Shape& st, const std::string& qe, const std::string& px, const std::string& lane) {
  std::string spatial;
  if (!k.line) spatial = sum({term("oh", st[2]), term(px, st[3])});
  else if (st[2] == k.OWr * st[3]) spatial = term(px, st[3]);
  else spatial = sum({term(fmt::format("({}) / {}", px, k.OWr), st[2]), term(fmt::format("({}) % {}", px, k.OWr), st[3])});
  const std::string ln = k.CPB == 1 ? lane : lane.empty() ? k.lane_of(qe) : fmt::format("{} + {}", k.lane_of(qe), lane);
  return sum({term("n", st[0]), term(k.block_of(qe), st[1]), spatial == "0" ? "" : spatial, ln.empty() ? "" : term(ln, st[4])});
}

// The group's epilogue on a tile just stored: chunks [q0, q0 + RCt) (q0 an expression) ×
// pixels [ow, ow + R) of the row at yr, in place, lanes innermost under omp simd.
void tile_epilogue(K& k, int64_t RCt, int64_t R, const std::string& q0, int64_t ycoff) {
  CEmit& e = k.e;
  const Node& n = e.node;
  const Shape ov = e.out_view(0);  // [N, MB, OH, OW, b] of the real geometry
  if (RCt > 1) open_loop(e, "j", RCt);
  else e("{{");
  const std::string px = R > 1 ? "ow + r" : "ow";
  std::vector<std::string> extras;
  bool uses_q = false;  // whether an extra input is read per chunk
  for (size_t x = 0; x < n.extra_inputs.size(); ++x) {
    Shape st = broadcast_strides(ov, e.view_of(n.extra_inputs[x]));
    uses_q = uses_q || st[1] != 0 || (k.CPB > 1 && st[4] != 0);
    extras.push_back(fmt::format("{}[{}]", e.extra(x), extra_offset(k, st, "qe", px, "l")));
  }
  if (uses_q) e("const int64_t qe = {};", RCt > 1 ? q0 + " + j" : q0);
  e("float* restrict ye = yr{};", RCt > 1 ? fmt::format(" + j * {}", ycoff) : "");
  if (R > 1) open_loop(e, "r", R);
  else e("{{");
  simd(e, k.V);
  e("for (int64_t l = 0; l < {}; ++l) {{", k.V);
  const std::string y = fmt::format("ye[({}) * {} + l]", px, k.b);
  e("{}", epilogue_element(e, y, extras, y));
  e("}}");
  e("}}");
  e("}}");
}

// A tile's stores with the group's epilogue applied to the accumulators on the way
// (fused.h epilogue_vector): acc(j, r) names the accumulator of chunk j (of [q0, q0 + RCt)),
// pixel r; Y of chunk j at yr + j * ycoff. Empty when the epilogue has no vector form here
// or reads an extra input other than lane by lane or one value for all lanes; the tile is
// then stored as it is and tile_epilogue() runs over it in L1. Against that second pass,
// resnet50's 1×1 64→256 with the residual Add and Relu: 0.63 → 0.56 ms at one thread.
std::vector<std::string> epilogue_stores(K& k, int64_t RCt, int64_t R, const std::string& q0, int64_t ycoff,
                                         const std::function<std::string(int64_t, int64_t)>& acc) {
  CEmit& e = k.e;
  const Node& n = e.node;
  const Shape ov = e.out_view(0);
  std::vector<Shape> st;
  for (const Value* v : n.extra_inputs) {
    st.push_back(broadcast_strides(ov, e.view_of(v)));
    if (st.back()[4] != 0 && st.back()[4] != 1) return {};
  }
  std::vector<std::string> lines;
  for (int64_t j = 0; j < RCt; ++j) {
    const std::string qe = j == 0 ? q0 : fmt::format("({} + {})", q0, j);
    std::string line;
    for (int64_t r = 0; r < R; ++r) {
      const std::string px = affine("ow", 1, r);
      std::vector<std::string> extras;
      for (size_t x = 0; x < st.size(); ++x) {
        const std::string off = extra_offset(k, st[x], qe, px, "");
        extras.push_back(st[x][4] == 1 ? k.load(fmt::format("{} + {}", e.extra(x), off)) : fmt::format("{}[{}]", e.extra(x), off));
      }
      const std::string code =
          epilogue_vector(e, k.V, acc(j, r), extras, fmt::format("*({}*)(yr + {})", k.vtu, affine("ow", k.b, r * k.b + j * ycoff)));
      if (code.empty()) return {};
      line += fmt::format("{}{{ {} }}", r ? " " : "", code);
    }
    lines.push_back(line);
  }
  return lines;
}

// Stores a tile, chunks [q0, q0 + RCt) × R pixels (acc(j, r) the accumulator of chunk j,
// pixel r; Y of chunk j at yr + j * ycoff), with the group's epilogue: on the accumulators
// (epilogue_stores) where it has a vector form, else over the stored tile (tile_epilogue).
// `last` (a C condition, "" for always): the epilogue only where it holds, the last step of
// a stepped reduction; elsewhere the plain stores.
void store_tile(K& k, int64_t RCt, int64_t R, const std::string& q0, int64_t ycoff,
                const std::function<std::string(int64_t, int64_t)>& acc, const std::string& last) {
  CEmit& e = k.e;
  auto plain = [&] {
    for (int64_t j = 0; j < RCt; ++j) {
      std::string st;
      for (int64_t r = 0; r < R; ++r) st += fmt::format("{}*({}*)(yr + {}) = {};", r ? " " : "", k.vtu, affine("ow", k.b, r * k.b + j * ycoff), acc(j, r));
      e("{}", st);
    }
  };
  const std::vector<std::string> fused = k.epi ? epilogue_stores(k, RCt, R, q0, ycoff, acc) : std::vector<std::string>{};
  if (!fused.empty()) {
    if (!last.empty()) e("if ({}) {{", last);
    for (const std::string& l : fused) e.line(l);
    if (!last.empty()) e("}} else {{"), plain(), e("}}");
    return;
  }
  plain();
  if (!k.epi) return;
  if (!last.empty()) e("if ({}) {{", last);
  tile_epilogue(k, RCt, R, q0, ycoff);
  if (!last.empty()) e("}}");
}

// Zeros on the whole padding chunks [QR, QT) of the last output block.
void zero_padding_chunks(K& k) {
  if (k.QR >= k.QT) return;
  CEmit& e = k.e;
  const int64_t l0 = k.QR % k.CPB * k.V;
  e("/* lanes {}..{} of the last output block are padding: zeros */", l0, k.b - 1);
  e.serial();  // after the tasks, beside them: it changes no local
  e("for (int64_t n = 0; n < {}; ++n) {{", k.g.N);
  e("for (int64_t p = 0; p < {}; ++p) {{", k.OH * k.OW);
  e("float* restrict yp = {} + ((n * {} + {}) * {} + p) * {};", k.Y, k.MB, k.MB - 1, k.OH * k.OW, k.b);
  simd(e, k.b - l0);
  e("for (int64_t l = {}; l < {}; ++l) yp[l] = 0.0f;", l0, k.b);
  e("}}");
  e("}}");
}

// How a tile's pixels meet the edges of X.
enum class TileKind {
  Interior,  // at `ow` (a variable): every tap of every pixel inside X
  Edge,      // one pixel at `ow` (a variable): its valid taps [kw0, kw1) found at run time
  Masked,    // at a position known here: each (pixel, tap) inside X emitted, the others left out
};

// The tiles of one row (or of the task's segment of the line): tile(R, kind, at) emits a tile
// of R pixels starting at `ow` (declared before the call; `at` is its value for a masked tile).
using TileFn = std::function<void(int64_t, TileKind, int64_t)>;
void row_tiles(K& k, const RowPlan& plan, const TileFn& tile) {
  CEmit& e = k.e;
  const int64_t RW = plan.RW, SEG = plan.SEG, NSEG = plan.NSEG;
  if (k.line) {
    const int64_t L = k.OW, LF = L / RW * RW;
    if (NSEG == 1) {
      if (LF / RW > 1) {
        e("for (int64_t ow = 0; ow < {}; ow += {}) {{", LF, RW);
        tile(RW, TileKind::Interior, -1);
        e("}}");
      } else if (LF > 0) {
        e("{{");
        e("const int64_t ow = 0;");
        tile(RW, TileKind::Interior, -1);
        e("}}");
      }
    } else {
      e("const int64_t p0 = seg * {};", SEG);
      e("const int64_t p1 = p0 + {0} < {1} ? p0 + {0} : {1};", SEG, LF);
      e("for (int64_t ow = p0; ow < p1; ow += {}) {{", RW);
      tile(RW, TileKind::Interior, -1);
      e("}}");
    }
    if (L > LF) {
      e.line(NSEG > 1 ? fmt::format("if (seg == {}) {{", NSEG - 1) : std::string("{"));
      e("const int64_t ow = {};", LF);
      tile(L - LF, TileKind::Interior, -1);
      e("}}");
    }
    return;
  }
  if (plan.masked) {
    const std::vector<RowTile>& row = plan.tiles;
    // Consecutive tiles of one width share a loop body; one that holds a masked tile checks
    // every pixel's columns at run time (at = -1).
    for (size_t i = 0; i < row.size();) {
      const RowTile& t = row[i];
      size_t j = i + 1;
      bool masked = t.masked;
      k.group = {t.start};
      while (j < row.size() && row[j].len == t.len) masked = masked || row[j].masked, k.group.push_back(row[j].start), ++j;
      if (j - i > 1) {
        e("for (int64_t ow = {}; ow < {}; ow += {}) {{", t.start, t.start + static_cast<int64_t>(j - i) * t.len, t.len);
      } else {
        e("{{");
        e("const int64_t ow = {};", t.start);
      }
      tile(t.len, masked ? TileKind::Masked : TileKind::Interior, j - i > 1 ? -1 : t.start);
      e("}}");
      i = j;
    }
    return;
  }
  if (k.lo > 0) {
    if (k.lo > 1) e("for (int64_t ow = 0; ow < {}; ++ow) {{", k.lo);
    else e("{{"), e("const int64_t ow = 0;");
    tile(1, TileKind::Edge, -1);
    e("}}");
  }
  const int64_t nt = (k.hi - k.lo) / RW, rem = (k.hi - k.lo) % RW;
  if (nt > 1) {
    e("for (int64_t ow = {}; ow < {}; ow += {}) {{", k.lo, k.lo + nt * RW, RW);
    tile(RW, TileKind::Interior, -1);
    e("}}");
  } else if (nt == 1) {
    e("{{");
    e("const int64_t ow = {};", k.lo);
    tile(RW, TileKind::Interior, -1);
    e("}}");
  }
  if (rem > 0) {
    e("{{");
    e("const int64_t ow = {};", k.lo + nt * RW);
    tile(rem, TileKind::Interior, -1);
    e("}}");
  }
  if (k.hi < k.OW) {
    if (k.OW - k.hi > 1) e("for (int64_t ow = {}; ow < {}; ++ow) {{", k.hi, k.OW);
    else e("{{"), e("const int64_t ow = {};", k.hi);
    tile(1, TileKind::Edge, -1);
    e("}}");
  }
}

// Whether input column `iw` (of X's row) exists.
bool column_inside(const K& k, int64_t iw) { return iw >= 0 && iw < k.IW; }

// Bias vectors bv0..bv{RCt-1} of the chunks [q0, q0 + RCt) (zeros without a bias; a padded
// copy where the last chunk is partly past M).
void bias_vectors(K& k, int64_t RCt, const std::string& q0) {
  CEmit& e = k.e;
  std::string d;
  if (!k.bias) {
    for (int64_t j = 0; j < RCt; ++j) d += fmt::format("{}bv{} = ({}){{0}}", j ? ", " : "", j, k.vt);
  } else if (k.g.M % k.V == 0) {
    for (int64_t j = 0; j < RCt; ++j) d += fmt::format("{}bv{} = {}", j ? ", " : "", j, k.load(fmt::format("{} + {}", e.in(2), affine(q0, k.V, j * k.V))));
  } else {
    e("float bq[{}];", RCt * k.V);
    e("for (int64_t l = 0; l < {0}; ++l) bq[l] = {1} + l < {2} ? {3}[{1} + l] : 0.0f;", RCt * k.V, affine(q0, k.V, 0), k.g.M, e.in(2));
    for (int64_t j = 0; j < RCt; ++j) d += fmt::format("{}bv{} = {}", j ? ", " : "", j, k.load(fmt::format("bq + {}", j * k.V)));
  }
  e("const {} {};", k.vt, d);
}

// body(RC) for every group of chunks but the last, body(RCL) for the last (`grp` in scope),
// or one body(RC) when the widths are equal.
template <class F>
void by_group_width(CEmit& e, int64_t NG, int64_t RC, int64_t RCL, F&& body) {
  if (RCL == RC) {
    body(RC);
    return;
  }
  e("if (grp < {}) {{", NG - 1);
  body(RC);
  e("}} else {{");
  body(RCL);
  e("}}");
}

// Regular, grouped and first-layer convs (plan_broadcast): acc[chunk j][pixel r] +=
// x[pixel r][lane i] · w[lane i][chunk j], x broadcast.

// A register tile of the broadcast kernel: RCt chunks × R pixels, of `kind`; `at` its
// position when masked and known here, else -1.
struct Tile {
  int64_t RCt, R;
  TileKind kind;
  int64_t at;
};

// The X elements of pixel r of a tile start at x(r).
using PixelX = std::function<std::string(int64_t)>;

// Input lane i (at var + i, var "" for none): the chunks' weight vectors at `ww`, then one
// multiply-add per pixel of `px` and chunk with that pixel's X element.
void lane_step(K& k, const BroadcastPlan& p, int64_t RCt, const std::string& var, int64_t i, const std::vector<int64_t>& px, const PixelX& x) {
  CEmit& e = k.e;
  e("{{");
  std::string ws;
  for (int64_t j = 0; j < RCt; ++j) ws += fmt::format("{}w{} = {}", j ? ", " : "", j, k.load(fmt::format("ww + {}", affine(var, k.b, i * k.b + j * p.coff))));
  e("const {} {};", k.vt, ws);
  // The X element is read in each multiply-add (no float locals to keep live): the
  // compiler broadcasts it once per pixel or from memory inside the FMA.
  for (int64_t r : px) {
    std::string f;
    const std::string xe = x(r) + fmt::format("[{}]", affine(var, 1, i));
    for (int64_t j = 0; j < RCt; ++j) f += fmt::format("{}a{}_{} += {} * w{};", j ? " " : "", j, r, xe, j);
    e("{}", f);
  }
  e("}}");
}

// The `lanes` input lanes of a reduction block: a loop over groups of 4, each unrolled.
// Unrolling all 16 lanes of a block let gcc 12 load the weights of later steps early and
// spill accumulators (3×3 64→64 56×56, one core: ~95 GFLOP/s unrolled by 16, ~112 by 4 or
// 2, ~110 not unrolled).
void lane_steps(K& k, const BroadcastPlan& p, int64_t RCt, int64_t lanes, const std::vector<int64_t>& px, const PixelX& x) {
  const int64_t U = 4;
  if (lanes <= U) {
    for (int64_t i = 0; i < lanes; ++i) lane_step(k, p, RCt, "", i, px, x);
    return;
  }
  const int64_t full = lanes / U * U;
  k.e("for (int64_t i0 = 0; i0 < {}; i0 += {}) {{", full, U);
  for (int64_t i = 0; i < U; ++i) lane_step(k, p, RCt, "i0", i, px, x);
  k.e("}}");
  for (int64_t i = full; i < lanes; ++i) lane_step(k, p, RCt, "", i, px, x);
}

// A masked tile at a position known here, inside the kernel row's block: the kernel columns
// with only the pixels that read inside X; consecutive columns read by the same pixels share
// one loop (3×3, pads 1: column 0 without pixel 0, then columns 1..2).
void fixed_tile_columns(K& k, const BroadcastPlan& p, const Tile& t, int64_t lanes) {
  CEmit& e = k.e;
  auto pixels = [&](int64_t kw) {
    std::vector<int64_t> px;
    for (int64_t r = 0; r < t.R; ++r)
      if (column_inside(k, (t.at + r) * k.SW - k.PW + kw * k.DW)) px.push_back(r);
    return px;
  };
  bool any = false;
  for (int64_t c0 = 0; c0 < k.KW;) {
    const std::vector<int64_t> px = pixels(c0);
    int64_t c1 = c0 + 1;
    while (c1 < k.KW && pixels(c1) == px) ++c1;
    if (!px.empty()) {
      any = true;
      e("/* kernel column{} {}{}: pixels {}..{} of the tile */", c1 - c0 > 1 ? "s" : "", c0, c1 - c0 > 1 ? fmt::format("..{}", c1 - 1) : "",
        px.front(), px.back());
      if (c1 - c0 > 1) e("for (int64_t kw = {}; kw < {}; ++kw) {{", c0, c1);
      else e("{{"), e("const int64_t kw = {};", c0);
      e("const float* restrict ww = wk + kw * {};", p.WT);
      e("const float* restrict xw = xk + {};", affine("kw", k.DW * p.ps, 0));
      lane_steps(k, p, t.RCt, lanes, px, [&](int64_t r) { return fmt::format("(xw + {})", ((t.at + r) * k.SW - k.PW) * p.ps); });
      e("}}");
    }
    c0 = c1;
  }
  // A tile in a right or left pad at least as wide as the kernel reads nothing of X.
  if (!any) e("(void)xk; (void)wk;  /* every kernel column of this tile lies in the padding */");
}

// Masked tiles at run-time positions (a loop over tiles of one width, one of them or more at
// an edge), inside the kernel row's block: one loop over the kernel columns with a pointer per
// pixel that may read padding, to zeros when its column is outside X; one loop body for the
// whole group.
void masked_tile_columns(K& k, const BroadcastPlan& p, const Tile& t, int64_t lanes) {
  CEmit& e = k.e;
  open_loop(e, "kw", k.KW);
  e("const float* restrict ww = wk + kw * {};", p.WT);
  std::vector<int64_t> px;
  std::vector<std::string> xp(static_cast<size_t>(t.R));
  bool zeros = false;
  for (int64_t r = 0; r < t.R; ++r) {
    px.push_back(r);
    const std::string iw = affine("ow", k.SW, r * k.SW - k.PW) + " + " + affine("kw", k.DW, 0);
    bool checked = false;  // whether the pixel is at an edge in some tile of the group
    for (int64_t s0 : k.group) checked = checked || s0 + r < k.lo || s0 + r >= k.hi;
    if (!checked) {
      xp[static_cast<size_t>(r)] = fmt::format("(xk + ({}) * {})", iw, p.ps);
      continue;
    }
    if (!zeros) e.local("static const float zx[{}] = {{0}};  /* what a pixel reads in the padding */", p.bl);
    zeros = true;
    e("const int64_t iw{} = {};", r, iw);
    e("const float* restrict xp{0} = (uint64_t)iw{0} < {1} ? xk + iw{0} * {2} : zx;", r, k.IW, p.ps);
    xp[static_cast<size_t>(r)] = fmt::format("xp{}", r);
  }
  lane_steps(k, p, t.RCt, lanes, px, [&](int64_t r) { return xp[static_cast<size_t>(r)]; });
  e("}}");  // kw
}

// One reduction block of `lanes` lanes at xn/wo + cb, for tile t; kernel rows kh.
void reduce_block(K& k, const BroadcastPlan& p, const Tile& t, int64_t lanes, const std::pair<std::string, std::string>& kh) {
  CEmit& e = k.e;
  e("const float* restrict xc = xn + cb * {};", p.XBS);
  e("const float* restrict wc = wo + cb * {};", p.WB);
  open_kernel_rows(k, kh);
  e("const float* restrict xk = xc + ({}) * {};", input_row(k), k.IW * p.ps);
  e("const float* restrict wk = wc + kh * {};", k.KW * p.WT);
  if (t.kind == TileKind::Masked && t.at >= 0) {
    fixed_tile_columns(k, p, t, lanes);
  } else if (t.kind == TileKind::Masked) {
    masked_tile_columns(k, p, t, lanes);
  } else {
    if (t.kind == TileKind::Edge) e("for (int64_t kw = kw0; kw < kw1; ++kw) {{");
    else open_loop(e, "kw", k.KW);
    const std::string kwoff = k.DW == 1 ? " + kw" : fmt::format(" + kw * {}", k.DW);
    e("const float* restrict xw = xk + ({}{}) * {};", affine("ow", k.SW, -k.PW), k.KW > 1 || t.kind == TileKind::Edge ? kwoff : "", p.ps);
    e("const float* restrict ww = wk + kw * {};", p.WT);
    std::vector<int64_t> px;
    for (int64_t r = 0; r < t.R; ++r) px.push_back(r);
    lane_steps(k, p, t.RCt, lanes, px, [&](int64_t r) { return r == 0 ? std::string("xw") : fmt::format("(xw + {})", r * k.SW * p.ps); });
    e("}}");  // kw
  }
  e("}}");  // kh
}

// A tile of the row: its accumulators (the bias, or with steps Y after the first step), the
// reduction over the blocks (of this step), the stores and the epilogue.
void broadcast_tile(K& k, const BroadcastPlan& p, const Tile& t, const std::pair<std::string, std::string>& kh) {
  CEmit& e = k.e;
  e("{{");
  for (int64_t j = 0; j < t.RCt; ++j) {
    std::string d;
    for (int64_t r = 0; r < t.R; ++r) {
      const std::string init = p.steps ? fmt::format("cb0 == 0 ? bv{} : ({}){}", j, k.vt, k.load(fmt::format("yr + {}", affine("ow", k.b, r * k.b + j * p.ycoff))))
                                       : fmt::format("bv{}", j);
      d += fmt::format("{}a{}_{} = {}", r ? ", " : "", j, r, init);
    }
    e("{} {};", k.vt, d);
  }
  if (t.kind == TileKind::Edge) edge_taps(k);
  if (p.NBF > 0) {
    if (p.steps) e("for (int64_t cb = cb0; cb < (cb0 + {0} < {1} ? cb0 + {0} : {1}); ++cb) {{", p.NBB, p.NBF);
    else open_loop(e, "cb", p.NBF);
    reduce_block(k, p, t, p.bl, kh);
    e("}}");
  }
  if (p.NBF < p.NB) {
    if (p.steps) e("if (cb0 + {} >= {}) {{", p.NBB, p.NB);
    else e("{{");
    e("const int64_t cb = {};", p.NB - 1);
    reduce_block(k, p, t, p.nl, kh);
    e("}}");
  }
  // With steps the epilogue goes on the last step's stores only.
  store_tile(k, t.RCt, t.R, "q0", p.ycoff, [](int64_t j, int64_t r) { return fmt::format("a{}_{}", j, r); },
             p.steps ? fmt::format("cb0 + {} >= {}", p.NBB, p.NB) : "");
  e("}}");
}

// The plan as a comment at the top of the function.
void broadcast_comment(K& k, const BroadcastPlan& p) {
  CEmit& e = k.e;
  const char* kind = k.first ? "first-layer (X plain NCHW)" : k.g.G > 1 ? "grouped" : "regular";
  e("/* NCHW{}c {} convolution, register tile {} chunk{} of {} lanes x {} pixels{} ({} accumulators of {});", k.b, kind, p.RC,
    p.RC > 1 ? "s" : "", k.V, p.row.RW, p.RCL != p.RC ? fmt::format(" (last tile of chunks: {})", p.RCL) : "", p.RC * p.row.RW, k.vt);
  e(" * per input lane: one broadcast X element x one W vector per chunk, input lanes unrolled{}.", p.bl > 4 ? " by 4" : "");
  if (k.line) e(" * 1x1: the {} pixels as one row, tasks (image, chunks, segment of {} pixels){}. */", k.OW, p.row.SEG, k.epi ? "; epilogue on each tile" : "");
  else e(" * Tasks (image, chunks, output row); rows: {} left edge, {} interior, {} right edge pixels{}. */", k.lo, k.hi - k.lo, k.OW - k.hi,
         k.epi ? "; epilogue on each tile" : "");
  if (p.steps)
    e("/* Reduction in steps of {} of the {} input blocks (each step's weights stay in L{} across {});"
      " tiles accumulate into Y. */", p.NBB, p.NB, p.for_l1 ? 1 : 2,
      k.line ? "the task's segment of the line" : fmt::format("a block of {} rows", p.RB));
  if (p.rows_outer)
    e("/* Tasks in the order (image, {}, chunks): each thread reads its share of X and every weight. */",
      k.line ? "segment" : p.steps ? "block of rows" : "output row");
}

void emit_broadcast_kernel(K& k) {
  CEmit& e = k.e;
  const ConvGeom& g = k.g;
  const BroadcastPlan p = plan_broadcast(k, e.target);
  e.plan = describe(p);
  broadcast_comment(k, p);
  open_tasks(e, p.tasks, p.parallel);
  e("const int64_t q0 = {};", affine("grp", p.RC, 0));
  if (k.first) e("const float* restrict xn = {} + n * {};", k.X, g.C * p.XBS);
  else if (g.G == 1) e("const float* restrict xn = {} + n * {};", k.X, k.CB * p.XBS);
  else e("const float* restrict xn = {} + (n * {} + q0 * {} / {} * {}) * {};", k.X, k.CB, k.V, g.MG, p.NB, p.XBS);
  e("const float* restrict wo = {};", k.with_lane(fmt::format("{} + {} * {}", k.W, k.block_of("q0"), p.WO), "q0"));
  auto row_pointer = [&] {
    const std::string image_block = sum({term("n", k.MB), k.block_of("q0")});
    e("float* restrict yr = {};", k.with_lane(fmt::format("{} + {}", k.Y, k.line ? fmt::format("({}) * {}", image_block, k.OH * k.OW * k.b)
                                                                                  : fmt::format("(({}) * {} + oh) * {}", image_block, k.OH, k.OW * k.b)),
                                              "q0"));
  };
  if (!p.steps) row_pointer();
  auto row = [&](int64_t RCt) {
    bias_vectors(k, RCt, "q0");
    const auto kh = kernel_rows(k);
    row_tiles(k, p.row, [&](int64_t R, TileKind kind, int64_t at) { broadcast_tile(k, p, {RCt, R, kind, at}, kh); });
  };
  // With steps: per task, the steps outermost, then the rows of the task's block.
  by_group_width(e, p.NG, p.RC, p.RCL, [&](int64_t RCt) {
    if (!p.steps) {
      row(RCt);
      return;
    }
    e("for (int64_t cb0 = 0; cb0 < {}; cb0 += {}) {{", p.NB, p.NBB);
    if (p.NRB > 1) e("for (int64_t oh = rb * {0}; oh < (rb * {0} + {0} < {1} ? rb * {0} + {0} : {1}); ++oh) {{", p.RB, k.OH);
    else e("for (int64_t oh = 0; oh < {}; ++oh) {{", k.OH);
    row_pointer();
    row(RCt);
    e("}}");
    e("}}");
  });
  for (size_t t = 0; t < p.tasks.size(); ++t) e("}}");
  zero_padding_chunks(k);
}

// Winograd F(2×2, 3×3) (Lavin & Gray, "Fast Algorithms for Convolutional Neural Networks"):
// each 2×2 block of output pixels ("tile") is A^T [Σ_c U_c ⊙ V_c] A with V_c = B^T d_c B the
// transform of the 4×4 input patch of channel c and U = G g G^T the filter's, transformed at
// compile time (Layout::winograd). 16 multiplies per tile and channel pair instead of 36.
// Per task, a block of TB tiles (raster order over the image's tiles):
//  1. input transform of the block into vb[16][TB][Cp] (Cp: the input channels padded to
//     whole blocks), lanes are channels; taps in the padding read zeros;
//  2. per group of RC output chunks and per position p: vb[p] (TB × C) times U[p] (C × RC·V),
//     register tiles of up to RT tiles × RC chunks (one broadcast × one U vector per FMA, like the
//     direct kernel), into mb[16][TB][RC·V]; U[p]'s slice stays in L1 across the block;
//  3. output transform, bias and the fused epilogue on the way to Y (store_tile).
// Chosen by conv_winograd (conv_nchwc_plan.cc) for 3×3 stride-1 convs whose transformed
// filter stays in half of L2 or whose batch has at least 40 tiles.
// 1. The input transform of the task's block of tiles into vb.
void winograd_input_transform(K& k, const WinogradPlan& wp) {
  CEmit& e = k.e;
  const int64_t b = k.b, Cp = k.CB * b, TW = ceil_div(k.OW, 2);
  e("for (int64_t t = 0; t < nt; ++t) {{");
  e("const int64_t th = (t0 + t) / {}, tw = (t0 + t) % {};", TW, TW);
  e("const int64_t ih0 = 2 * th - {}, iw0 = 2 * tw - {};", k.PH, k.PW);
  e("const int inside = ih0 >= 0 && ih0 + 3 < {} && iw0 >= 0 && iw0 + 3 < {};", k.IH, k.IW);
  e("for (int64_t cb = 0; cb < {}; ++cb) {{", k.CB);
  e("const float* restrict xc = xn + cb * {};", k.IH * k.IW * b);
  e("{} d[4][4];", k.vt);
  e("if (inside) {{");
  e("for (int r = 0; r < 4; ++r)");
  e("  for (int c = 0; c < 4; ++c) d[r][c] = {};", k.load(fmt::format("xc + ((ih0 + r) * {} + iw0 + c) * {}", k.IW, b)));
  e("}} else {{");
  e("for (int r = 0; r < 4; ++r)");
  e("  for (int c = 0; c < 4; ++c)");
  e("    d[r][c] = (uint64_t)(ih0 + r) < {} && (uint64_t)(iw0 + c) < {} ? ({}){} : ({}){{0}};", k.IH, k.IW, k.vt,
    k.load(fmt::format("xc + ((ih0 + r) * {} + iw0 + c) * {}", k.IW, b)), k.vt);
  e("}}");
  // B^T d B: rows, then columns.
  e("{} s[4][4];", k.vt);
  e("for (int c = 0; c < 4; ++c) {{");
  e("s[0][c] = d[0][c] - d[2][c]; s[1][c] = d[1][c] + d[2][c]; s[2][c] = d[2][c] - d[1][c]; s[3][c] = d[1][c] - d[3][c];");
  e("}}");
  e("float* restrict vt = vb + t * {} + cb * {};", Cp, b);
  e("for (int r = 0; r < 4; ++r) {{");
  e("*({}*)(vt + (r * 4 + 0) * {}) = s[r][0] - s[r][2];", k.vtu, wp.TB * Cp);
  e("*({}*)(vt + (r * 4 + 1) * {}) = s[r][1] + s[r][2];", k.vtu, wp.TB * Cp);
  e("*({}*)(vt + (r * 4 + 2) * {}) = s[r][2] - s[r][1];", k.vtu, wp.TB * Cp);
  e("*({}*)(vt + (r * 4 + 3) * {}) = s[r][1] - s[r][3];", k.vtu, wp.TB * Cp);
  e("}}");
  e("}}");  // cb
  e("}}");  // t
}

// 2. One product at position p: a register tile of RTs tiles from tile r0 of the block × RCt
// chunks, the reduction over C in steps of 4 channels (unrolled) and a remainder, into mb.
void winograd_product(K& k, const WinogradPlan& wp, int64_t RCt, int64_t RTs) {
  CEmit& e = k.e;
  const int64_t C = k.g.C, V = k.V, Cp = k.CB * k.b;
  e("const float* restrict vr = vb + (p * {} + r0) * {};", wp.TB, Cp);
  for (int64_t j = 0; j < RCt; ++j) {
    std::string d;
    for (int64_t r = 0; r < RTs; ++r) d += fmt::format("{}a{}_{} = ({}){{0}}", r ? ", " : "", j, r, k.vt);
    e("{} {};", k.vt, d);
  }
  auto step = [&](const std::string& ic) {
    e("{{");
    std::string ws;
    for (int64_t j = 0; j < RCt; ++j) ws += fmt::format("{}w{} = {}", j ? ", " : "", j, k.load(fmt::format("up + {} * {} + ({}) * {}", j, C * V, ic, V)));
    e("const {} {};", k.vt, ws);
    for (int64_t r = 0; r < RTs; ++r) {
      std::string f;
      for (int64_t j = 0; j < RCt; ++j) f += fmt::format("{}a{}_{} += vr[{} + ({})] * w{};", j ? " " : "", j, r, r * Cp, ic, j);
      e("{}", f);
    }
    e("}}");
  };
  const int64_t C4 = C / 4 * 4;
  if (C4 > 0) {
    e("for (int64_t ic = 0; ic < {}; ic += 4) {{", C4);
    for (int64_t u = 0; u < 4; ++u) step(affine("ic", 1, u));
    e("}}");
  }
  if (C4 < C) {
    e("for (int64_t ic = {}; ic < {}; ++ic) {{", C4, C);
    step("ic");
    e("}}");
  }
  e("float* restrict mr = mb + (p * {} + r0) * {};", wp.TB, wp.RC * V);
  for (int64_t r = 0; r < RTs; ++r) {
    std::string st;
    for (int64_t j = 0; j < RCt; ++j) st += fmt::format("{}*({}*)(mr + {}) = a{}_{};", j ? " " : "", k.vtu, r * wp.RC * V + j * V, j, r);
    e("{}", st);
  }
}

// 2. The products of the 16 positions. A block of n tiles goes in ceil(n / RT) register
// tiles of nearly equal size: no tile computes padding. Every block has TB tiles but the
// last, which may have fewer.
void winograd_products(K& k, const WinogradPlan& wp, int64_t RCt) {
  CEmit& e = k.e;
  auto block = [&](int64_t n) {
    const int64_t q = ceil_div(n, wp.RT), sz = n / q, big = n % q;
    e("int64_t r0 = 0;");
    for (const auto& [RTs, count] : {std::pair{sz + 1, big}, std::pair{sz, q - big}}) {
      if (count == 0) continue;
      if (count > 1) e("for (int64_t i = 0; i < {}; ++i, r0 += {}) {{", count, RTs);
      else e("{{");
      winograd_product(k, wp, RCt, RTs);
      if (count == 1) e("r0 += {};", RTs);
      e("}}");
    }
  };
  e("for (int64_t p = 0; p < 16; ++p) {{");
  e("const float* restrict up = {} + (p * {} + q0) * {};", k.W, k.MB, k.g.C * k.V);
  const int64_t TT = ceil_div(k.OH, 2) * ceil_div(k.OW, 2), TL = TT - (wp.NTB - 1) * wp.TB;
  if (TL == wp.TB) {
    block(wp.TB);
  } else {
    e("if (nt == {}) {{", wp.TB);
    block(wp.TB);
    e("}} else {{");
    block(TL);
    e("}}");
  }
  e("}}");  // p
}

// 3. The output transform A^T m A, the bias, and the stores with the epilogue.
void winograd_output_transform(K& k, const WinogradPlan& wp, int64_t RCt) {
  CEmit& e = k.e;
  const int64_t V = k.V, TW = ceil_div(k.OW, 2);
  bias_vectors(k, RCt, "q0");
  e("for (int64_t t = 0; t < nt; ++t) {{");
  e("const int64_t th = (t0 + t) / {}, tw = (t0 + t) % {};", TW, TW);
  e("const int64_t ow = 2 * tw;");
  for (int64_t j = 0; j < RCt; ++j) {
    e("{{");
    e("const float* restrict mt = mb + t * {} + {};", wp.RC * V, j * V);
    e("{} m[16];", k.vt);
    e("for (int p = 0; p < 16; ++p) m[p] = {};", k.load(fmt::format("mt + p * {}", wp.TB * wp.RC * V)));
    e("{} z[2][4];", k.vt);
    e("for (int c = 0; c < 4; ++c) {{");
    e("z[0][c] = m[c] + m[4 + c] + m[8 + c]; z[1][c] = m[4 + c] - m[8 + c] - m[12 + c];");
    e("}}");
    for (int64_t i = 0; i < 2; ++i) {
      e("{{");
      e("const int64_t oh = 2 * th + {};", i);
      if (i == 1 && k.OH % 2) e("if (oh < {}) {{", k.OH);
      else e("{{");
      e("const {0} o0 = z[{1}][0] + z[{1}][1] + z[{1}][2] + bv{2}, o1 = z[{1}][1] - z[{1}][2] - z[{1}][3] + bv{2};", k.vt, i, j);
      e("float* restrict yr = {} + ((n * {} + q0 + {}) * {} + oh) * {};", k.Y, k.MB, j, k.OH, k.OW * k.b);
      const std::string qe = fmt::format("(q0 + {})", j);
      auto acc = [](int64_t, int64_t r) { return fmt::format("o{}", r); };
      if (k.OW % 2) {
        e("if (ow + 1 < {}) {{", k.OW);
        store_tile(k, 1, 2, qe, 0, acc, "");
        e("}} else {{");
        store_tile(k, 1, 1, qe, 0, acc, "");
        e("(void)o1;");
        e("}}");
      } else {
        store_tile(k, 1, 2, qe, 0, acc, "");
      }
      e("}}");
      e("}}");
    }
    e("}}");
  }
  e("}}");  // t
}

void emit_winograd_kernel(K& k) {
  CEmit& e = k.e;
  const ConvGeom& g = k.g;
  const int64_t b = k.b, V = k.V, Cp = k.CB * b;
  const int64_t TH = ceil_div(k.OH, 2), TW = ceil_div(k.OW, 2), TT = TH * TW;
  const WinogradPlan wp = winograd_plan(e.target, g, b, V);
  e.plan = describe(wp);
  const int64_t RC = wp.RC, NG = ceil_div(k.MB, RC), RCL = k.MB - (NG - 1) * RC;
  e.variant += " winograd";
  e("/* NCHW{}c convolution as Winograd F(2x2,3x3): {} x {} tiles of 2x2 output pixels, {} per task; per task the", b, TH, TW, wp.TB);
  e(" * input transform into vb[16][{}][{}], per position a product of register tiles of up to {} tiles x {} chunk{} of {} lanes", wp.TB, Cp, wp.RT,
    RC, RC > 1 ? "s" : "", V);
  e(" * ({} accumulators of {}) into mb[16][{}][{}], then the output transform{}.{}", wp.RT * RC, k.vt, wp.TB, RC * V,
    k.epi ? " (epilogue on each tile)" : "", wp.NOG > 1 ? "" : " */");
  if (wp.NOG > 1) e(" * Tasks (image, part of {} group{} of {} chunks, block of tiles). */", wp.GPO, wp.GPO > 1 ? "s" : "", RC);
  open_tasks(e, wp.tasks, wp.parallel);
  e("float vb[{}];", 16 * wp.TB * Cp);
  e("float mb[{}];", 16 * wp.TB * RC * V);
  e("const int64_t t0 = tb * {};", wp.TB);
  e("const int64_t nt = t0 + {0} < {1} ? {0} : {1} - t0;", wp.TB, TT);
  e("const float* restrict xn = {} + n * {};", k.X, k.CB * k.IH * k.IW * b);
  winograd_input_transform(k, wp);
  if (wp.NOG > 1) e("for (int64_t grp = og * {0}; grp < (og * {0} + {0} < {1} ? og * {0} + {0} : {1}); ++grp) {{", wp.GPO, NG);
  else e("for (int64_t grp = 0; grp < {}; ++grp) {{", NG);
  e("const int64_t q0 = grp * {};", RC);
  by_group_width(e, NG, RC, RCL, [&](int64_t RCt) {
    winograd_products(k, wp, RCt);
    winograd_output_transform(k, wp, RCt);
  });
  e("}}");  // grp
  e("}}");  // tb
  if (wp.NOG > 1) e("}}");  // og
  e("}}");  // n
}

// Depthwise convs: acc[pixel r][lane] += x[pixel r][lane] · w[lane], per chunk of V lanes.
void emit_depthwise_kernel(K& k) {
  CEmit& e = k.e;
  const int64_t b = k.b, V = k.V, KS = k.KH * k.KW;
  const DepthwisePlan p = plan_depthwise(k, e.target);
  e.plan = describe(p);
  const int64_t RW = p.row.RW, SEG = p.row.SEG;
  e("/* NCHW{}c depthwise convolution, register tile {} pixels of one chunk of {} lanes ({}); per kernel row the {} weight", b, RW,
    V, k.vt, k.KW);
  e(" * vectors in registers and each input column loaded once for the pixels that read it.");
  if (k.line) e(" * 1x1: the {} pixels as one row, tasks (image, chunk, segment of {} pixels){}. */", k.OW, SEG, k.epi ? "; epilogue on each tile" : "");
  else e(" * Tasks (image, chunk, output row); rows: {} left edge, {} interior, {} right edge pixels{}. */", k.lo, k.hi - k.lo, k.OW - k.hi,
         k.epi ? "; epilogue on each tile" : "");
  open_tasks(e, p.tasks, p.parallel);
  e("const float* restrict xq = {};", k.with_lane(fmt::format("{} + ({}) * {}", k.X, sum({term("n", k.CB), k.block_of("q")}), k.IH * k.IW * b), "q"));
  e("const float* restrict wq = {};", k.with_lane(fmt::format("{} + {} * {}", k.W, k.block_of("q"), KS * b), "q"));
  e("float* restrict yr = {};",
    k.with_lane(fmt::format("{} + {}", k.Y, k.line ? fmt::format("({}) * {}", sum({term("n", k.MB), k.block_of("q")}), k.OH * k.OW * b)
                                                    : fmt::format("(({}) * {} + oh) * {}", sum({term("n", k.MB), k.block_of("q")}), k.OH, k.OW * b)),
                "q"));
  bias_vectors(k, 1, "q");
  const auto kh = kernel_rows(k);
  row_tiles(k, p.row, [&](int64_t Rt, TileKind kind, int64_t at) {
    const bool edge = kind == TileKind::Edge;
    e("{{");
    std::string d;
    for (int64_t r = 0; r < Rt; ++r) d += fmt::format("{}a{} = bv0", r ? ", " : "", r);
    e("{} {};", k.vt, d);
    if (edge) edge_taps(k);
    open_kernel_rows(k, kh);
    e("const float* restrict xk = xq + ({}) * {};", input_row(k), k.IW * b);
    e("const float* restrict wk = wq + kh * {};", k.KW * b);
    if (edge) {
      e("for (int64_t kw = kw0; kw < kw1; ++kw)");
      e("  a0 += {} * {};", k.load(fmt::format("xk + (iw0 + {}) * {}", affine("kw", k.DW, 0), b)), k.load(fmt::format("wk + kw * {}", b)));
    } else {
      // Each input column the tile reads, with the (pixel, tap) pairs that use it; a masked
      // tile leaves out the columns in the padding (and the weights only they would use).
      std::vector<std::string> cols_code;
      std::vector<bool> used(static_cast<size_t>(k.KW), false);
      const int64_t cols = (Rt - 1) * k.SW + (k.KW - 1) * k.DW + 1;
      for (int64_t c = 0; c < cols; ++c) {
        if (kind == TileKind::Masked && at >= 0 && !column_inside(k, at * k.SW - k.PW + c)) continue;
        // At a run-time position, a column that is in the padding for some tile of the group
        // reads zeros there.
        bool checked = false;
        if (kind == TileKind::Masked && at < 0)
          for (int64_t s0 : k.group) checked = checked || !column_inside(k, s0 * k.SW - k.PW + c);
        std::string f;
        for (int64_t r = 0; r < Rt; ++r) {
          const int64_t t = c - r * k.SW;
          if (t < 0 || t % k.DW || t / k.DW >= k.KW) continue;
          f += fmt::format(" a{} += xv * w{};", r, t / k.DW);
          used[static_cast<size_t>(t / k.DW)] = true;
        }
        if (f.empty()) continue;
        const bool fixed = kind == TileKind::Masked && at >= 0;
        const std::string x = fixed ? fmt::format("xk + {}", (at * k.SW - k.PW + c) * b) : fmt::format("xk + ({}) * {}", affine("ow", k.SW, c - k.PW), b);
        if (checked)
          cols_code.push_back(fmt::format("{{ const {0} xv = (uint64_t)({1}) < {2} ? ({0}){3} : ({0}){{0}};{4} }}", k.vt, affine("ow", k.SW, c - k.PW),
                                          k.IW, k.load(x), f));
        else
          cols_code.push_back(fmt::format("{{ const {} xv = {};{} }}", k.vt, k.load(x), f));
      }
      std::string ws;
      for (int64_t t = 0; t < k.KW; ++t)
        if (used[static_cast<size_t>(t)]) ws += fmt::format("{}w{} = {}", ws.empty() ? "" : ", ", t, k.load(fmt::format("wk + {}", t * b)));
      if (!ws.empty()) e("const {} {};", k.vt, ws);
      else e("(void)xk; (void)wk;");  // a masked tile wholly in a pad as wide as the kernel
      for (const std::string& c : cols_code) e.line(c);
    }
    e("}}");  // kh
    store_tile(k, 1, Rt, "q", 0, [](int64_t, int64_t r) { return fmt::format("a{}", r); }, "");
    e("}}");
  });
  for (size_t t = 0; t < p.tasks.size(); ++t) e("}}");
  zero_padding_chunks(k);
}

}  // namespace

void emit_conv_nchwc(CEmit& e) {
  const int64_t b = e.out_layout(0).block;
  const ConvBlocked v = conv_blocking(e.node, b, e.in_layout(0).is_plain());
  ONNXC_ASSERT(v.kind != ConvBlocking::None, e.node.where() + ": no NCHWc variant at block " + std::to_string(b));
  ONNXC_ASSERT(conv_geom(e.node).rank() == 2, "NCHWc conv of rank " + std::to_string(conv_geom(e.node).rank()));
  K k(e, nchwc_conv(e.node, b, v.kind == ConvBlocking::FirstLayer, v.kind == ConvBlocking::Depthwise, e.target));
  e.variant = k.first ? "first-layer" : k.dw ? "depthwise" : v.kind == ConvBlocking::Grouped ? "grouped" : "regular";
  ONNXC_ASSERT(k.first || e.in_layout(0) == Layout::nchwc(b), "NCHWc conv: X is stored as " + e.node.in(0)->type_str());
  const bool wino = e.in_layout(1) == Layout::winograd(b);
  ONNXC_ASSERT(e.in_layout(1) == Layout::filter(b, v.filter_in_block) || (wino && v.kind == ConvBlocking::Regular),
               "NCHWc conv: W is stored as " + e.node.in(1)->type_str());
  if (k.line) e.variant += " line";
  k.vt = vector_type(k.V), k.vtu = k.vt + "u";
  k.X = e.in(0), k.W = e.in(1), k.Y = e.out(0);
  if (wino) {
    ONNXC_ASSERT(k.CPB == 1 && !k.line && k.KH == 3 && k.KW == 3 && k.SH == 1 && k.SW == 1 && k.DH == 1 && k.DW == 1,
                 e.node.where() + ": Winograd filter on a conv it does not fit");
    emit_winograd_kernel(k);
  } else if (k.dw) {
    emit_depthwise_kernel(k);
  } else {
    emit_broadcast_kernel(k);
  }
  if (k.epi) e.epilogue_done = true;
}

}  // namespace onnxc
