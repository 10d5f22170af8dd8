// codegen/c/kernels/conv_nchwc_plan.h — the plans of the NCHWc conv kernels: what
// conv_nchwc.cc's printers write, decided here from the conv's geometry and the target, as
// numbers a test can check. No C is written here, and the printers decide nothing: every
// choice of register tile, row cut, reduction step, task order and parallelism that the
// generated code depends on is a field of a plan below.
//
// The letters are those of conv_nchwc.cc's comments: b lanes per channel block, chunks of V
// lanes (one vector), RC chunks × RW pixels per register tile, NB reduction blocks in steps
// of NBB.
#pragma once
#include <cstdint>
#include <vector>

#include "codegen/c/nest.h"
#include "codegen/target.h"
#include "ir/ops/conv.h"

namespace onnxc {

// One NCHWc conv as its kernels see it: conv_geom's geometry (2-D), the output channels cut
// into chunks of one vector.
struct NchwcConv {
  ConvGeom g;
  bool first = false;  // a first layer: X plain NCHW, one input channel per reduction step
  bool dw = false;     // depthwise: lanes are channels
  int64_t b = 0;       // lanes of a channel block of X and Y (Layout::nchwc(b))
  int64_t V = 0;       // lanes of a chunk: min(b, the target's vector floats), at least 4
  int64_t CPB = 0;     // chunks per block, b / V
  int64_t MB = 0, CB = 0;  // output and input channel blocks
  int64_t QR = 0;      // chunks holding real output channels, ceil(M / V)
  int64_t QT = 0;      // all chunks, MB · CPB (those from QR on are whole padding chunks)
  // Spatial geometry: input, output and kernel sizes, strides, dilations, pads at the start.
  // With `line` (1×1, unit strides, no pads) H×W is one row of OH·OW pixels.
  int64_t IH = 0, IW = 0, OH = 0, OW = 0, KH = 0, KW = 0, SH = 0, SW = 0, DH = 0, DW = 0, PH = 0, PW = 0;
  bool line = false;
  int64_t OWr = 0;         // the real output width (line: to index the extra inputs)
  int64_t lo = 0, hi = 0;  // interior of a row: the pixels whose KW taps are all inside X
  bool bias = false;       // a bias input
  bool epi = false;        // a fused epilogue
};

// The conv of node n with output blocks of b lanes, X plain (first) or blocked, depthwise or
// not, for target t (its vector width).
NchwcConv nchwc_conv(const Node& n, int64_t b, bool first, bool dw, const Target& t);

// A row cut into tiles: [start, start + len), masked where a pixel lies outside [lo, hi).
struct RowTile {
  int64_t start, len;
  bool masked;
};

// Tiles of RW pixels over a row of OW, the last one shorter; empty when more than 8 would be
// masked (the edges are then one-pixel run-time tiles). One width and one remainder keep the
// loop bodies, and the C compiler's time, to two per row.
std::vector<RowTile> masked_row(const NchwcConv& c, int64_t RW);

// How the kernels cut a row into register tiles of RW pixels: masked (the whole row in tiles,
// masked_row; the edge pixels inside full tiles) or interior tiles with one-pixel edge tiles;
// with `line`, segments of SEG pixels, NSEG of them (one segment: SEG 0).
struct RowPlan {
  int64_t RW = 1;
  bool masked = false;
  std::vector<RowTile> tiles;  // masked: the row's tiles
  int64_t SEG = 0, NSEG = 1;
};

// The broadcast kernel (regular, grouped and first-layer convs).
struct BroadcastPlan {
  // The reduction: NB blocks of bl lanes (a first layer: one input channel per block), the
  // last with nl real lanes; NBF blocks with all their lanes real.
  int64_t bl = 0, NB = 0, nl = 0, NBF = 0;
  // Strides, in floats: X per pixel (ps) and per reduction block (XBS); W per tap (WT), per
  // reduction block (WB), per output block (WO); W and Y of the next chunk (coff, ycoff).
  int64_t ps = 0, XBS = 0, WT = 0, WB = 0, WO = 0, coff = 0, ycoff = 0;
  // The register tile: RC chunks × row.RW pixels; NG groups of chunks, the last of RCL.
  int64_t RC = 1, NG = 0, RCL = 0;
  RowPlan row;
  // The reduction in steps of NBB blocks (steps: NBB < NB), each step's weights sized to stay
  // in L1 (for_l1) or in half of L2; a task then covers RB output rows, NRB blocks of them.
  int64_t NBB = 0;
  bool for_l1 = false, steps = false;
  int64_t RB = 1, NRB = 0;
  // The tasks: (image, group of chunks, row task) or, rows_outer, (image, row task, group);
  // a row task is a segment of the line ("seg"), a block of rows ("rb", with steps) or an
  // output row ("oh"), `rows` of them. Parallel or not.
  const char* rowvar = "oh";
  int64_t rows = 0;
  bool rows_outer = false;
  std::vector<NestLoop> tasks;
  bool parallel = false;
};
BroadcastPlan plan_broadcast(const NchwcConv& c, const Target& t);
std::string describe(const BroadcastPlan& p);  // one line, as --dump-ir prints it

// The depthwise kernel: a tile of row.RW pixels of one chunk; tasks (image, chunk, row task).
struct DepthwisePlan {
  RowPlan row;
  std::vector<NestLoop> tasks;
  bool parallel = false;
};
DepthwisePlan plan_depthwise(const NchwcConv& c, const Target& t);
std::string describe(const DepthwisePlan& p);

// The blocking of a Winograd conv (conv_nchwc.cc's emit_winograd_kernel): register tiles of
// RT tiles × RC chunks within 3/4 of the vector registers; TB tiles per task (NTB blocks of
// them), the task's buffers (vb and mb, 64·TB·(Cp + RC·V) bytes) within half of L2 and at
// most 8 register tiles, then evened out over the tasks (a block's tiles go in register tiles
// of nearly equal size, so TB need not be a multiple of RT). Where the threads would lack
// tasks (or share them unevenly), the groups of RC chunks are first split into NOG parts of
// GPO groups, a task per part: each task then reads only its part of the transformed filter,
// and the input transform of its tiles, about 2% of the products per part, is repeated. Only
// where that is not enough are the blocks of tiles made shorter, which makes every task read
// its part of the filter for fewer tiles. A 14x14 output (49 tiles) at two threads: with 256
// channels (4 groups of chunks), 2 parts × 3 blocks of 18, 18 and 13 tiles; with 64 (one
// group, no parts), 10 blocks of 5 tiles and the last of 4.
// Tasks (image, part, block of tiles), or (image, block of tiles) with one part; parallel
// where the work (par) and the tasks are enough.
struct WinogradPlan {
  int64_t RC = 0, RT = 0, TB = 0, NTB = 0, NOG = 1, GPO = 0;
  bool par = false;
  std::vector<NestLoop> tasks;
  bool parallel = false;
};
WinogradPlan winograd_plan(const Target& t, const ConvGeom& g, int64_t b, int64_t V);
std::string describe(const WinogradPlan& p);

}  // namespace onnxc
