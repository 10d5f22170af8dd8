// codegen/c/kernels/conv_nchwc_plan.cc — the plans of the NCHWc conv kernels (see
// conv_nchwc_plan.h; the kernels themselves in conv_nchwc.cc).
#include "codegen/c/kernels/conv_nchwc_plan.h"

#include <algorithm>
#include <cmath>

#include "codegen/c/kernels/conv.h"

namespace onnxc {

NchwcConv nchwc_conv(const Node& n, int64_t b, bool first, bool dw, const Target& t) {
  NchwcConv c;
  c.g = conv_geom(n);
  const ConvGeom& g = c.g;
  c.first = first, c.dw = dw, c.b = b;
  c.V = std::min<int64_t>(b, std::max(4, t.vector_floats()));
  c.CPB = b / c.V;
  c.MB = ceil_div(g.M, b), c.CB = ceil_div(g.C, b);
  c.QR = ceil_div(g.M, c.V), c.QT = c.MB * c.CPB;
  c.IH = g.in[0], c.IW = g.in[1], c.OH = g.out[0], c.OW = g.out[1], c.KH = g.k[0], c.KW = g.k[1];
  c.SH = g.s[0], c.SW = g.s[1], c.DH = g.d[0], c.DW = g.d[1], c.PH = g.pb[0], c.PW = g.pb[1];
  c.OWr = c.OW;
  c.line = c.KH == 1 && c.KW == 1 && c.SH == 1 && c.SW == 1 && c.PH == 0 && c.PW == 0 && g.pe[0] == 0 && g.pe[1] == 0;
  if (c.line) {
    c.IW = c.OW = c.OH * c.OW;
    c.IH = c.OH = 1;
  }
  // Interior of a row: outputs whose KW taps are all in range.
  c.lo = 0, c.hi = c.OW;
  for (int64_t tap = 0; tap < c.KW; ++tap) {
    int64_t a, z;
    tap_range(c.IW, c.OW, c.SW, c.PW, tap * c.DW, &a, &z);
    c.lo = std::max(c.lo, a);
    c.hi = std::min(c.hi, z);
  }
  c.lo = std::min(c.lo, c.OW);
  c.hi = std::max(c.hi, c.lo);
  c.bias = n.inputs.size() > 2 && n.in(2);
  c.epi = !n.epilogue.empty();
  return c;
}

std::vector<RowTile> masked_row(const NchwcConv& c, int64_t RW) {
  std::vector<RowTile> t;
  int64_t masked = 0;
  for (int64_t s = 0; s < c.OW; s += RW) {
    const int64_t len = std::min(RW, c.OW - s);
    const bool m = s < c.lo || s + len > c.hi;
    masked += m;
    t.push_back({s, len, m});
  }
  if (masked > 8) t.clear();
  return t;
}

namespace {

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

// Segments of the line (1×1 convs): SEG pixels (a multiple of RW) per task, fewer when the
// other task dims leave the threads idle. With several threads the tiles per segment are then
// taken between half and one and a half times that, as the count whose tasks (segment × the
// other dims, statically split in equal runs) give the busiest thread the fewest tiles, in either
// task order: a short last segment otherwise lands on one thread (nfnet_f0's 196-pixel 1×1 convs
// went 60+60 pixels to one thread and 60+16 to the other).
void line_segments(const NchwcConv& c, const Target& target, RowPlan* row, int64_t other_tasks) {
  const int64_t RW = row->RW;
  int64_t tps = std::max<int64_t>(1, 64 / RW);
  const int64_t tiles = ceil_div(c.OW, RW), threads = std::max(1, target.threads);
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
  row->SEG = per * RW;
  row->NSEG = ceil_div(c.OW, row->SEG);
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
void pick_tile(const NchwcConv& c, const Target& t, int64_t group_chunks, int64_t* RC, int64_t* RW) {
  const int64_t R = t.tile_registers(c.V);
  const int64_t sat = R * 3 / 4;
  double best = -1;
  for (int64_t rc = 1; rc <= std::min<int64_t>(c.QR, 8); ++rc) {
    if (c.CPB > 1 && c.CPB % rc) continue;
    if (group_chunks && group_chunks % rc) continue;
    const int64_t cap = std::min<int64_t>(sat / rc, 16);
    // Chunks per tile on average over the groups (the last one may be short).
    const double chunks = static_cast<double>(c.QR) / static_cast<double>(ceil_div(c.QR, rc));
    for (int64_t w = 1; w <= cap; ++w) {
      double px;  // pixels per tile on average over the row
      int64_t rw;
      const int64_t n = ceil_div(c.OW, w);  // tiles of a masked row
      if (!c.line && !masked_row(c, ceil_div(c.OW, n)).empty()) {
        rw = ceil_div(c.OW, n);
        px = static_cast<double>(c.OW) / static_cast<double>(ceil_div(c.OW, rw));
      } else {
        if (w < cap) continue;  // interior tiles of the widest size, one-pixel edges
        rw = std::min<int64_t>(std::max<int64_t>(c.hi - c.lo, 1), w);
        px = static_cast<double>(rw);
      }
      // Up to 18 accumulators hide the FMA latency and the loads; up to 5.5 pixels per tile
      // (on average over the row) reuse each weight vector read from L2 well enough. On
      // resnet50's 3×3 convs at one thread, 14×14 rows: 8 × 3 at 76% of peak, 4 × 5 at 82%,
      // 3 × 7 at 87%; 28- and 56-wide rows: 4 × 6, 3 × 7 and 2 × 12 within noise of each other.
      const double acc = std::min(chunks * px, 18.0), reuse = std::min(px, 5.5);
      const double score = std::round(acc * 10) * 1e6 + std::round(reuse * 10) * 1e3 + 100.0 * rc * rw / (rc + rw) + (c.QR % rc == 0 ? 1 : 0);
      if (score > best + 1e-9) best = score, *RC = rc, *RW = rw;
    }
  }
}

// The row cut of a kernel whose tiles are RW pixels wide (masked or not, as said).
RowPlan row_plan(const NchwcConv& c, int64_t RW, bool masked) {
  RowPlan r;
  r.RW = RW;
  r.masked = masked;
  if (masked) r.tiles = masked_row(c, RW);
  return r;
}

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
void reduction_steps(const NchwcConv& c, const Target& t, BroadcastPlan* p) {
  const int64_t slab_block = c.KH * c.KW * p->bl * p->RC * c.V * 4;  // bytes of W per reduction block and tile
  const int64_t NB = p->NB;
  int64_t NBB = NB;
  if (!c.first && !c.line && NB > 1 && slab_block * NB > t.l2_bytes / 2) NBB = std::max<int64_t>(1, t.l2_bytes / 2 / slab_block);
  const int64_t line_tiles = c.line ? ceil_div(p->row.NSEG > 1 ? p->row.SEG : c.OW, p->row.RW) : 2;  // tiles per task (a row has several)
  if (!c.first && line_tiles > 1 && NB > 1 && slab_block * NB > 2 * t.l1d_bytes) {
    const int64_t l1 = std::max<int64_t>(1, t.l1d_bytes / 4 / slab_block);
    p->for_l1 = l1 < NBB;
    NBB = std::min(NBB, l1);
  }
  p->NBB = ceil_div(NB, ceil_div(NB, NBB));  // steps of equal size
  p->steps = p->NBB < NB;
  if (p->steps) {  // rows per task: as many as the threads allow
    p->RB = c.OH;
    while (p->RB > 1 && c.g.N * p->NG * ceil_div(c.OH, p->RB) < 4 * std::max(1, t.threads)) p->RB = (p->RB + 1) / 2;
    p->NRB = ceil_div(c.OH, p->RB);
  }
}

// Task order: groups of chunks outermost, so each thread keeps its groups' weights and
// reads X once per group, or rows (segments) outermost, so each thread reads its share of
// X and every weight. Each thread's reads from beyond L2 (half of L2 for the operand that
// is read again): groups outermost W/T + X·(groups per thread, when X does not stay in
// L2), rows outermost X/T + W·(rows per thread, when W does not stay).
// resnet50 at two threads: the 1×1 reductions on wide X (layer2's 512→128 at 28×28:
// X 1.6 MB, W 256 KB) 0.37 → 0.28 ms with rows outermost; layer3's 256→1024 (X 200 KB,
// W 1 MB) 0.30 → 0.37 ms, so it keeps groups outermost.
bool rows_first(const NchwcConv& c, const Target& t, const BroadcastPlan& p) {
  const ConvGeom& g = c.g;
  const int64_t NG = p.NG, rows = p.rows;
  if (c.first || g.G != 1 || NG <= 1 || rows <= 1) return false;
  const double T = std::max(1, t.threads), half_l2 = t.l2_bytes / 2.0;
  // X as read: a strided conv whose taps do not overlap (1×1 stride 2) skips rows and columns.
  auto touched = [](int64_t in, int64_t out, int64_t s, int64_t kk, int64_t d) { return (kk - 1) * d + 1 >= s ? in : std::min(in, out * kk); };
  const double xb = static_cast<double>(c.CB * touched(c.IH, c.OH, c.SH, c.KH, c.DH) * touched(c.IW, c.OW, c.SW, c.KW, c.DW) * c.b * 4);
  const double wb = static_cast<double>(c.MB * p.NB * p.WB * 4);
  const double by_groups = wb / T + xb * (xb > half_l2 ? std::max(1.0, NG / T) : 1.0);
  const double by_rows = xb / T + wb * (wb > half_l2 ? std::max(1.0, rows / T) : 1.0);
  // Near a tie rows first still wins: each thread then also keeps only its share of X in
  // L2 (layer3's 1024→256 at 14×14: X 800 KB, W 1 MB, estimates 1.4 and 1.3 MB; 0.37 →
  // 0.33 ms with rows first).
  if (by_rows < 1.15 * by_groups) return true;
  // Balance: the static split of the tasks gives each thread a contiguous range; with a short
  // last group of chunks (16 chunks in 3s: 3, 3, 3 | 3, 3, 1) groups first leaves one
  // thread more work, rows first splits the rows instead. Where groups first leaves the
  // busiest thread 5% more than rows first, rows first (resnet50's 3×3 256→256 on 14×14,
  // two threads: 0.65 → 0.59 ms, though each thread reads every weight).
  const int64_t SEG = p.row.SEG, NSEG = p.row.NSEG;
  const int64_t rlast = c.line ? c.OW - (NSEG - 1) * SEG : p.steps ? c.OH - (p.NRB - 1) * p.RB : 1;
  const int64_t rsize = c.line ? SEG : p.steps ? p.RB : 1;
  auto busiest = [&](bool by_rows_first) {
    return busiest_share(g.N * NG * rows, std::max(1, t.threads), [&](int64_t i) {
      const int64_t grp = by_rows_first ? i % NG : i / rows % NG, row = by_rows_first ? i / NG % rows : i % rows;
      return static_cast<double>((grp == NG - 1 ? p.RCL : p.RC) * (row == rows - 1 ? rlast : rsize));
    });
  };
  return t.threads > 1 && busiest(false) > 1.05 * busiest(true);
}

}  // namespace

BroadcastPlan plan_broadcast(const NchwcConv& c, const Target& t) {
  const ConvGeom& g = c.g;
  const int64_t b = c.b, V = c.V;
  BroadcastPlan p;
  p.bl = c.first ? 1 : b;
  p.NB = c.first ? g.C : ceil_div(g.CG, b);
  p.nl = c.first ? 1 : (g.CG % b ? g.CG % b : b);
  p.NBF = p.nl == p.bl ? p.NB : p.NB - 1;
  p.ps = c.first ? 1 : b;
  p.XBS = c.IH * c.IW * p.ps;
  p.WT = p.bl * b, p.WB = c.KH * c.KW * p.WT, p.WO = p.NB * p.WB;
  p.coff = c.CPB > 1 ? V : p.WO;
  p.ycoff = c.CPB > 1 ? V : c.OH * c.OW * b;
  int64_t RW = 1;
  pick_tile(c, t, g.G > 1 ? g.MG / V : 0, &p.RC, &RW);
  p.row = row_plan(c, RW, !c.line && !masked_row(c, RW).empty());
  p.NG = ceil_div(c.QR, p.RC), p.RCL = c.QR - (p.NG - 1) * p.RC;
  if (c.line) line_segments(c, t, &p.row, g.N * p.NG);
  reduction_steps(c, t, &p);
  p.rowvar = c.line ? "seg" : p.steps ? "rb" : "oh";
  p.rows = c.line ? p.row.NSEG : p.steps ? p.NRB : c.OH;
  p.rows_outer = rows_first(c, t, p);
  p.tasks = {{"n", g.N, 1}};
  if (!p.rows_outer) p.tasks.push_back({"grp", p.NG, 1});
  if (p.rows > 1 || (!c.line && !p.steps)) p.tasks.push_back({p.rowvar, p.rows, 1});
  if (p.rows_outer) p.tasks.push_back({"grp", p.NG, 1});
  p.parallel = t.parallel(static_cast<double>(conv_macs(g))) && g.N * p.NG * p.rows > 1;
  return p;
}

DepthwisePlan plan_depthwise(const NchwcConv& c, const Target& t) {
  DepthwisePlan p;
  const int64_t R = t.tile_registers(c.V);
  const int64_t RWmax = std::max<int64_t>(1, std::min<int64_t>(R - c.KW - 2, 16));
  // Masked edges: tiles over the whole row; else the interior's.
  const bool masked = !c.line && !masked_row(c, std::min(RWmax, c.OW)).empty();
  p.row = row_plan(c, std::min(RWmax, std::max<int64_t>(masked ? c.OW : c.hi - c.lo, 1)), masked);
  if (c.line) line_segments(c, t, &p.row, c.g.N * c.QR);
  const int64_t rows = c.line ? p.row.NSEG : c.OH;
  p.tasks = {{"n", c.g.N, 1}, {"q", c.QR, 1}};
  if (!c.line || p.row.NSEG > 1) p.tasks.push_back({c.line ? "seg" : "oh", rows, 1});
  p.parallel = t.parallel(static_cast<double>(conv_macs(c.g))) && c.g.N * c.QR * rows > 1;
  return p;
}

namespace {

WinogradPlan winograd_blocks(const Target& t, const ConvGeom& g, int64_t b, int64_t V) {
  WinogradPlan p;
  const int64_t MB = ceil_div(g.M, b), Cp = ceil_div(g.C, b) * b;
  const int64_t TT = ceil_div(g.out[0], 2) * ceil_div(g.out[1], 2);
  const int64_t R = t.tile_registers(V);
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

}  // namespace

WinogradPlan winograd_plan(const Target& t, const ConvGeom& g, int64_t b, int64_t V) {
  WinogradPlan p = winograd_blocks(t, g, b, V);
  if (p.NOG > 1) p.tasks = {{"n", g.N, 1}, {"og", p.NOG, 1}, {"tb", p.NTB, 1}};
  else p.tasks = {{"n", g.N, 1}, {"tb", p.NTB, 1}};
  p.parallel = p.par && (p.NOG > 1 || g.N * p.NTB > 1);
  return p;
}

bool conv_winograd(const Node& n, const Target& t) {
  if (t.conv_algorithm == ConvAlgorithm::Direct) return false;
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
  if (t.conv_algorithm == ConvAlgorithm::Winograd) return true;
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

std::string describe(const RowPlan& r) {
  return fmt::format("{} pixels{}{}", r.RW, r.masked ? " (masked row)" : "", r.SEG > 0 ? fmt::format(", the line in {} segments of {}", r.NSEG, r.SEG) : "");
}

std::string describe(const BroadcastPlan& p) {
  return fmt::format("register tile {} chunk{} x {}; reduction over {} block{} of {} lane{}{}; {}", p.RC, p.RC > 1 ? "s" : "", describe(p.row),
                     p.NB, p.NB > 1 ? "s" : "", p.bl, p.bl > 1 ? "s" : "",
                     p.steps ? fmt::format(" in steps of {} (weights in L{})", p.NBB, p.for_l1 ? 1 : 2) : "", describe_tasks(p.tasks, p.parallel));
}

std::string describe(const DepthwisePlan& p) {
  return fmt::format("register tile {} of one chunk; {}", describe(p.row), describe_tasks(p.tasks, p.parallel));
}

std::string describe(const WinogradPlan& p) {
  return fmt::format("Winograd F(2x2,3x3): register tile {} tiles x {} chunks, {} tiles per task{}; {}", p.RT, p.RC, p.TB,
                     p.NOG > 1 ? fmt::format(", filter in {} parts", p.NOG) : "", describe_tasks(p.tasks, p.parallel));
}

}  // namespace onnxc
