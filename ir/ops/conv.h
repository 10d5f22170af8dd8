// ir/ops/conv.h — what Conv and ConvTranspose mean, as the backends see it: their
// attributes (with ONNX defaults), validation of the attribute vectors against the kernel
// rank, auto_pad resolution, the resolved geometry of a node (conv_geom,
// conv_transpose_geom), how a Conv runs on blocked channels (conv_blocking), and small
// integer helpers for loop-range arithmetic.
//
// Conventions: "spatial" vectors have one entry per spatial dimension (rank of X minus 2);
// pads are split into begin (pb) and end (pe) halves. Conv pads are never negative;
// ConvTranspose pads derived from output_shape may be (a negative pad adds zero rows).
#pragma once
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ir/op.h"

namespace onnxc {

// Floor / ceiling of a / b for b > 0 and any sign of a.
inline int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
inline int64_t ceil_div(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

struct ConvAttrs {
  std::string auto_pad = "NOTSET";
  std::vector<int64_t> dilations, kernel_shape, pads, strides;
  std::vector<int64_t> output_padding, output_shape;  // ConvTranspose only
  int64_t group = 1;

  void parse(AttrReader& a, bool transpose) {
    auto_pad = a.s("auto_pad", "NOTSET");
    dilations = a.ints("dilations");
    kernel_shape = a.ints("kernel_shape");
    pads = a.ints("pads");
    strides = a.ints("strides");
    group = a.i("group", 1);
    if (transpose) {
      output_padding = a.ints("output_padding");
      output_shape = a.ints("output_shape");
    }
  }
};

// Resolved geometry of one Conv / ConvTranspose node.
struct ConvGeom {
  int64_t N = 0, C = 0, M = 0, G = 1;  // batch, input channels, output channels, groups
  int64_t CG = 0, MG = 0;              // input / output channels per group
  Shape in, k, out;                    // spatial sizes of X, W, Y
  std::vector<int64_t> s, d, pb, pe;   // strides, dilations, pads begin / end
  size_t rank() const { return k.size(); }
  int64_t in_size() const { int64_t r = 1; for (auto v : in) r *= v; return r; }
  int64_t out_size() const { int64_t r = 1; for (auto v : out) r *= v; return r; }
  int64_t k_size() const { int64_t r = 1; for (auto v : k) r *= v; return r; }
};

// Bound on strides, dilations, pads and output sizes: keeps all index arithmetic in int64.
constexpr int64_t kConvAttrMax = int64_t{1} << 31;

// Checks an attribute vector has `rank` entries (or is absent, giving `def` for each) and
// that every entry is in [lo, kConvAttrMax]. Returns the filled vector.
inline std::vector<int64_t> spatial_attr(const Node& n, const char* name, const std::vector<int64_t>& v, size_t rank,
                                         int64_t def, int64_t lo) {
  if (v.empty()) return std::vector<int64_t>(rank, def);
  if (v.size() != rank)
    n.invalid(std::string(name) + " has " + std::to_string(v.size()) + " entries, expected " + std::to_string(rank) +
              " (one per spatial dimension)");
  for (int64_t x : v) {
    if (x < lo) n.invalid(std::string(name) + " " + shape_str(v) + " has a value below " + std::to_string(lo));
    if (x > kConvAttrMax) n.invalid(std::string(name) + " " + shape_str(v) + " has a value above 2^31");
  }
  return v;
}

// Checks the inputs both ops share: float32 X, W and optional B, X of rank >= 3, W of X's
// rank, neither empty. Fills the batch, input channels and group of g.
inline void check_conv_inputs(const Node& n, const ConvAttrs& a, ConvGeom& g) {
  if (n.inputs.size() < 2 || n.inputs.size() > 3 || !n.in(0) || !n.in(1)) n.invalid("expects inputs X, W and optional B");
  expect_float(n, 0);
  expect_float(n, 1);
  if (n.in(2)) expect_float(n, 2);
  const Shape& xs = n.in(0)->shape;
  const Shape& ws = n.in(1)->shape;
  if (xs.size() < 3) n.invalid("X " + shape_str(xs) + " must have rank >= 3 (N, C, spatial dims)");
  if (ws.size() != xs.size()) n.invalid("W " + shape_str(ws) + " must have the rank of X " + shape_str(xs));
  if (numel(xs) == 0 || numel(ws) == 0)
    n.unsupported("empty tensors are not supported (X " + shape_str(xs) + ", W " + shape_str(ws) + ")");
  g.N = xs[0], g.C = xs[1], g.G = a.group;
  if (g.G < 1) n.invalid("group " + std::to_string(g.G) + " must be >= 1");
}

// Reads strides, dilations, pads (and kernel_shape against W's spatial dims) into g,
// leaving pads zero when auto_pad is not NOTSET (the caller resolves them).
inline void read_conv_attrs(const Node& n, const ConvAttrs& a, ConvGeom& g) {
  size_t r = g.k.size();
  if (!a.kernel_shape.empty() && Shape(a.kernel_shape) != g.k)
    n.invalid("kernel_shape " + shape_str(a.kernel_shape) + " does not match the weight's spatial dims " + shape_str(g.k));
  g.s = spatial_attr(n, "strides", a.strides, r, 1, 1);
  g.d = spatial_attr(n, "dilations", a.dilations, r, 1, 1);
  if (a.auto_pad != "NOTSET" && a.auto_pad != "SAME_UPPER" && a.auto_pad != "SAME_LOWER" && a.auto_pad != "VALID")
    n.invalid("auto_pad '" + a.auto_pad + "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
  g.pb.assign(r, 0);
  g.pe.assign(r, 0);
  if (!a.pads.empty()) {
    if (a.pads.size() != 2 * r)
      n.invalid("pads has " + std::to_string(a.pads.size()) + " entries, expected " + std::to_string(2 * r));
    for (int64_t p : a.pads) {
      if (p < 0) n.invalid("pads " + shape_str(a.pads) + " has a negative value");
      if (p > kConvAttrMax) n.invalid("pads " + shape_str(a.pads) + " has a value above 2^31");
    }
    bool any = false;
    for (int64_t p : a.pads) any = any || p != 0;
    if (any && a.auto_pad != "NOTSET") n.invalid("pads " + shape_str(a.pads) + " given together with auto_pad " + a.auto_pad);
    if (a.auto_pad == "NOTSET")
      for (size_t i = 0; i < r; ++i) g.pb[i] = a.pads[i], g.pe[i] = a.pads[r + i];
  }
}

// Resolves SAME_UPPER / SAME_LOWER pads and the output's spatial sizes (g.out) from the
// input and kernel sizes, strides, dilations and pads read by read_conv_attrs; an input
// smaller than its dilated kernel is invalid (`x_name` names X in the message).
void resolve_conv_output(const Node& n, const ConvAttrs& a, ConvGeom& g, const char* x_name);

// How many outputs along spatial dim i read inside X (not on the padding) through kernel
// tap k: the o in [0, out) with 0 <= o*s - pb + k*d < in. In double: k*d may pass 2^63.
inline double conv_tap_outputs(const ConvGeom& g, size_t i, int64_t k) {
  const double off = static_cast<double>(g.pb[i]) - static_cast<double>(k) * static_cast<double>(g.d[i]);
  const double s = static_cast<double>(g.s[i]);
  const double lo = std::max(0.0, std::ceil(off / s));
  const double hi = std::min(static_cast<double>(g.out[i] - 1), std::floor((static_cast<double>(g.in[i]) - 1 + off) / s));
  return hi >= lo ? hi - lo + 1 : 0.0;
}

// The geometry of a Conv / ConvTranspose node, resolved by its shape inference.
const ConvGeom& conv_geom(const Node& n);
const ConvGeom& conv_transpose_geom(const Node& n);

// How a 2-D Conv runs on activations blocked as NCHWc with block b (ir/layout.h). The
// layout pass lays the node's inputs out accordingly and the kernels read them so:
//   Regular     group 1, X NCHWc, W Layout::filter(b, b)
//   FirstLayer  group 1, C < b and X arriving plain (a graph input): X stays plain NCHW,
//               W Layout::filter(b, 1)
//   Depthwise   group == C == M (> 1), X NCHWc, W Layout::filter(b, 1)
//   Grouped     groups of whole blocks (C/group and M/group multiples of b), X NCHWc,
//               W Layout::filter(b, b)
//   None        other grouped convs: they stay plain
// `x_plain`: X is (or arrives) plain. The output is NCHWc(b) in every variant.
enum class ConvBlocking { None, Regular, FirstLayer, Depthwise, Grouped };
struct ConvBlocked {
  ConvBlocking kind = ConvBlocking::None;
  int64_t filter_in_block = 0;  // bi of W's Layout::filter(b, bi)
};
ConvBlocked conv_blocking(const Node& n, int64_t b, bool x_plain);

}  // namespace onnxc
