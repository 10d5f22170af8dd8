// codegen/c/kernels/conv.h — the C kernels of Conv, shared by the files of the family:
// conv.cc picks a variant per node, conv_pointwise.cc (1×1), conv_nchw.cc (plane and
// direct, plain NCHW), conv_nchwc.cc (blocked activations); conv_transpose.cc uses the
// index helpers. Geometry comes from the op (conv_geom, ir/ops/conv.h).
#pragma once
#include <string>

#include "codegen/c/loops.h"
#include "ir/ops/conv.h"

namespace onnxc {

inline int64_t conv_macs(const ConvGeom& g) { return g.N * g.M * g.out_size() * g.CG * g.k_size(); }

// Valid output range [lo, hi) along one dim for kernel tap t: 0 <= o*s - p + t*d < in.
void tap_range(int64_t in, int64_t out, int64_t s, int64_t p, int64_t td, int64_t* lo, int64_t* hi);
// Loop variable names of spatial dim d of r: last = w, then h, then d, then generic.
std::string dim_name(size_t d, size_t r);
// Offset of image n's input channels for the group of output channel m, "xn = X + ...".
std::string group_offset(const ConvGeom& g, int64_t XS);
// The largest power of two <= maxb dividing n (1 if none).
int64_t pick_block(int64_t n, int64_t maxb);

// Whether the plane kernel's buffers fit on the stack for this conv (conv_nchw.cc).
bool plane_fits(const ConvGeom& g);

void emit_conv_gemv(CEmit& e);       // conv_pointwise.cc
void emit_conv_pointwise(CEmit& e);  // conv_pointwise.cc
void emit_conv_plane(CEmit& e);      // conv_nchw.cc
void emit_conv_direct(CEmit& e);     // conv_nchw.cc
void emit_conv_nchwc(CEmit& e);      // conv_nchwc.cc
// Whether an NCHWc conv runs as Winograd F(2×2, 3×3), its filter in Layout::winograd
// (conv_nchwc.cc): 3×3, stride 1, no dilation, pads of at most 1, group 1, a block of one
// vector, and a transformed filter within half of L2 or at least 40 tiles of 2×2 output
// pixels in the batch to amortise it.
bool conv_winograd(const Node& n, const Target& t);      // conv_nchwc_plan.cc

}  // namespace onnxc
