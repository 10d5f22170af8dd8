// codegen/c/kernels/conv_nchwc.cc — the C kernel of 2-D convolutions on NCHW[b]c
// activations (ir/layout.h), for the variants of conv_blocking (ir/ops/conv.h): regular,
// depthwise, first-layer (plain X) and whole-block grouped convs, with W repacked at
// compile time by the layout pass.
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

// What the emitters share about one conv node.
struct K {
  CEmit& e;
  const ConvGeom& g;
  int64_t b = 0, V = 0, CPB = 0, MB = 0, CB = 0, QR = 0, QT = 0;
  bool first = false, dw = false;
  // Spatial geometry; with `line` (1×1, unit strides, no pads) H×W is one row of OH·OW.
  int64_t IH = 0, IW = 0, OH = 0, OW = 0, KH = 0, KW = 0, SH = 0, SW = 0, DH = 0, DW = 0, PH = 0, PW = 0;
  bool line = false;
  bool masked = false;  // rows cut by masked_row (edges in masked tiles), set with the tile width
  std::vector<int64_t> group;  // a masked tile at a run-time position: the positions it takes
  int64_t OWr = 0;  // the real output width (line: to index the extra inputs)
  int64_t lo = 0, hi = 0;  // interior of a row: pixels whose KW taps are all inside X
  std::string vt, vtu, X, W, Y;
  bool bias = false, epi = false;

  explicit K(CEmit& em) : e(em), g(conv_geom(em.node)) {}

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

// A row cut into tiles: [start, start + len), masked where a pixel lies outside [lo, hi).
struct RowTile {
  int64_t start, len;
  bool masked;
};

// Tiles of RW pixels over a row of OW, the last one shorter; empty when more than 8 would be
// masked (the edges are then one-pixel run-time tiles, TileKind::Edge). One width and one
// remainder keep the loop bodies, and the C compiler's time, to two per row.
std::vector<RowTile> masked_row(const K& k, int64_t RW) {
  std::vector<RowTile> t;
  int64_t masked = 0;
  for (int64_t s = 0; s < k.OW; s += RW) {
    const int64_t len = std::min(RW, k.OW - s);
    const bool m = s < k.lo || s + len > k.hi;
    masked += m;
    t.push_back({s, len, m});
  }
  if (masked > 8) t.clear();
  return t;
}

// The tiles of one row (or of the task's segment of the line): tile(R, kind, at) emits a tile
// of R pixels starting at `ow` (declared before the call; `at` is its value for a masked tile).
using TileFn = std::function<void(int64_t, TileKind, int64_t)>;
void row_tiles(K& k, int64_t RW, int64_t SEG, int64_t NSEG, const TileFn& tile) {
  CEmit& e = k.e;
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
  if (k.masked) {
    const std::vector<RowTile> row = masked_row(k, RW);
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

// Segments of the line (1×1 convs): SEG pixels (a multiple of RW) per task, fewer when the
// other task dims leave the threads idle. With several threads the tiles per segment are then
// taken between half and one and a half times that, as the count whose tasks (segment × the
// other dims, statically split in equal runs) give the busiest thread the fewest tiles, in either
// task order: a short last segment otherwise lands on one thread (nfnet_f0's 196-pixel 1×1 convs
// went 60+60 pixels to one thread and 60+16 to the other).
void line_segments(const K& k, int64_t RW, int64_t other_tasks, int64_t* SEG, int64_t* NSEG) {
  int64_t tps = std::max<int64_t>(1, 64 / RW);
  const int64_t tiles = ceil_div(k.OW, RW), threads = std::max(1, k.e.target.threads);
  tps = std::min(tps, tiles);
  while (tps > 1 && other_tasks * ceil_div(tiles, tps) < 4 * threads) tps /= 2;
  // The tiles of the busiest thread when segments hold `per` tiles (the last one the rest,
  // `per - short_by`). Thread t runs tasks [a, b); task i is segment i / other_tasks (segment
  // major) or i % n: every task holds `per` tiles but those of the last segment. Counted in
  // closed form, so the time is O(threads) whatever the line's length.
  auto busiest = [&](int64_t per) {
    const int64_t n = ceil_div(tiles, per), T = n * other_tasks, run = ceil_div(T, threads);
    const int64_t short_by = n * per - tiles;
    int64_t worst = 0;
    for (int segment_major = 0; segment_major < 2; ++segment_major)
      for (int64_t t = 0; t < threads; ++t) {
        const int64_t a = std::min(T, t * run), b = std::min(T, (t + 1) * run);
        const int64_t last = segment_major ? std::max<int64_t>(0, b - std::max(a, (n - 1) * other_tasks))
                                           : b / n - a / n;  // tasks i in [a, b) with i % n == n - 1
        worst = std::max(worst, (b - a) * per - last * short_by);
      }
    return worst;
  };
  int64_t per = tps;
  if (threads > 1) {
    const int64_t tasks = other_tasks * ceil_div(tiles, tps);
    int64_t best = busiest(tps);
    for (int64_t p = std::max<int64_t>(1, tps / 2); p <= std::min(tiles, tps + tps / 2); ++p) {
      if (p == tps || other_tasks * ceil_div(tiles, p) < std::min(tasks, 4 * threads)) continue;
      const int64_t b = busiest(p);
      if (b < best || (b == best && p > per && per != tps)) best = b, per = p;
    }
  }
  *SEG = per * RW;
  *NSEG = ceil_div(k.OW, *SEG);
}

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

// Vector registers a tile may fill. A generic-vector target is built by a compiler for
// whatever machine (-O3, no -march): its long vectors take several registers there, so its
// tiles hold at most a 512-bit register file's worth of floats (32 x 16), fewer pixels.
int64_t tile_registers(const K& k) {
  const Target& t = k.e.target;
  int64_t R = std::max(8, t.vector_registers);
  if (t.arch == "generic") R = std::max<int64_t>(4, std::min<int64_t>(R, 32 * 16 / k.V));
  return R;
}

// The register tile of the broadcast kernel: RC chunks × RW pixels. At most 3/4 of the
// registers hold accumulators: the rest holds the RC weight vectors and the broadcasts of
// the next steps, which gcc loads early across the unrolled input lanes (4 × 7 = 28 of 32
// made gcc 12 spill accumulators to the stack: ~85% of the FMA peak on a 3×3 64→64 56×56
// layer against ~95% for 4 × 6). On average over the row and the groups of chunks: first the
// most accumulators per tile (up to 18), then the most pixels per tile (up to 5.5), then fewer
// loads per FMA, then no remainder tile of chunks. With masked edges a row of OW pixels in n
// tiles takes tiles of ceil(OW / n): a 7-wide row takes 3 × 7 in one tile rather than 4 × 6
// and 4 × 1; 8 chunks go in tiles of 4, not 6 and 2.
void pick_tile(const K& k, int64_t group_chunks, int64_t* RC, int64_t* RW) {
  const int64_t R = tile_registers(k);
  const int64_t sat = R * 3 / 4;
  double best = -1;
  for (int64_t rc = 1; rc <= std::min<int64_t>(k.QR, 8); ++rc) {
    if (k.CPB > 1 && k.CPB % rc) continue;
    if (group_chunks && group_chunks % rc) continue;
    const int64_t cap = std::min<int64_t>(sat / rc, 16);
    // Chunks per tile on average over the groups (the last one may be short).
    const double chunks = static_cast<double>(k.QR) / static_cast<double>(ceil_div(k.QR, rc));
    for (int64_t w = 1; w <= cap; ++w) {
      double px;  // pixels per tile on average over the row
      int64_t rw;
      const int64_t n = ceil_div(k.OW, w);  // tiles of a masked row
      if (!k.line && !masked_row(k, ceil_div(k.OW, n)).empty()) {
        rw = ceil_div(k.OW, n);
        px = static_cast<double>(k.OW) / static_cast<double>(ceil_div(k.OW, rw));
      } else {
        if (w < cap) continue;  // interior tiles of the widest size, one-pixel edges
        rw = std::min<int64_t>(std::max<int64_t>(k.hi - k.lo, 1), w);
        px = static_cast<double>(rw);
      }
      // Up to 18 accumulators hide the FMA latency and the loads; up to 5.5 pixels per tile
      // (on average over the row) reuse each weight vector read from L2 well enough. On
      // resnet50's 3×3 convs at one thread, 14×14 rows: 8 × 3 at 76% of peak, 4 × 5 at 82%,
      // 3 × 7 at 87%; 28- and 56-wide rows: 4 × 6, 3 × 7 and 2 × 12 within noise of each other.
      const double acc = std::min(chunks * px, 18.0), reuse = std::min(px, 5.5);
      const double score = std::round(acc * 10) * 1e6 + std::round(reuse * 10) * 1e3 + 100.0 * rc * rw / (rc + rw) + (k.QR % rc == 0 ? 1 : 0);
      if (score > best + 1e-9) best = score, *RC = rc, *RW = rw;
    }
  }
}

// The busiest thread's share of the work over the mean, when `tasks` tasks in order are cut
// into T runs of equal count (one more for the first tasks % T threads), as libgomp's
// schedule(static) does; work(i) is task i's.
template <class F>
double busiest_share(int64_t tasks, int64_t T, F&& work) {
  const int64_t q = tasks / T, rem = tasks % T;
  double most = 0, total = 0;
  for (int64_t t = 0, i = 0; t < T; ++t) {
    double w = 0;
    for (int64_t end = i + q + (t < rem ? 1 : 0); i < end; ++i) w += work(i);
    most = std::max(most, w), total += w;
  }
  return most * static_cast<double>(T) / total;
}

// Regular, grouped and first-layer convs: acc[chunk j][pixel r] += x[pixel r][lane i] ·
// w[lane i][chunk j], x broadcast.
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

void emit_broadcast_kernel(K& k) {
  CEmit& e = k.e;
  const ConvGeom& g = k.g;
  const int64_t b = k.b, V = k.V;
  const int64_t bl = k.first ? 1 : b;                       // lanes of one reduction step (W's bi)
  const int64_t NB = k.first ? g.C : ceil_div(g.CG, b);     // reduction blocks
  const int64_t nl = k.first ? 1 : (g.CG % b ? g.CG % b : b);  // real lanes of the last one
  const int64_t NBF = nl == bl ? NB : NB - 1;               // blocks with all lanes real
  const int64_t ps = k.first ? 1 : b;                       // X floats per pixel
  const int64_t XBS = k.IH * k.IW * ps;                     // X per reduction block
  const int64_t WT = bl * b, WB = k.KH * k.KW * WT, WO = NB * WB;  // W per tap, block, output block
  const int64_t coff = k.CPB > 1 ? V : WO;                   // W of the next chunk
  const int64_t ycoff = k.CPB > 1 ? V : k.OH * k.OW * b;     // Y of the next chunk
  int64_t RC = 1, RW = 1;
  pick_tile(k, g.G > 1 ? g.MG / V : 0, &RC, &RW);
  k.masked = !k.line && !masked_row(k, RW).empty();
  const int64_t NG = ceil_div(k.QR, RC), RCL = k.QR - (NG - 1) * RC;
  int64_t SEG = 0, NSEG = 1;
  if (k.line) line_segments(k, RW, g.N * NG, &SEG, &NSEG);

  const char* kind = k.first ? "first-layer (X plain NCHW)" : g.G > 1 ? "grouped" : "regular";
  e("/* NCHW{}c {} convolution, register tile {} chunk{} of {} lanes x {} pixels{} ({} accumulators of {});", b, kind, RC,
    RC > 1 ? "s" : "", V, RW, RCL != RC ? fmt::format(" (last tile of chunks: {})", RCL) : "", RC * RW, k.vt);
  e(" * per input lane: one broadcast X element x one W vector per chunk, input lanes unrolled{}.", bl > 4 ? " by 4" : "");
  if (k.line) e(" * 1x1: the {} pixels as one row, tasks (image, chunks, segment of {} pixels){}. */", k.OW, SEG, k.epi ? "; epilogue on each tile" : "");
  else e(" * Tasks (image, chunks, output row); rows: {} left edge, {} interior, {} right edge pixels{}. */", k.lo, k.hi - k.lo, k.OW - k.hi,
         k.epi ? "; epilogue on each tile" : "");
  // Reduction in steps of NBB blocks when a tile's weights (all NB reduction blocks of its RC
  // chunks) would not stay in half of L2: then the tiles of a block of rows accumulate one
  // step at a time into Y, and each step's weights are read from L3 once per row block
  // instead of once per tile (resnet50's 3x3 convs on 7x7 with 512 channels: 1.2 MB of
  // weights per tile; the edge pixels, one-pixel tiles, were bound by streaming them).
  // Steps for L1 too: where a tile's slab outgrows two L1s, each step's weights take a quarter
  // of L1 (at least one input block) and stay there for every tile of the task (a block of
  // rows, or a segment of the line) rather than coming from L2 again for each tile. One
  // thread: resnet50's 1×1 2048→512 and 512→2048 on 7×7 0.75 → 0.65 ms, its layer4 3×3
  // convs -8%; vgg19 -4%. Slabs up to two L1s keep going from L2: the accumulators' extra
  // loads and stores per step cost more than that (256→64 on 56×56, a 64 KB slab: +6%).
  const int64_t slab_block = k.KH * k.KW * bl * RC * V * 4;  // bytes of W per reduction block and tile
  int64_t NBB = NB;
  if (!k.first && !k.line && NB > 1 && slab_block * NB > e.target.l2_bytes / 2)
    NBB = std::max<int64_t>(1, e.target.l2_bytes / 2 / slab_block);
  const int64_t line_tiles = k.line ? ceil_div(NSEG > 1 ? SEG : k.OW, RW) : 2;  // tiles per task (a row has several)
  bool for_l1 = false;  // the steps are sized for L1
  if (!k.first && line_tiles > 1 && NB > 1 && slab_block * NB > 2 * e.target.l1d_bytes) {
    const int64_t l1 = std::max<int64_t>(1, e.target.l1d_bytes / 4 / slab_block);
    for_l1 = l1 < NBB;
    NBB = std::min(NBB, l1);
  }
  NBB = ceil_div(NB, ceil_div(NB, NBB));  // steps of equal size
  const bool steps = NBB < NB;
  int64_t RB = 1;  // rows per task when stepping: as many as the threads allow
  if (steps) {
    RB = k.OH;
    while (RB > 1 && g.N * NG * ceil_div(k.OH, RB) < 4 * std::max(1, e.target.threads)) RB = (RB + 1) / 2;
  }
  const int64_t NRB = steps ? ceil_div(k.OH, RB) : 0;
  if (steps)
    e("/* Reduction in steps of {} of the {} input blocks (each step's weights stay in L{} across {});"
      " tiles accumulate into Y. */", NBB, NB, for_l1 ? 1 : 2,
      k.line ? "the task's segment of the line" : fmt::format("a block of {} rows", RB));
  // The row task: a segment of the line, an output row, or a block of rows with steps.
  const std::string rowvar = k.line ? "seg" : steps ? "rb" : "oh";
  const int64_t rows = k.line ? NSEG : steps ? NRB : k.OH;
  // Task order: groups of chunks outermost, so each thread keeps its groups' weights and
  // reads X once per group, or rows (segments) outermost, so each thread reads its share of
  // X and every weight. Each thread's reads from beyond L2 (half of L2 for the operand that
  // is read again): groups outermost W/T + X·(groups per thread, when X does not stay in
  // L2), rows outermost X/T + W·(rows per thread, when W does not stay).
  // resnet50 at two threads: the 1×1 reductions on wide X (layer2's 512→128 at 28×28:
  // X 1.6 MB, W 256 KB) 0.37 → 0.28 ms with rows outermost; layer3's 256→1024 (X 200 KB,
  // W 1 MB) 0.30 → 0.37 ms, so it keeps groups outermost.
  bool rows_outer = false;
  if (!k.first && g.G == 1 && NG > 1 && rows > 1) {
    const double T = std::max(1, e.target.threads), half_l2 = e.target.l2_bytes / 2.0;
    // X as read: a strided conv whose taps do not overlap (1×1 stride 2) skips rows and columns.
    auto touched = [](int64_t in, int64_t out, int64_t s, int64_t kk, int64_t d) {
      return (kk - 1) * d + 1 >= s ? in : std::min(in, out * kk);
    };
    const double xb = static_cast<double>(k.CB * touched(k.IH, k.OH, k.SH, k.KH, k.DH) * touched(k.IW, k.OW, k.SW, k.KW, k.DW) * b * 4);
    const double wb = static_cast<double>(k.MB * NB * WB * 4);
    const double by_groups = wb / T + xb * (xb > half_l2 ? std::max(1.0, NG / T) : 1.0);
    const double by_rows = xb / T + wb * (wb > half_l2 ? std::max(1.0, rows / T) : 1.0);
    // Near a tie rows first still wins: each thread then also keeps only its share of X in
    // L2 (layer3's 1024→256 at 14×14: X 800 KB, W 1 MB, estimates 1.4 and 1.3 MB; 0.37 →
    // 0.33 ms with rows first).
    rows_outer = by_rows < 1.15 * by_groups;
    // Balance: the static split of the tasks gives each thread a contiguous range; with a short
    // last group of chunks (16 chunks in 3s: 3, 3, 3 | 3, 3, 1) groups first leaves one
    // thread more work, rows first splits the rows instead. Where groups first leaves the
    // busiest thread 5% more than rows first, rows first (resnet50's 3×3 256→256 on 14×14,
    // two threads: 0.65 → 0.59 ms, though each thread reads every weight).
    const int64_t rlast = k.line ? k.OW - (NSEG - 1) * SEG : steps ? k.OH - (NRB - 1) * RB : 1;
    const int64_t rsize = k.line ? SEG : steps ? RB : 1;
    auto busiest = [&](bool by_rows_first) {
      return busiest_share(g.N * NG * rows, std::max(1, e.target.threads), [&](int64_t i) {
        const int64_t grp = by_rows_first ? i % NG : i / rows % NG, row = by_rows_first ? i / NG % rows : i % rows;
        return static_cast<double>((grp == NG - 1 ? RCL : RC) * (row == rows - 1 ? rlast : rsize));
      });
    };
    if (!rows_outer && e.target.threads > 1 && busiest(false) > 1.05 * busiest(true)) rows_outer = true;
  }
  std::vector<std::tuple<std::string, int64_t, int64_t>> tasks{{"n", g.N, 1}};
  if (!rows_outer) tasks.emplace_back("grp", NG, 1);
  if (rows > 1 || (!k.line && !steps)) tasks.emplace_back(rowvar, rows, 1);
  if (rows_outer) {
    tasks.emplace_back("grp", NG, 1);
    e("/* Tasks in the order (image, {}, chunks): each thread reads its share of X and every weight. */", k.line ? "segment" : steps ? "block of rows" : "output row");
  }
  open_tasks(e, tasks, e.parallel(static_cast<double>(conv_macs(g))) && g.N * NG * rows > 1);
  e("const int64_t q0 = {};", affine("grp", RC, 0));
  if (k.first) e("const float* restrict xn = {} + n * {};", k.X, g.C * XBS);
  else if (g.G == 1) e("const float* restrict xn = {} + n * {};", k.X, k.CB * XBS);
  else e("const float* restrict xn = {} + (n * {} + q0 * {} / {} * {}) * {};", k.X, k.CB, V, g.MG, NB, XBS);
  e("const float* restrict wo = {};", k.with_lane(fmt::format("{} + {} * {}", k.W, k.block_of("q0"), WO), "q0"));
  auto row_pointer = [&] {
    e("float* restrict yr = {};",
      k.with_lane(fmt::format("{} + {}", k.Y, k.line ? fmt::format("({}) * {}", sum({term("n", k.MB), k.block_of("q0")}), k.OH * k.OW * b)
                                                      : fmt::format("(({}) * {} + oh) * {}", sum({term("n", k.MB), k.block_of("q0")}), k.OH, k.OW * b)),
                  "q0"));
  };
  if (!steps) row_pointer();

  // One reduction block of `lanes` lanes at xn/wo + cb, for a tile of RCt chunks × R pixels.
  auto reduce = [&](int64_t RCt, int64_t R, TileKind kind, int64_t at, int64_t lanes, const std::pair<std::string, std::string>& kh) {
    e("const float* restrict xc = xn + cb * {};", XBS);
    e("const float* restrict wc = wo + cb * {};", WB);
    open_kernel_rows(k, kh);
    e("const float* restrict xk = xc + ({}) * {};", input_row(k), k.IW * ps);
    e("const float* restrict wk = wc + kh * {};", k.KW * WT);
    // Per input lane: the chunks' weight vectors at `ww`, then one multiply-add per pixel of
    // `px` and chunk with that pixel's X element at x(r) + lane.
    auto step = [&](const std::string& var, int64_t i, const std::vector<int64_t>& px, const std::function<std::string(int64_t)>& x) {
      e("{{");
      std::string ws;
      for (int64_t j = 0; j < RCt; ++j)
        ws += fmt::format("{}w{} = {}", j ? ", " : "", j, k.load(fmt::format("ww + {}", affine(var, b, i * b + j * coff))));
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
    };
    // Input lanes: a loop over groups of 4, each unrolled. Unrolling all 16 lanes of a block
    // let gcc 12 load the weights of later steps early and spill accumulators (3×3 64→64
    // 56×56, one core: ~95 GFLOP/s unrolled by 16, ~112 by 4 or 2, ~110 not unrolled).
    auto lane_steps = [&](const std::vector<int64_t>& px, const std::function<std::string(int64_t)>& x) {
      const int64_t U = 4;
      if (lanes <= U) {
        for (int64_t i = 0; i < lanes; ++i) step("", i, px, x);
      } else {
        const int64_t full = lanes / U * U;
        e("for (int64_t i0 = 0; i0 < {}; i0 += {}) {{", full, U);
        for (int64_t i = 0; i < U; ++i) step("i0", i, px, x);
        e("}}");
        for (int64_t i = full; i < lanes; ++i) step("", i, px, x);
      }
    };
    if (kind == TileKind::Masked && at >= 0) {
      // A tile at a position known here: the kernel columns with only the pixels that read
      // inside X; consecutive columns read by the same pixels share one loop (3×3, pads 1:
      // column 0 without pixel 0, then columns 1..2).
      auto pixels = [&](int64_t kw) {
        std::vector<int64_t> px;
        for (int64_t r = 0; r < R; ++r)
          if (column_inside(k, (at + r) * k.SW - k.PW + kw * k.DW)) px.push_back(r);
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
          e("const float* restrict ww = wk + kw * {};", WT);
          e("const float* restrict xw = xk + {};", affine("kw", k.DW * ps, 0));
          lane_steps(px, [&](int64_t r) { return fmt::format("(xw + {})", ((at + r) * k.SW - k.PW) * ps); });
          e("}}");
        }
        c0 = c1;
      }
      // A tile in a right or left pad at least as wide as the kernel reads nothing of X.
      if (!any) e("(void)xk; (void)wk;  /* every kernel column of this tile lies in the padding */");
      e("}}");  // kh
      return;
    }
    if (kind == TileKind::Masked) {
      // Tiles at run-time positions (a loop over tiles of one width, one of them or more at
      // an edge): one loop over the kernel columns with a pointer per pixel that may read
      // padding, to zeros when its column is outside X; one loop body for the whole group.
      open_loop(e, "kw", k.KW);
      e("const float* restrict ww = wk + kw * {};", WT);
      std::vector<int64_t> px;
      std::vector<std::string> xp(static_cast<size_t>(R));
      bool zeros = false;
      for (int64_t r = 0; r < R; ++r) {
        px.push_back(r);
        const std::string iw = affine("ow", k.SW, r * k.SW - k.PW) + " + " + affine("kw", k.DW, 0);
        bool checked = false;  // whether the pixel is at an edge in some tile of the group
        for (int64_t s0 : k.group) checked = checked || s0 + r < k.lo || s0 + r >= k.hi;
        if (!checked) {
          xp[static_cast<size_t>(r)] = fmt::format("(xk + ({}) * {})", iw, ps);
          continue;
        }
        if (!zeros) e("static const float zx[{}] = {{0}};  /* what a pixel reads in the padding */", bl);
        zeros = true;
        e("const int64_t iw{} = {};", r, iw);
        e("const float* restrict xp{0} = (uint64_t)iw{0} < {1} ? xk + iw{0} * {2} : zx;", r, k.IW, ps);
        xp[static_cast<size_t>(r)] = fmt::format("xp{}", r);
      }
      lane_steps(px, [&](int64_t r) { return xp[static_cast<size_t>(r)]; });
      e("}}");  // kw
      e("}}");  // kh
      return;
    }
    if (kind == TileKind::Edge) e("for (int64_t kw = kw0; kw < kw1; ++kw) {{");
    else open_loop(e, "kw", k.KW);
    const std::string kwoff = k.DW == 1 ? " + kw" : fmt::format(" + kw * {}", k.DW);
    e("const float* restrict xw = xk + ({}{}) * {};", affine("ow", k.SW, -k.PW), k.KW > 1 || kind == TileKind::Edge ? kwoff : "", ps);
    e("const float* restrict ww = wk + kw * {};", WT);
    std::vector<int64_t> px;
    for (int64_t r = 0; r < R; ++r) px.push_back(r);
    lane_steps(px, [&](int64_t r) { return r == 0 ? std::string("xw") : fmt::format("(xw + {})", r * k.SW * ps); });
    e("}}");  // kw
    e("}}");  // kh
  };

  auto row = [&](int64_t RCt) {
    bias_vectors(k, RCt, "q0");
    const auto kh = kernel_rows(k);
    row_tiles(k, RW, SEG, NSEG, [&](int64_t R, TileKind kind, int64_t at) {
      e("{{");
      for (int64_t j = 0; j < RCt; ++j) {
        std::string d;
        for (int64_t r = 0; r < R; ++r) {
          const std::string init = steps ? fmt::format("cb0 == 0 ? bv{} : ({}){}", j, k.vt, k.load(fmt::format("yr + {}", affine("ow", b, r * b + j * ycoff))))
                                          : fmt::format("bv{}", j);
          d += fmt::format("{}a{}_{} = {}", r ? ", " : "", j, r, init);
        }
        e("{} {};", k.vt, d);
      }
      if (kind == TileKind::Edge) edge_taps(k);
      if (steps) {
        if (NBF > 0) {
          e("for (int64_t cb = cb0; cb < (cb0 + {0} < {1} ? cb0 + {0} : {1}); ++cb) {{", NBB, NBF);
          reduce(RCt, R, kind, at, bl, kh);
          e("}}");
        }
        if (NBF < NB) {
          e("if (cb0 + {} >= {}) {{", NBB, NB);
          e("const int64_t cb = {};", NB - 1);
          reduce(RCt, R, kind, at, nl, kh);
          e("}}");
        }
      } else {
        if (NBF > 0) {
          open_loop(e, "cb", NBF);
          reduce(RCt, R, kind, at, bl, kh);
          e("}}");
        }
        if (NBF < NB) {
          e("{{");
          e("const int64_t cb = {};", NB - 1);
          reduce(RCt, R, kind, at, nl, kh);
          e("}}");
        }
      }
      // With steps the epilogue goes on the last step's stores only.
      store_tile(k, RCt, R, "q0", ycoff, [](int64_t j, int64_t r) { return fmt::format("a{}_{}", j, r); },
                 steps ? fmt::format("cb0 + {} >= {}", NBB, NB) : "");
      e("}}");
    });
  };
  // With steps: per task, the steps outermost, then the rows of the task's block.
  auto body = [&](int64_t RCt) {
    if (!steps) {
      row(RCt);
      return;
    }
    e("for (int64_t cb0 = 0; cb0 < {}; cb0 += {}) {{", NB, NBB);
    if (NRB > 1) e("for (int64_t oh = rb * {0}; oh < (rb * {0} + {0} < {1} ? rb * {0} + {0} : {1}); ++oh) {{", RB, k.OH);
    else e("for (int64_t oh = 0; oh < {}; ++oh) {{", k.OH);
    row_pointer();
    row(RCt);
    e("}}");
    e("}}");
  };
  by_group_width(e, NG, RC, RCL, body);
  for (size_t t = 0; t < tasks.size(); ++t) e("}}");
  zero_padding_chunks(k);
}

// The blocking of a Winograd conv (emit_winograd_kernel): register tiles of RT tiles × RC
// chunks within 3/4 of the vector registers (tile_registers); TB tiles per task, the task's
// buffers (vb and mb, 64·TB·(Cp + RC·V) bytes) within half of L2 and at most 8 register
// tiles, then evened out over the tasks (a block's tiles go in register tiles of nearly equal
// size, so TB need not be a multiple of RT). Where the threads would lack tasks (or share them
// unevenly), the groups of RC chunks are first split into NOG parts of GPO groups, a task per
// part: each task then reads only its part of the transformed filter, and the input transform
// of its tiles, about 2% of the products per part, is repeated. Only where that is not enough
// are the blocks of tiles made shorter, which makes every task read its part of the filter
// for fewer tiles: a 14x14 output (49 tiles) at two threads runs as 4 blocks of 13, 13, 13
// and 10 tiles rather than 5 of 12 with the last one padded to 12.
struct WinogradPlan {
  int64_t RC = 0, RT = 0, TB = 0, NTB = 0, NOG = 1, GPO = 0;
  bool par = false;
};
WinogradPlan winograd_plan(const Target& t, const ConvGeom& g, int64_t b, int64_t V) {
  WinogradPlan p;
  const int64_t MB = ceil_div(g.M, b), Cp = ceil_div(g.C, b) * b;
  const int64_t TT = ceil_div(g.out[0], 2) * ceil_div(g.out[1], 2);
  int64_t R = std::max(8, t.vector_registers);
  if (t.arch == "generic") R = std::max<int64_t>(4, std::min<int64_t>(R, 32 * 16 / V));
  p.RC = std::min<int64_t>(MB, 4);
  p.RT = std::max<int64_t>(1, std::min<int64_t>(R * 3 / 4 / p.RC, 12));
  int64_t TB = std::min<int64_t>(8 * p.RT, t.l2_bytes / 2 / (64 * (Cp + p.RC * V)) / p.RT * p.RT);
  TB = std::max(p.RT, std::min(TB, ceil_div(TT, p.RT) * p.RT));
  p.par = t.parallel(static_cast<double>(conv_macs(g)) * 16.0 / 36.0);
  const int64_t NG = ceil_div(MB, p.RC), T = std::max(1, t.threads);
  p.GPO = NG;
  // ntb blocks, as even as the count allows, or (whole) each a number of whole register tiles
  // but the last, where that needs no more blocks: a register tile of RT - 1 tiles runs a few %
  // slower per tile. False where whole register tiles would need more blocks, or where there
  // is one block.
  auto blocks = [&](int64_t ntb, bool whole) {
    p.TB = ceil_div(TT, ntb);
    p.NTB = ceil_div(TT, p.TB);
    if (!whole) return true;
    const int64_t w = ceil_div(p.TB, p.RT) * p.RT;
    if (w >= TT || ceil_div(TT, w) != p.NTB) return false;
    p.TB = w;
    return true;
  };
  if (!blocks(ceil_div(TT, TB), true)) blocks(ceil_div(TT, TB), false);
  if (!p.par) return p;
  // Per count of blocks, from the fewest up, whole register tiles first: the fewest parts that
  // give every thread at least 2 tasks and a share of the products within 5% of the mean
  // (tasks (image, part, block) in order, cut into equal counts as a static schedule does).
  // Failing that anywhere down to blocks of half a register tile's tiles, the most even split
  // seen (fewer than 2 tasks per thread count half), the first seen on a tie.
  const int64_t TBmin = std::min(p.TB, std::max<int64_t>(1, p.RT / 2));
  WinogradPlan keep = p;
  double kept = -1;
  for (int64_t m = p.NTB; m <= TT && ceil_div(TT, m) >= TBmin; ++m) {
    for (const bool whole : {true, false}) {
      if (!blocks(m, whole) || p.NTB != m) continue;
      double best = -1;
      for (int64_t gpo = NG; gpo >= 1; --gpo) {
        const int64_t nog = ceil_div(NG, gpo);
        if (nog * gpo - NG >= gpo) continue;  // the same parts as a larger gpo
        const int64_t tasks = g.N * p.NTB * nog;
        double eff = 1.0 / busiest_share(tasks, T, [&](int64_t i) {
          const int64_t og = i / p.NTB % nog, tb = i % p.NTB;
          return static_cast<double>(std::min(gpo, NG - og * gpo) * std::min(p.TB, TT - tb * p.TB));
        });
        if (tasks < 2 * T) eff /= 2;
        if (eff > best + 1e-9) best = eff, p.NOG = nog, p.GPO = gpo;
        if (eff >= 0.95) break;
      }
      if (best > kept + 1e-9) kept = best, keep = p;
      if (best >= 0.95) return keep;
    }
  }
  return keep;
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
// Chosen by conv_winograd (below) for 3×3 stride-1 convs whose transformed filter stays in
// half of L2 or whose batch has at least 40 tiles.
void emit_winograd_kernel(K& k) {
  CEmit& e = k.e;
  const ConvGeom& g = k.g;
  const int64_t b = k.b, V = k.V, C = g.C, MB = k.MB, CB = k.CB, Cp = CB * b;
  const int64_t TH = ceil_div(k.OH, 2), TW = ceil_div(k.OW, 2), TT = TH * TW;
  const WinogradPlan wp = winograd_plan(e.target, g, b, V);
  const int64_t RC = wp.RC, RT = wp.RT, TB = wp.TB, NTB = wp.NTB, NOG = wp.NOG, GPO = wp.GPO;
  const int64_t NG = ceil_div(MB, RC), RCL = MB - (NG - 1) * RC;
  const bool par = wp.par;
  e.variant += " winograd";
  e("/* NCHW{}c convolution as Winograd F(2x2,3x3): {} x {} tiles of 2x2 output pixels, {} per task; per task the", b, TH, TW, TB);
  e(" * input transform into vb[16][{}][{}], per position a product of register tiles of up to {} tiles x {} chunk{} of {} lanes", TB, Cp, RT, RC,
    RC > 1 ? "s" : "", V);
  e(" * ({} accumulators of {}) into mb[16][{}][{}], then the output transform{}.{}", RT * RC, k.vt, TB, RC * V,
    k.epi ? " (epilogue on each tile)" : "", NOG > 1 ? "" : " */");
  if (NOG > 1) e(" * Tasks (image, part of {} group{} of {} chunks, block of tiles). */", GPO, GPO > 1 ? "s" : "", RC);
  if (NOG > 1) open_tasks(e, {{"n", g.N, 1}, {"og", NOG, 1}, {"tb", NTB, 1}}, par);
  else open_tasks(e, {{"n", g.N, 1}, {"tb", NTB, 1}}, par && g.N * NTB > 1);
  e("float vb[{}];", 16 * TB * Cp);
  e("float mb[{}];", 16 * TB * RC * V);
  e("const int64_t t0 = tb * {};", TB);
  e("const int64_t nt = t0 + {0} < {1} ? {0} : {1} - t0;", TB, TT);
  e("const float* restrict xn = {} + n * {};", k.X, CB * k.IH * k.IW * b);
  // 1. Input transform of the block's tiles.
  e("for (int64_t t = 0; t < nt; ++t) {{");
  e("const int64_t th = (t0 + t) / {}, tw = (t0 + t) % {};", TW, TW);
  e("const int64_t ih0 = 2 * th - {}, iw0 = 2 * tw - {};", k.PH, k.PW);
  e("const int inside = ih0 >= 0 && ih0 + 3 < {} && iw0 >= 0 && iw0 + 3 < {};", k.IH, k.IW);
  e("for (int64_t cb = 0; cb < {}; ++cb) {{", CB);
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
  e("*({}*)(vt + (r * 4 + 0) * {}) = s[r][0] - s[r][2];", k.vtu, TB * Cp);
  e("*({}*)(vt + (r * 4 + 1) * {}) = s[r][1] + s[r][2];", k.vtu, TB * Cp);
  e("*({}*)(vt + (r * 4 + 2) * {}) = s[r][2] - s[r][1];", k.vtu, TB * Cp);
  e("*({}*)(vt + (r * 4 + 3) * {}) = s[r][1] - s[r][3];", k.vtu, TB * Cp);
  e("}}");
  e("}}");  // cb
  e("}}");  // t
  // 2 and 3, per group of chunks.
  auto body = [&](int64_t RCt) {
    // 2. Products: register tiles of RTs tiles from tile r0 of the block, the reduction over
    // C in steps of 4 channels (unrolled) and a remainder.
    auto product = [&](int64_t RTs) {
      e("const float* restrict vr = vb + (p * {} + r0) * {};", TB, Cp);
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
    e("float* restrict mr = mb + (p * {} + r0) * {};", TB, RC * V);
    for (int64_t r = 0; r < RTs; ++r) {
      std::string st;
      for (int64_t j = 0; j < RCt; ++j) st += fmt::format("{}*({}*)(mr + {}) = a{}_{};", j ? " " : "", k.vtu, r * RC * V + j * V, j, r);
      e("{}", st);
    }
    };
    // A block of n tiles in ceil(n / RT) register tiles of nearly equal size: no tile
    // computes padding. Every block has TB tiles but the last, which may have fewer.
    auto block = [&](int64_t n) {
      const int64_t q = ceil_div(n, RT), sz = n / q, big = n % q;
      e("int64_t r0 = 0;");
      for (const auto& [RTs, count] : {std::pair{sz + 1, big}, std::pair{sz, q - big}}) {
        if (count == 0) continue;
        if (count > 1) e("for (int64_t i = 0; i < {}; ++i, r0 += {}) {{", count, RTs);
        else e("{{");
        product(RTs);
        if (count == 1) e("r0 += {};", RTs);
        e("}}");
      }
    };
    e("for (int64_t p = 0; p < 16; ++p) {{");
    e("const float* restrict up = {} + (p * {} + q0) * {};", k.W, MB, C * V);
    const int64_t TL = TT - (NTB - 1) * TB;
    if (TL == TB) {
      block(TB);
    } else {
      e("if (nt == {}) {{", TB);
      block(TB);
      e("}} else {{");
      block(TL);
      e("}}");
    }
    e("}}");  // p
    // 3. Output transform A^T m A, the bias, and the stores with the epilogue.
    bias_vectors(k, RCt, "q0");
    e("for (int64_t t = 0; t < nt; ++t) {{");
    e("const int64_t th = (t0 + t) / {}, tw = (t0 + t) % {};", TW, TW);
    e("const int64_t ow = 2 * tw;");
    for (int64_t j = 0; j < RCt; ++j) {
      e("{{");
      e("const float* restrict mt = mb + t * {} + {};", RC * V, j * V);
      e("{} m[16];", k.vt);
      e("for (int p = 0; p < 16; ++p) m[p] = {};", k.load(fmt::format("mt + p * {}", TB * RC * V)));
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
        e("float* restrict yr = {} + ((n * {} + q0 + {}) * {} + oh) * {};", k.Y, MB, j, k.OH, k.OW * b);
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
  };
  if (NOG > 1) e("for (int64_t grp = og * {0}; grp < (og * {0} + {0} < {1} ? og * {0} + {0} : {1}); ++grp) {{", GPO, NG);
  else e("for (int64_t grp = 0; grp < {}; ++grp) {{", NG);
  e("const int64_t q0 = grp * {};", RC);
  by_group_width(e, NG, RC, RCL, body);
  e("}}");  // grp
  e("}}");  // tb
  if (NOG > 1) e("}}");  // og
  e("}}");  // n
}

// Depthwise convs: acc[pixel r][lane] += x[pixel r][lane] · w[lane], per chunk of V lanes.
void emit_depthwise_kernel(K& k) {
  CEmit& e = k.e;
  const ConvGeom& g = k.g;
  const int64_t b = k.b, V = k.V, KS = k.KH * k.KW;
  const int64_t R = tile_registers(k);
  const int64_t RWmax = std::max<int64_t>(1, std::min<int64_t>(R - k.KW - 2, 16));
  // Masked edges: tiles over the whole row; else the interior's.
  k.masked = !k.line && !masked_row(k, std::min(RWmax, k.OW)).empty();
  const int64_t RW = std::min(RWmax, std::max<int64_t>(k.masked ? k.OW : k.hi - k.lo, 1));
  int64_t SEG = 0, NSEG = 1;
  if (k.line) line_segments(k, RW, g.N * k.QR, &SEG, &NSEG);
  e("/* NCHW{}c depthwise convolution, register tile {} pixels of one chunk of {} lanes ({}); per kernel row the {} weight", b, RW,
    V, k.vt, k.KW);
  e(" * vectors in registers and each input column loaded once for the pixels that read it.");
  if (k.line) e(" * 1x1: the {} pixels as one row, tasks (image, chunk, segment of {} pixels){}. */", k.OW, SEG, k.epi ? "; epilogue on each tile" : "");
  else e(" * Tasks (image, chunk, output row); rows: {} left edge, {} interior, {} right edge pixels{}. */", k.lo, k.hi - k.lo, k.OW - k.hi,
         k.epi ? "; epilogue on each tile" : "");
  const std::string rowvar = k.line ? "seg" : "oh";
  const int64_t rows = k.line ? NSEG : k.OH;
  std::vector<std::tuple<std::string, int64_t, int64_t>> tasks{{"n", g.N, 1}, {"q", k.QR, 1}};
  if (!k.line || NSEG > 1) tasks.emplace_back(rowvar, rows, 1);
  open_tasks(e, tasks, e.parallel(static_cast<double>(conv_macs(g))) && g.N * k.QR * rows > 1);
  e("const float* restrict xq = {};", k.with_lane(fmt::format("{} + ({}) * {}", k.X, sum({term("n", k.CB), k.block_of("q")}), k.IH * k.IW * b), "q"));
  e("const float* restrict wq = {};", k.with_lane(fmt::format("{} + {} * {}", k.W, k.block_of("q"), KS * b), "q"));
  e("float* restrict yr = {};",
    k.with_lane(fmt::format("{} + {}", k.Y, k.line ? fmt::format("({}) * {}", sum({term("n", k.MB), k.block_of("q")}), k.OH * k.OW * b)
                                                    : fmt::format("(({}) * {} + oh) * {}", sum({term("n", k.MB), k.block_of("q")}), k.OH, k.OW * b)),
                "q"));
  bias_vectors(k, 1, "q");
  const auto kh = kernel_rows(k);
  row_tiles(k, RW, SEG, NSEG, [&](int64_t Rt, TileKind kind, int64_t at) {
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
  for (size_t t = 0; t < tasks.size(); ++t) e("}}");
  zero_padding_chunks(k);
}

}  // namespace

bool conv_winograd(const Node& n, const Target& t) {
  if (t.conv_algorithm == "direct") return false;
  const Value *x = n.in(0), *w = n.in(1), *y = n.out(0);
  if (!x || !w || !y || !w->constant || x->dtype != DType::F32 || !y->layout.is_nchwc()) return false;
  const int64_t b = y->layout.block;
  if (x->layout != Layout::nchwc(b) || (w->layout != Layout::filter(b, b) && w->layout != Layout::winograd(b))) return false;
  if (b > std::max(4, t.vector_floats())) return false;  // a block is one vector
  const ConvGeom& g = conv_geom(n);
  if (g.rank() != 2 || g.G != 1 || g.k[0] != 3 || g.k[1] != 3) return false;
  for (size_t i = 0; i < 2; ++i)
    if (g.s[i] != 1 || g.d[i] != 1 || g.pb[i] > 1 || g.pe[i] > 1 || g.out[i] < 4) return false;
  if (conv_blocking(n, b, false).kind != ConvBlocking::Regular) return false;
  if (t.conv_algorithm == "winograd") return true;
  // Each task reads the transformed filter U (16/9 of the filter's bytes) once: where U stays
  // in half of L2 that is free. Else it comes from L3 or memory, streamed by position while the
  // products run, and the saving (20 of 36 multiply-adds per 2×2 tile and channel pair) needs
  // enough tiles in the batch, all items together, to outweigh the transforms and the bigger
  // filter. Measured on a 2-core AMD EPYC (1 MiB L2 per core, 32 MiB L3), per conv, one thread
  // and two: vgg19's 512→512 on 28×28 (196 tiles, U 16.7 MiB) 14.2 → 8.9 ms and 7.3 → 4.8; on
  // 14×14 (49 tiles) 3.74 → 3.10 and 2.19 → 1.64; resnet50's 256→256 on 14×14 (49 tiles, U 4
  // MiB) 0.99 → 0.70 and 0.51 → 0.41; its 512→512 on 7×7 (16 tiles, a quarter of them padding)
  // 1.17 → 1.46, slower.
  const double ubytes = 16.0 * static_cast<double>(ceil_div(g.M, b) * b) * static_cast<double>(g.C) * 4.0;
  if (ubytes <= static_cast<double>(t.l2_bytes) / 2) return true;
  return g.N * ceil_div(g.out[0], 2) * ceil_div(g.out[1], 2) >= 40;
}

void emit_conv_nchwc(CEmit& e) {
  K k(e);
  const ConvGeom& g = k.g;
  k.b = e.out_layout(0).block;
  const ConvBlocked v = conv_blocking(e.node, k.b, e.in_layout(0).is_plain());
  ONNXC_ASSERT(v.kind != ConvBlocking::None, e.node.where() + ": no NCHWc variant at block " + std::to_string(k.b));
  ONNXC_ASSERT(g.rank() == 2, "NCHWc conv of rank " + std::to_string(g.rank()));
  k.first = v.kind == ConvBlocking::FirstLayer;
  k.dw = v.kind == ConvBlocking::Depthwise;
  e.variant = k.first ? "first-layer" : k.dw ? "depthwise" : v.kind == ConvBlocking::Grouped ? "grouped" : "regular";
  ONNXC_ASSERT(k.first || e.in_layout(0) == Layout::nchwc(k.b), "NCHWc conv: X is stored as " + e.node.in(0)->type_str());
  const bool wino = e.in_layout(1) == Layout::winograd(k.b);
  ONNXC_ASSERT(e.in_layout(1) == Layout::filter(k.b, v.filter_in_block) || (wino && v.kind == ConvBlocking::Regular),
               "NCHWc conv: W is stored as " + e.node.in(1)->type_str());
  k.V = std::min<int64_t>(k.b, std::max(4, e.target.vector_floats()));
  k.CPB = k.b / k.V;
  k.MB = ceil_div(g.M, k.b), k.CB = ceil_div(g.C, k.b);
  k.QR = ceil_div(g.M, k.V), k.QT = k.MB * k.CPB;
  k.IH = g.in[0], k.IW = g.in[1], k.OH = g.out[0], k.OW = g.out[1], k.KH = g.k[0], k.KW = g.k[1];
  k.SH = g.s[0], k.SW = g.s[1], k.DH = g.d[0], k.DW = g.d[1], k.PH = g.pb[0], k.PW = g.pb[1];
  k.OWr = k.OW;
  k.line = k.KH == 1 && k.KW == 1 && k.SH == 1 && k.SW == 1 && k.PH == 0 && k.PW == 0 && g.pe[0] == 0 && g.pe[1] == 0;
  if (k.line) {
    k.IW = k.OW = k.OH * k.OW;
    k.IH = k.OH = 1;
    e.variant += " line";
  }
  // Interior of a row: outputs whose KW taps are all in range.
  k.lo = 0, k.hi = k.OW;
  for (int64_t t = 0; t < k.KW; ++t) {
    int64_t a, z;
    tap_range(k.IW, k.OW, k.SW, k.PW, t * k.DW, &a, &z);
    k.lo = std::max(k.lo, a);
    k.hi = std::min(k.hi, z);
  }
  k.lo = std::min(k.lo, k.OW);
  k.hi = std::max(k.hi, k.lo);
  k.vt = vector_type(k.V), k.vtu = k.vt + "u";
  k.X = e.in(0), k.W = e.in(1), k.Y = e.out(0);
  k.bias = e.has_in(2);
  k.epi = !e.node.epilogue.empty();
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
