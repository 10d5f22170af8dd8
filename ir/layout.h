// ir/layout.h — how a tensor's elements are stored: plain C order, the blocked activation
// layout NCHW[x]c, a repacked convolution filter, or a matrix packed in column panels.
//
// A Value's `shape` is always its logical (ONNX) shape; `layout` says how it is stored and
// physical_shape() gives the stored dims:
//   Plain   C order of the logical shape.
//   NCHWc   activations [N, C, D1..Dk] stored as [N, ceil(C/b), D1..Dk, b]: channel c lives
//           in block c/b, lane c%b. Lanes past C in the last block are padding. Producers
//           write zeros there where that is free (layout transforms, convs with zero-padded
//           weights and bias) but consumers must never let padding lanes reach real lanes:
//           a conv reduces only over real input channels, a transform back drops them.
//   Filter  conv weights [O, I, K1..Kk] stored as [ceil(O/bo), ceil(I/bi), K1..Kk, bi, bo]
//           ("OIHW{bi}i{bo}o"), zero-padded. bi = 1 gives the depthwise (I = 1) and
//           first-layer ([O/b][I][KH][KW][b]) filters.
//   Panel   the K x N right-hand matrix of a Gemm/MatMul (logical [K, N]) stored as
//           [ceil(N/nr), K, nr] ("KN32n"): each panel of nr columns is contiguous, row k of a
//           panel is nr consecutive floats (one or two vector loads), columns past N are zeros.
//   PanelT  the same storage for a matrix whose logical shape is its transpose, [N, K]
//           (Gemm's B with transB = 1): element (n, k) at [n/nr][k][n%nr] ("NK32n").
//   Winograd  3×3 conv weights [O, I, 3, 3] (float32) in the Winograd domain of F(2×2, 3×3)
//           (Lavin & Gray): U = G g G^T, a 4×4 matrix per (o, i), stored as
//           [16, ceil(O/b), I, b] ("WF23OI16o"): position p = 4·row + column of U, then
//           output block, input channel, output lane; lanes past O are zeros. Computed in
//           double, rounded once. The way back is exact in real arithmetic (g = L U L^T,
//           L picks rows 0, 1 − 2 and 3), so reference evaluation reads the logical filter
//           within a rounding of the original.
//   Pairs   integer conv weights [O, I, K1..Kk] stored as [ceil(O/b), ceil(I/g), K1..Kk, b, g]
//           ("OIHW8o2i", "OIHW16o4i"), g = 2 or 4: per block of b output channels, group of g
//           input channels and kernel position, the b lanes' g weights side by side, what one
//           16-bit multiply-add of pairs (x86's pmaddwd, g = 2) reads once widened, or one
//           byte dot product of quads (VNNI's vpdpbusd, g = 4) reads as it is; lanes past O and
//           the last group's missing partners are zeros.
//   Quads   an integer K x N right-hand matrix (logical [K, N]) stored as [ceil(N/b), ceil(K/4),
//           b, 4] ("KN64n4k"): per panel of b columns and quad of rows, the b columns' 4 bytes
//           side by side, what one byte dot product (VNNI's vpdpbusd) reads as it is; rows past
//           K and columns past N are zeros.
// Reference evaluation works on logical tensors: eval_node converts non-plain inputs with
// to_plain() and outputs with to_layout(), so ops keep one eval (ops whose eval works on the
// stored form, such as layout_transform, say so with Op::layout_native()).
#pragma once
#include <string>

#include "ir/tensor.h"

namespace onnxc {

struct Layout {
  enum class Kind { Plain, NCHWc, Filter, Panel, PanelT, Winograd, Pairs, Quads };
  Kind kind = Kind::Plain;
  int64_t block = 0;     // NCHWc: b; Filter: bo; Panel, PanelT: nr; Winograd, Pairs, Quads: b
  int64_t in_block = 0;  // Filter: bi; Pairs: g; Quads: 4

  static Layout plain() { return {}; }
  static Layout nchwc(int64_t b) { return {Kind::NCHWc, b, 0}; }
  static Layout filter(int64_t bo, int64_t bi) { return {Kind::Filter, bo, bi}; }
  // trans: the logical matrix is [N, K] (PanelT), else [K, N] (Panel).
  static Layout panel(int64_t nr, bool trans) { return {trans ? Kind::PanelT : Kind::Panel, nr, 0}; }
  static Layout winograd(int64_t b) { return {Kind::Winograd, b, 0}; }
  static Layout pairs(int64_t b, int64_t g = 2) { return {Kind::Pairs, b, g}; }
  static Layout quads(int64_t b) { return {Kind::Quads, b, 4}; }
  bool is_panel() const { return kind == Kind::Panel || kind == Kind::PanelT; }
  bool is_plain() const { return kind == Kind::Plain; }
  bool is_nchwc() const { return kind == Kind::NCHWc; }
  bool operator==(const Layout& o) const { return kind == o.kind && block == o.block && in_block == o.in_block; }
  bool operator!=(const Layout& o) const { return !(*this == o); }
  // "" for plain; "NCHW16c", "NCDHW16c", "NC16c"; "OIHW16i16o" for filters (rank-aware);
  // "KN32n" / "NK32n" for panels; "WF23OI16o" for Winograd filters; "OIHW8o2i" / "OIHW16o4i" for pairs and quads of conv
  // weights; "KN64n4k" for a matrix's quads.
  std::string str(size_t rank) const;
};

inline int64_t ceil_div_pos(int64_t a, int64_t b) { return a / b + (a % b != 0); }  // a >= 0, b > 0; no overflow

// Stored dims of a tensor of logical shape `s` in layout `l` (rank >= 2 for non-plain,
// exactly 2 for panels).
Shape physical_shape(const Shape& s, const Layout& l);
// Repacks a plain tensor into layout l (padding zero-filled) and back.
Tensor to_layout(const Tensor& plain, const Layout& l);
Tensor to_plain(const Tensor& stored, const Shape& logical, const Layout& l);

// The dims a broadcasting elementwise kernel should index input `in` (logical shape, layout)
// by when its output has logical shape `out` stored in NCHWc with block b: the input's
// logical shape right-aligned to the output's rank, then
//   - NCHWc input: its physical shape;
//   - plain input with a channel dim of 1: [.., 1, .., 1] (the channel dim stays 1 and a
//     lane dim of 1 is appended, so every lane reads the same element);
// Returns false when the input cannot be read that way (a plain input with C > 1).
bool nchwc_broadcast_view(const Shape& in, const Layout& in_layout, const Shape& out, int64_t b, Shape* view);

}  // namespace onnxc
