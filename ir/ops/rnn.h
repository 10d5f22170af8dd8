// ir/ops/rnn.h — what the recurrent ops RNN, GRU, LSTM and ReverseSequence publish to
// backends (ir/ops/rnn.cc says what they mean): the sizes shape inference resolved and the
// parsed attributes.
#pragma once
#include <string>
#include <vector>

#include "ir/op.h"

namespace onnxc {

// One activation function of a recurrent cell, with its alpha and beta resolved (the
// defaults of the ONNX op of that name where the model gives none).
struct RnnAct {
  enum class Kind { Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign, Softplus };
  Kind kind = Kind::Tanh;
  double alpha = 0, beta = 0;
};
// The activation at x, in double (the reference).
double rnn_act_ref(const RnnAct& a, double x);

// RNN / GRU / LSTM. Sizes: seq S, batch B, input I, hidden H, dirs D (2 when
// bidirectional), gates G (RNN 1, GRU 3 in the order z r h, LSTM 4 in the order i o f c).
// Element offsets in the tensors (layout 0 / batch_major):
//   X[t][b][k]          (t*B + b)*I + k             (b*S + t)*I + k
//   Y[t][d][b][j]       ((t*D + d)*B + b)*H + j     ((b*S + t)*D + d)*H + j
//   state[d][b][j]      (d*B + b)*H + j             (b*D + d)*H + j    (initial_h/c, Y_h, Y_c)
//   W[d][r][k]          (d*G*H + r)*I + k;  R[d][r][k] (d*G*H + r)*H + k
//   B[d][..]            Wb at d*2GH + r, Rb at d*2GH + GH + r;  P[d][p*H + j] (p: i o f)
// Direction d runs backwards when `reverse` (direction "reverse") or d == 1 (bidirectional).
// acts[d * acts_per_dir + k]: RNN f; GRU f (z, r), g (h); LSTM f (i, f, o), g (c), h (H).
struct RnnGeom {
  enum class Cell { RNN, GRU, LSTM };
  Cell cell = Cell::RNN;
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, dirs = 1, gates = 1;
  bool reverse = false, batch_major = false, linear_before_reset = false, input_forget = false;
  bool has_clip = false;
  double clip = 0;
  int64_t acts_per_dir = 1;
  std::vector<RnnAct> acts;
  bool dir_backward(int64_t d) const { return reverse || d == 1; }
};
const RnnGeom& rnn_geom(const Node& n);

// ReverseSequence: the input viewed as [time, batch, inner] (time_axis 0) or
// [batch, time, inner] (time_axis 1), inner = the product of the dims after the first two.
struct ReverseSequenceGeom {
  bool time_first = true;
  int64_t time = 0, batch = 0, inner = 1;
};
const ReverseSequenceGeom& reverse_sequence_geom(const Node& n);

}  // namespace onnxc
