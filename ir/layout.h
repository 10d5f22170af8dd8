// ir/layout.h — how a tensor's elements are stored: plain C order, the blocked activation
// layout NCHW[x]c, or a repacked convolution filter.
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
// Reference evaluation works on logical tensors: eval_node converts non-plain inputs with
// to_plain() and outputs with to_layout(), so ops keep one eval (ops whose eval works on the
// stored form, such as layout_transform, say so with Op::layout_native()).
#pragma once
#include <string>

#include "ir/tensor.h"

namespace onnxc {

struct Layout {
  enum class Kind { Plain, NCHWc, Filter };
  Kind kind = Kind::Plain;
  int64_t block = 0;     // NCHWc: b; Filter: bo
  int64_t in_block = 0;  // Filter: bi

  static Layout plain() { return {}; }
  static Layout nchwc(int64_t b) { return {Kind::NCHWc, b, 0}; }
  static Layout filter(int64_t bo, int64_t bi) { return {Kind::Filter, bo, bi}; }
  bool is_plain() const { return kind == Kind::Plain; }
  bool is_nchwc() const { return kind == Kind::NCHWc; }
  bool operator==(const Layout& o) const { return kind == o.kind && block == o.block && in_block == o.in_block; }
  bool operator!=(const Layout& o) const { return !(*this == o); }
  // "" for plain; "NCHW16c", "NCDHW16c", "NC16c"; "OIHW16i16o" for filters (rank-aware).
  std::string str(size_t rank) const;
};

inline int64_t ceil_div_pos(int64_t a, int64_t b) { return a / b + (a % b != 0); }  // a >= 0, b > 0; no overflow

// Stored dims of a tensor of logical shape `s` in layout `l` (rank >= 2 for non-plain).
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
