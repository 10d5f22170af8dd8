// ir/cost.cc — operation and byte counts of a node (see cost.h).
#include "ir/cost.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "ir/op.h"
#include "ir/ops/attention.h"
#include "ir/ops/conv.h"
#include "ir/ops/det.h"
#include "ir/ops/einsum.h"
#include "ir/ops/gemm.h"
#include "ir/ops/grid_sample.h"
#include "ir/ops/index_ops.h"
#include "ir/ops/norm.h"
#include "ir/ops/pool.h"
#include "ir/ops/quantize.h"
#include "ir/ops/resize.h"
#include "ir/ops/roi_align.h"
#include "ir/ops/signal.h"
#include "ir/ops/rnn.h"

namespace onnxc {
namespace {

double elems(const Value* v) { return v ? static_cast<double>(numel(v->shape)) : 0.0; }

// taps: (position, kernel tap) pairs that multiply, per output channel and batch item.
double conv_flops(const ConvGeom& g, bool bias, double positions, double taps) {
  return 2.0 * static_cast<double>(g.N) * static_cast<double>(g.M) * taps * static_cast<double>(g.CG) +
         (bias ? static_cast<double>(g.N * g.M) * positions : 0.0);
}

// Output positions × kernel taps whose input falls inside X (not on padding): per spatial
// dimension, for each tap k the outputs o with 0 <= o*s - pb + k*d < in; the dimensions
// multiply. Dilated convs with dilation beyond the input (DeepLab's ASPP at 14x14 with
// rates 12-36) read mostly padding, which a tap-count of every position would count.
double conv_valid_taps(const ConvGeom& g) {
  double total = 1;
  for (size_t i = 0; i < g.rank(); ++i) {
    double valid = 0;
    for (int64_t k = 0; k < g.k[i]; ++k) valid += conv_tap_outputs(g, i, k);
    total *= valid;
  }
  return total;
}

// The anchor alone (a plain node, or the first node of a fused group).
double anchor_flops(const Node& n) {
  const std::string& t = n.op_type;
  if (t == "Conv") {
    const ConvGeom& g = conv_geom(n);
    return conv_flops(g, n.in(2) != nullptr, static_cast<double>(g.out_size()), conv_valid_taps(g));
  }
  if (t == "ConvTranspose")  // scatter form: every input position times the kernel
  {
    const ConvGeom& g = conv_transpose_geom(n);
    const double in = static_cast<double>(g.in_size());
    return conv_flops(g, false, in, in * static_cast<double>(g.k_size())) + elems(n.out(0));
  }
  if (t == "Gemm") {
    const GemmAttrs& a = gemm_attrs(n);
    return 2.0 * static_cast<double>(a.M) * static_cast<double>(a.N) * static_cast<double>(a.K) + (n.in(2) ? elems(n.out(0)) : 0.0);
  }
  if (t == "MatMul") {
    const MatMulGeom& m = matmul_geom(n);
    return 2.0 * static_cast<double>(numel(m.batch)) * static_cast<double>(m.M) * static_cast<double>(m.N) * static_cast<double>(m.K);
  }
  if (t == "MaxPool" || t == "AveragePool") {
    double taps = 1;
    for (const PoolDim& d : pool_geom(n).dims) taps *= static_cast<double>(d.k);
    return elems(n.out(0)) * taps;
  }
  if (t == "Softmax" || t == "LogSoftmax") return 4.0 * elems(n.out(0));
  if (t == "Attention") {  // both products, and the softmax of every score
    const AttentionGeom& g = attention_geom(n);
    return static_cast<double>(g.B) * static_cast<double>(g.Hq) * static_cast<double>(g.Tq) * static_cast<double>(g.Tk) *
           (2.0 * static_cast<double>(g.D + g.Dv) + 4.0);
  }
  if (t == "BatchNormalization") return 2.0 * elems(n.out(0));
  if (t == "LRN") return elems(n.out(0)) * (static_cast<double>(std::min(lrn_attrs(n).size, lrn_attrs(n).C)) + 2.0);  // window clipped to C
  if (t == "LayerNormalization" || t == "RMSNormalization") return 8.0 * elems(n.in(0));
  if (t == "InstanceNormalization" || t == "GroupNormalization" || t == "MeanVarianceNormalization") return 7.0 * elems(n.in(0));
  if (t == "LpNormalization") return 3.0 * elems(n.in(0));
  if (t == "Hardmax" || t == "CumSum" || t == "CumProd") return elems(n.in(0));
  if (t == "SoftmaxCrossEntropyLoss") return 4.0 * elems(n.in(0)) + 2.0 * elems(n.in(1));  // log-softmax, then the label
  if (t == "NegativeLogLikelihoodLoss") return 2.0 * elems(n.in(1));
  if (t == "Einsum") return 2.0 * static_cast<double>(numel(einsum_geom(n).dims));
  if (t == "TopK") {
    const TopKGeom& k = topk_geom(n);
    return static_cast<double>(k.outer) * static_cast<double>(k.inner) * static_cast<double>(k.len) * static_cast<double>(k.k);
  }
  if (t == "MatMulInteger" || t == "QLinearMatMul") {
    const QMatMulGeom& m = qmatmul_geom(n);
    return 2.0 * static_cast<double>(numel(m.batch)) * static_cast<double>(m.M) * static_cast<double>(m.N) * static_cast<double>(m.K) +
           (m.qlinear ? 3.0 * elems(n.out(0)) : 0.0);
  }
  if (t == "ConvInteger" || t == "QLinearConv") {
    const QConvGeom& q = qconv_geom(n);
    return conv_flops(q.conv, q.bias >= 0, static_cast<double>(q.conv.out_size()), conv_valid_taps(q.conv)) +
           (q.qlinear ? 3.0 * elems(n.out(0)) : 0.0);
  }
  if (t == "QuantizeLinear") return 3.0 * elems(n.out(0));
  if (t == "DequantizeLinear") return 2.0 * elems(n.out(0));
  if (t == "DynamicQuantizeLinear") return 5.0 * elems(n.in(0));
  if (t == "DFT" || t == "STFT") {  // a complex (or real) multiply-add per sample and bin
    const DftGeom& g = dft_geom(n);
    return static_cast<double>(g.count_a) * static_cast<double>(g.count_b) * static_cast<double>(g.bins) *
           static_cast<double>(g.used) * (g.comps == 2 ? 8.0 : 4.0);
  }
  if (t == "RNN" || t == "GRU" || t == "LSTM") {  // the gate rows' dot products, then ~10 operations per unit and step
    const RnnGeom& g = rnn_geom(n);
    double steps = static_cast<double>(g.seq) * static_cast<double>(g.batch) * static_cast<double>(g.dirs);
    return steps * (2.0 * static_cast<double>(g.gates * g.hidden) * static_cast<double>(g.input + g.hidden) +
                    10.0 * static_cast<double>(g.hidden));
  }
  if (t == "Resize") {
    double taps = 1;
    for (const AxisTable& a : resize_geom(n).tables) taps *= static_cast<double>(a.k);
    return taps > 1 ? 2.0 * taps * elems(n.out(0)) : 0.0;
  }
  if (t == "GridSample") {  // a weighted sum of K x K taps per output element
    GridMode m = grid_sample_geom(n).mode;
    return m == GridMode::Nearest ? 0.0 : (m == GridMode::Linear ? 12.0 : 40.0) * elems(n.out(0));
  }
  if (t == "RoiAlign") {  // 8 per sample (4 taps); sampling_ratio 0 taken as 2 x 2 samples per bin
    int64_t s = roi_align_geom(n).sampling_ratio;
    return 8.0 * static_cast<double>(s > 0 ? s * s : 4) * elems(n.out(0));
  }
  if (t == "Det") {  // LU: 2/3 M^3 per matrix
    const DetGeom& d = det_geom(n);
    return 2.0 / 3.0 * static_cast<double>(d.batch) * static_cast<double>(d.M * d.M * d.M);
  }
  switch (n.op->kind()) {
    case FusionKind::Elementwise:
    case FusionKind::Broadcast: {
      size_t present = 0;
      for (const Value* v : n.inputs) present += v != nullptr;
      return elems(n.out(0)) * static_cast<double>(present > 2 ? present - 1 : 1);
    }
    case FusionKind::Reduction:
      return elems(n.in(0));
    case FusionKind::OutElementwiseFusable:  // global pools
      return elems(n.in(0));
    case FusionKind::Injective:
    case FusionKind::Opaque:
      return 0;
  }
  return 0;
}

}  // namespace

NodeCost node_cost(const Node& n) {
  NodeCost c;
  if (!n.op || n.folded()) return c;
  c.flops = anchor_flops(n) + static_cast<double>(n.epilogue.size()) * elems(n.out(0));
  std::set<const Value*> seen;
  auto add = [&](const Value* v) {
    if (v && seen.insert(v).second) c.bytes += static_cast<double>(v->nbytes());
  };
  for (const Value* v : n.all_inputs()) add(v);
  for (const Value* v : n.outputs) add(v);
  return c;
}

double eval_work(const Node& n) {
  if (!n.op) return 0;
  const std::string& t = n.op_type;
  double w;
  auto all_taps = [](const ConvGeom& g) { return static_cast<double>(g.out_size()) * static_cast<double>(g.k_size()); };
  if (t == "Conv") {
    const ConvGeom& g = conv_geom(n);
    w = conv_flops(g, false, 0, all_taps(g));
  } else if (t == "ConvInteger" || t == "QLinearConv") {
    const ConvGeom& g = qconv_geom(n).conv;
    w = conv_flops(g, false, 0, all_taps(g));
  } else {
    w = anchor_flops(n);
  }
  for (const Value* v : n.inputs) w += elems(v);
  for (const Value* v : n.outputs) w += elems(v);
  return w;
}

}  // namespace onnxc
