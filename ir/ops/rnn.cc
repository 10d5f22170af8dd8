// ir/ops/rnn.cc — the recurrent ops (rnn.h has the offsets and the view the backends read):
//   RNN(X, W, R, B?, sequence_lens?, initial_h?) → (Y?, Y_h?)
//       Ht = f(Xt·Wᵀ + Ht-1·Rᵀ + Wb + Rb)                                      (f: Tanh)
//   GRU(X, W, R, B?, sequence_lens?, initial_h?) → (Y?, Y_h?)                  (f: Sigmoid, g: Tanh)
//       zt = f(Xt·Wzᵀ + Ht-1·Rzᵀ + Wbz + Rbz),  rt likewise with r
//       ht = g(Xt·Whᵀ + (rt ⊙ Ht-1)·Rhᵀ + Rbh + Wbh)          linear_before_reset = 0
//       ht = g(Xt·Whᵀ + rt ⊙ (Ht-1·Rhᵀ + Rbh) + Wbh)          linear_before_reset = 1
//       Ht = (1 - zt) ⊙ ht + zt ⊙ Ht-1
//   LSTM(X, W, R, B?, sequence_lens?, initial_h?, initial_c?, P?) → (Y?, Y_h?, Y_c?)
//       it = f(Xt·Wiᵀ + Ht-1·Riᵀ + Pi ⊙ Ct-1 + Wbi + Rbi),  ft likewise with f (or
//       ft = 1 - it with input_forget = 1),  ct = g(Xt·Wcᵀ + Ht-1·Rcᵀ + Wbc + Rbc),
//       Ct = ft ⊙ Ct-1 + it ⊙ ct,  ot = f(Xt·Woᵀ + Ht-1·Roᵀ + Po ⊙ Ct + Wbo + Rbo),
//       Ht = ot ⊙ h(Ct)                                       (f: Sigmoid, g, h: Tanh)
//   ReverseSequence(input, sequence_lens) → Y: per batch entry b the first sequence_lens[b]
//       steps along time_axis reversed, the rest copied; any dtype, lens int64.
// Conventions of the recurrent ops: direction forward (default), reverse or bidirectional
// (D = 2, direction 1 runs backwards); layout 0 (time-major, default) or 1 (batch-major,
// opset 14); the absent optional inputs are zeros, and hidden_size, when absent, is read
// from R. sequence_lens (int32, [B]) gives each batch entry its length L: a forward direction
// runs t = 0..L-1, a backward one t = L-1..0, both from the initial state; Y is 0 at t >= L,
// and Y_h/Y_c hold the state after the last step, 0 when L = 0 (as ONNX Runtime). A run-time
// length outside [0, S] is clamped to it (as Gather clamps its indices: the generated code
// never reads outside X); a constant one is an invalid model. clip bounds each gate's
// pre-activation (after bias and peepholes) to [-clip, clip]; the cell state Ct that h()
// takes is not clipped (as ONNX Runtime). activations lists the cell's functions per
// direction (RNN 1, GRU 2, LSTM 3; twice that when bidirectional; a forward or reverse RNN
// also takes the schema's default pair "Tanh, Tanh", of which it uses the first); names are
// matched without regard to case. activation_alpha/beta are consumed in order by the
// functions that take them (Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid: alpha
// and beta as listed in rnn_act_ref; Elu alpha); a function left without a value takes the
// default of the ONNX op of that name (LeakyRelu 0.01, ThresholdedRelu 1, HardSigmoid 0.2/0.5,
// Elu 1, Affine 1/0; ScaledTanh, an op without defaults, 1/1) — ONNX Runtime takes 0 for
// Affine, ThresholdedRelu and ScaledTanh. float32 only (float16 models arrive as float32;
// float64 is refused); the reference computes in double, rounded once per output.
// Versions: RNN 1, 7, 14, 22; GRU 1, 3, 7, 14, 22; LSTM 1, 7, 14, 22; ReverseSequence 10, 28
// (bfloat16 only). Same meaning up to opset 28.
// 1 has output_sequence (accepted: it only says whether Y may be omitted, and an omitted
// output is simply not computed), GRU-3 adds linear_before_reset, 7 drops output_sequence,
// 14 adds layout, 22 adds bfloat16 (not taken). The C kernels are kernels/rnn.cc.
#include "ir/ops/rnn.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "ir/ops/move_common.h"
#include "ir/ops/ops.h"

namespace onnxc {

using ActKind = RnnAct::Kind;

double rnn_act_ref(const RnnAct& a, double x) {
  switch (a.kind) {
    case ActKind::Relu: return x > 0 ? x : 0;
    case ActKind::Tanh: return std::tanh(x);
    case ActKind::Sigmoid: return 1 / (1 + std::exp(-x));
    case ActKind::Affine: return a.alpha * x + a.beta;
    case ActKind::LeakyRelu: return x >= 0 ? x : a.alpha * x;
    case ActKind::ThresholdedRelu: return x > a.alpha ? x : 0;
    case ActKind::ScaledTanh: return a.alpha * std::tanh(a.beta * x);
    case ActKind::HardSigmoid: return std::max(0.0, std::min(1.0, a.alpha * x + a.beta));
    case ActKind::Elu: return x >= 0 ? x : a.alpha * (std::exp(x) - 1);
    case ActKind::Softsign: return x / (1 + std::fabs(x));
    case ActKind::Softplus: return std::max(x, 0.0) + std::log1p(std::exp(-std::fabs(x)));
  }
  return 0;
}

namespace {

using Cell = RnnGeom::Cell;

struct ActInfo {
  const char* name;
  ActKind kind;
  bool alpha, beta;
  double alpha0, beta0;  // defaults
};
constexpr ActInfo kActs[] = {
    {"Relu", ActKind::Relu, false, false, 0, 0},
    {"Tanh", ActKind::Tanh, false, false, 0, 0},
    {"Sigmoid", ActKind::Sigmoid, false, false, 0, 0},
    {"Affine", ActKind::Affine, true, true, 1.0, 0.0},
    {"LeakyRelu", ActKind::LeakyRelu, true, false, 0.01, 0},
    {"ThresholdedRelu", ActKind::ThresholdedRelu, true, false, 1.0, 0},
    {"ScaledTanh", ActKind::ScaledTanh, true, true, 1.0, 1.0},
    {"HardSigmoid", ActKind::HardSigmoid, true, true, 0.2, 0.5},
    {"Elu", ActKind::Elu, true, false, 1.0, 0},
    {"Softsign", ActKind::Softsign, false, false, 0, 0},
    {"Softplus", ActKind::Softplus, false, false, 0, 0},
};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

class Recurrent : public Op {
 public:
  explicit Recurrent(Cell c) {
    g_.cell = c;
    g_.gates = c == Cell::RNN ? 1 : c == Cell::GRU ? 3 : 4;
    g_.acts_per_dir = c == Cell::RNN ? 1 : c == Cell::GRU ? 2 : 3;
  }

  void parse(AttrReader& a) override {
    const Node& n = a.node();
    if (a.opset() < 7) a.i("output_sequence", 0);
    hidden_attr_ = a.opt_i("hidden_size");
    if (hidden_attr_ && *hidden_attr_ < 1) n.invalid(fmt::format("hidden_size {} must be at least 1", *hidden_attr_));
    // Opset 1's schema gives "foward" (sic) as the default; absent means forward at every opset.
    std::string dir = a.s("direction", "forward");
    if (dir == "forward") g_.dirs = 1;
    else if (dir == "reverse") g_.dirs = 1, g_.reverse = true;
    else if (dir == "bidirectional") g_.dirs = 2;
    else n.invalid(fmt::format("direction '{}' is not forward, reverse or bidirectional", dir));
    if (a.opset() >= 14) {
      int64_t l = a.i("layout", 0);
      if (l != 0 && l != 1) n.invalid(fmt::format("layout {} is not 0 or 1", l));
      g_.batch_major = l == 1;
    }
    if (std::optional<double> c = a.opt_f("clip")) {
      if (!(*c >= 0)) n.invalid(fmt::format("clip {} must be a threshold >= 0", *c));
      g_.has_clip = true;
      g_.clip = *c;
    }
    if (g_.cell == Cell::GRU && a.opset() >= 3) {
      int64_t l = a.i("linear_before_reset", 0);
      if (l != 0 && l != 1) n.invalid(fmt::format("linear_before_reset {} is not 0 or 1", l));
      g_.linear_before_reset = l == 1;
    }
    if (g_.cell == Cell::LSTM) {
      int64_t f = a.i("input_forget", 0);
      if (f != 0 && f != 1) n.invalid(fmt::format("input_forget {} is not 0 or 1", f));
      g_.input_forget = f == 1;
    }
    parse_activations(a);
  }

  void parse_activations(AttrReader& a) {
    const Node& n = a.node();
    const size_t per = static_cast<size_t>(g_.acts_per_dir), want = per * static_cast<size_t>(g_.dirs);
    std::vector<std::string> names = a.strings("activations");
    std::vector<double> alphas = a.floats("activation_alpha"), betas = a.floats("activation_beta");
    if (names.empty()) {
      const char* def[] = {"Sigmoid", "Tanh", "Tanh"};
      for (size_t d = 0; d < static_cast<size_t>(g_.dirs); ++d)
        for (size_t k = 0; k < per; ++k) names.push_back(g_.cell == Cell::RNN ? "Tanh" : def[k]);
    } else if (g_.cell == Cell::RNN && g_.dirs == 1 && names.size() == 2) {
      names.resize(1);  // the schema's default pair, written out
    }
    if (names.size() != want)
      n.invalid(fmt::format("activations lists {} function(s); {} takes {} per direction, {} for direction '{}'", names.size(),
                            n.op_type, per, want, g_.dirs == 2 ? "bidirectional" : g_.reverse ? "reverse" : "forward"));
    size_t ai = 0, bi = 0;
    g_.acts.clear();
    for (const std::string& name : names) {
      const ActInfo* info = nullptr;
      for (const ActInfo& k : kActs)
        if (lower(name) == lower(k.name)) info = &k;
      if (!info)
        n.invalid(fmt::format("activation '{}' is not one ONNX defines for {} (Relu, Tanh, Sigmoid, Affine, LeakyRelu, "
                              "ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign, Softplus)",
                              name, n.op_type));
      RnnAct act;
      act.kind = info->kind;
      act.alpha = info->alpha0;
      act.beta = info->beta0;
      if (info->alpha && ai < alphas.size()) act.alpha = alphas[ai++];
      if (info->beta && bi < betas.size()) act.beta = betas[bi++];
      g_.acts.push_back(act);
    }
  }

  void infer(Node& n) override {
    const bool lstm = g_.cell == Cell::LSTM;
    const size_t max_in = lstm ? 8 : 6, max_out = lstm ? 3 : 2;
    if (n.inputs.size() < 3 || n.inputs.size() > max_in)
      n.invalid(fmt::format("expects 3 to {} inputs, got {}", max_in, n.inputs.size()));
    if (n.outputs.size() > max_out) n.invalid(fmt::format("expects at most {} outputs, got {}", max_out, n.outputs.size()));
    const char* in_names[] = {"X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"};
    for (size_t i = 0; i < 3; ++i) need_input(n, i, in_names[i]);
    for (size_t i = 0; i < n.inputs.size(); ++i)
      if (n.in(i) && i != 4) expect_float(n, i);
    const Shape& xs = n.in(0)->shape;
    if (xs.size() != 3)
      n.invalid(fmt::format("X {} must have rank 3 ({})", shape_str(xs), g_.batch_major ? "batch, seq, input" : "seq, batch, input"));
    g_.seq = xs[g_.batch_major ? 1 : 0];
    g_.batch = xs[g_.batch_major ? 0 : 1];
    g_.input = xs[2];
    const Shape& rs = n.in(2)->shape;
    if (rs.size() != 3) n.invalid(fmt::format("R {} must have rank 3", shape_str(rs)));
    g_.hidden = hidden_attr_ ? *hidden_attr_ : rs[2];
    if (g_.hidden < 1) n.invalid(fmt::format("R {} gives hidden_size {}; it must be at least 1", shape_str(rs), g_.hidden));
    if (g_.hidden != rs[2])
      n.invalid(fmt::format("hidden_size {} does not match R {} (its last dim is the hidden size)", g_.hidden, shape_str(rs)));
    if (g_.hidden > (int64_t{1} << 32)) n.unsupported(fmt::format("hidden_size {} is too large", g_.hidden));
    const int64_t D = g_.dirs, GH = g_.gates * g_.hidden, H = g_.hidden, B = g_.batch;
    auto expect_shape = [&](size_t i, const Shape& want) {
      const Value* v = n.in(i);
      if (v && v->shape != want)
        n.invalid(fmt::format("{} {} must have shape {} (hidden_size {}, {} direction(s){})", in_names[i], shape_str(v->shape),
                              shape_str(want), H, D, i == 5 || i == 6 ? g_.batch_major ? ", layout 1" : ", layout 0" : ""));
    };
    expect_shape(1, {D, GH, g_.input});
    expect_shape(2, {D, GH, H});
    expect_shape(3, {D, 2 * GH});
    const Shape state = g_.batch_major ? Shape{B, D, H} : Shape{D, B, H};
    expect_shape(5, state);
    expect_shape(6, state);
    expect_shape(7, {D, 3 * H});
    if (const Value* l = n.in(4)) {
      if (l->dtype != DType::I32) n.invalid(fmt::format("sequence_lens has dtype {}; it must be int32", dtype_name(l->dtype)));
      if (l->shape != Shape{B}) n.invalid(fmt::format("sequence_lens {} must have shape [{}] (the batch)", shape_str(l->shape), B));
      if (l->constant)
        for (int64_t b = 0; b < B; ++b) {
          int64_t v = l->constant->get_i64(b);
          if (v < 0 || v > g_.seq)
            n.invalid(fmt::format("sequence_lens[{}] = {} is outside [0, {}] (the sequence length)", b, v, g_.seq));
        }
    }
    set_output(n, 0, DType::F32, g_.batch_major ? Shape{B, g_.seq, D, H} : Shape{g_.seq, D, B, H});
    set_output(n, 1, DType::F32, state);
    set_output(n, 2, DType::F32, state);
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    const RnnGeom& g = g_;
    const int64_t S = g.seq, B = g.batch, I = g.input, H = g.hidden, D = g.dirs, GH = g.gates * H;
    const float* X = in[0]->data<float>();
    const float* W = in[1]->data<float>();
    const float* R = in[2]->data<float>();
    auto opt = [&](size_t i) { return i < in.size() && in[i] ? in[i]->data<float>() : nullptr; };
    const float *Bs = opt(3), *h0 = opt(5), *c0 = opt(6), *P = opt(7);
    const int32_t* lens = in.size() > 4 && in[4] ? in[4]->data<int32_t>() : nullptr;
    float* Y = out.size() > 0 && out[0].numel() ? out[0].data<float>() : nullptr;
    float* Yh = out.size() > 1 && out[1].numel() ? out[1].data<float>() : nullptr;
    float* Yc = out.size() > 2 && out[2].numel() ? out[2].data<float>() : nullptr;
    auto xoff = [&](int64_t t, int64_t b) { return (g.batch_major ? b * S + t : t * B + b) * I; };
    auto yoff = [&](int64_t t, int64_t d, int64_t b) { return (g.batch_major ? (b * S + t) * D + d : (t * D + d) * B + b) * H; };
    auto soff = [&](int64_t d, int64_t b) { return (g.batch_major ? b * D + d : d * B + b) * H; };
    auto clip = [&](double v) { return !g.has_clip ? v : v < -g.clip ? -g.clip : v > g.clip ? g.clip : v; };  // NaN stays
    std::vector<double> h(static_cast<size_t>(H)), c(h), pre(static_cast<size_t>(GH)), rh(h);
    for (int64_t d = 0; d < D; ++d) {
      const RnnAct* act = &g.acts[static_cast<size_t>(d * g.acts_per_dir)];
      const float* Wd = W + d * GH * I;
      const float* Rd = R + d * GH * H;
      auto wb = [&](int64_t r) { return Bs ? static_cast<double>(Bs[d * 2 * GH + r]) : 0.0; };
      auto rb = [&](int64_t r) { return Bs ? static_cast<double>(Bs[d * 2 * GH + GH + r]) : 0.0; };
      auto peep = [&](int64_t p, int64_t j) { return P ? static_cast<double>(P[d * 3 * H + p * H + j]) : 0.0; };
      // sum over k of R[d][r][k] * v[k]
      auto rdot = [&](int64_t r, const std::vector<double>& v) {
        double s = 0;
        for (int64_t k = 0; k < H; ++k) s += static_cast<double>(Rd[r * H + k]) * v[static_cast<size_t>(k)];
        return s;
      };
      for (int64_t b = 0; b < B; ++b) {
        int64_t L = lens ? std::min<int64_t>(std::max<int64_t>(lens[b], 0), S) : S;
        for (int64_t j = 0; j < H; ++j) {
          h[static_cast<size_t>(j)] = h0 ? h0[soff(d, b) + j] : 0.0;
          c[static_cast<size_t>(j)] = c0 ? c0[soff(d, b) + j] : 0.0;
        }
        for (int64_t s = 0; s < L; ++s) {
          const int64_t t = g.dir_backward(d) ? L - 1 - s : s;
          const float* x = X + xoff(t, b);
          for (int64_t r = 0; r < GH; ++r) {  // Xt·Wᵀ + Wb
            double v = wb(r);
            for (int64_t k = 0; k < I; ++k) v += static_cast<double>(Wd[r * I + k]) * x[k];
            pre[static_cast<size_t>(r)] = v;
          }
          auto P_ = [&](int64_t r) -> double& { return pre[static_cast<size_t>(r)]; };
          if (g.cell == Cell::RNN) {
            for (int64_t j = 0; j < H; ++j) P_(j) += rdot(j, h) + rb(j);
            for (int64_t j = 0; j < H; ++j) h[static_cast<size_t>(j)] = rnn_act_ref(act[0], clip(P_(j)));
          } else if (g.cell == Cell::GRU) {
            std::vector<double> z(static_cast<size_t>(H));
            for (int64_t j = 0; j < H; ++j) {
              size_t u = static_cast<size_t>(j);
              z[u] = rnn_act_ref(act[0], clip(P_(j) + rdot(j, h) + rb(j)));
              double r = rnn_act_ref(act[0], clip(P_(H + j) + rdot(H + j, h) + rb(H + j)));
              rh[u] = g.linear_before_reset ? r * (rdot(2 * H + j, h) + rb(2 * H + j)) : r * h[u];
            }
            for (int64_t j = 0; j < H; ++j) {
              size_t u = static_cast<size_t>(j);
              double lin = g.linear_before_reset ? rh[u] : rdot(2 * H + j, rh) + rb(2 * H + j);
              double hh = rnn_act_ref(act[1], clip(P_(2 * H + j) + lin));
              pre[u] = (1 - z[u]) * hh + z[u] * h[u];  // the z row is no longer needed
            }
            for (int64_t j = 0; j < H; ++j) h[static_cast<size_t>(j)] = pre[static_cast<size_t>(j)];
          } else {
            for (int64_t r = 0; r < GH; ++r) P_(r) += rdot(r, h) + rb(r);
            for (int64_t j = 0; j < H; ++j) {
              size_t u = static_cast<size_t>(j);
              double ig = rnn_act_ref(act[0], clip(P_(j) + peep(0, j) * c[u]));
              double fg = g.input_forget ? 1 - ig : rnn_act_ref(act[0], clip(P_(2 * H + j) + peep(2, j) * c[u]));
              double cg = rnn_act_ref(act[1], clip(P_(3 * H + j)));
              double cn = fg * c[u] + ig * cg;
              double og = rnn_act_ref(act[0], clip(P_(H + j) + peep(1, j) * cn));
              c[u] = cn;
              h[u] = og * rnn_act_ref(act[2], cn);
            }
          }
          if (Y)
            for (int64_t j = 0; j < H; ++j) Y[yoff(t, d, b) + j] = static_cast<float>(h[static_cast<size_t>(j)]);
        }
        if (Y)
          for (int64_t t = L; t < S; ++t)
            for (int64_t j = 0; j < H; ++j) Y[yoff(t, d, b) + j] = 0.0f;
        for (int64_t j = 0; j < H; ++j) {
          if (Yh) Yh[soff(d, b) + j] = L > 0 ? static_cast<float>(h[static_cast<size_t>(j)]) : 0.0f;
          if (Yc) Yc[soff(d, b) + j] = L > 0 ? static_cast<float>(c[static_cast<size_t>(j)]) : 0.0f;
        }
      }
    }
  }

  FusionKind kind() const override { return FusionKind::Opaque; }
  const RnnGeom& geom() const { return g_; }

 private:
  std::optional<int64_t> hidden_attr_;
  RnnGeom g_;
};

class ReverseSequence : public Op {
 public:
  void parse(AttrReader& a) override {
    batch_axis_ = a.i("batch_axis", 1);
    time_axis_ = a.i("time_axis", 0);
    const Node& n = a.node();
    if (batch_axis_ != 0 && batch_axis_ != 1) n.invalid(fmt::format("batch_axis {} is not 0 or 1", batch_axis_));
    if (time_axis_ != 0 && time_axis_ != 1) n.invalid(fmt::format("time_axis {} is not 0 or 1", time_axis_));
    if (batch_axis_ == time_axis_) n.invalid(fmt::format("batch_axis and time_axis are both {}", time_axis_));
  }

  void infer(Node& n) override {
    if (n.inputs.size() != 2) n.invalid(fmt::format("expects 2 inputs, got {}", n.inputs.size()));
    if (n.outputs.size() != 1 || !n.out(0)) n.invalid("expects 1 output");
    const Value& x = need_input(n, 0, "input");
    const Value& l = need_input(n, 1, "sequence_lens");
    if (x.shape.size() < 2) n.invalid(fmt::format("input {} must have rank >= 2", shape_str(x.shape)));
    if (l.dtype != DType::I64) n.invalid(fmt::format("sequence_lens has dtype {}; it must be int64", dtype_name(l.dtype)));
    g_.time_first = time_axis_ == 0;
    g_.time = x.shape[static_cast<size_t>(time_axis_)];
    g_.batch = x.shape[static_cast<size_t>(batch_axis_)];
    g_.inner = 1;
    for (size_t d = 2; d < x.shape.size(); ++d) g_.inner *= x.shape[d];
    if (l.shape != Shape{g_.batch})
      n.invalid(fmt::format("sequence_lens {} must have shape [{}] (input dim {}, the batch axis)", shape_str(l.shape), g_.batch,
                            batch_axis_));
    if (l.constant)
      for (int64_t b = 0; b < g_.batch; ++b) {
        int64_t v = l.constant->get_i64(b);
        if (v < 0 || v > g_.time)
          n.invalid(fmt::format("sequence_lens[{}] = {} is outside [0, {}] (the time axis)", b, v, g_.time));
      }
    set_output(n, 0, x.dtype, x.shape);
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    const int64_t T = g_.time, B = g_.batch, K = g_.inner;
    auto off = [&](int64_t t, int64_t b) { return (g_.time_first ? t * B + b : b * T + t) * K; };
    for (int64_t b = 0; b < B; ++b) {
      int64_t L = std::min<int64_t>(std::max<int64_t>(in[1]->get_i64(b), 0), T);
      for (int64_t t = 0; t < T; ++t)
        for (int64_t k = 0; k < K; ++k) copy_elem(out[0], off(t, b) + k, *in[0], off(t < L ? L - 1 - t : t, b) + k);
    }
  }

  FusionKind kind() const override { return FusionKind::Injective; }
  int64_t min_opset() const override { return 10; }
  const ReverseSequenceGeom& geom() const { return g_; }

 private:
  int64_t batch_axis_ = 1, time_axis_ = 0;
  ReverseSequenceGeom g_;
};

}  // namespace

const RnnGeom& rnn_geom(const Node& n) { return op_as<Recurrent>(n).geom(); }
const ReverseSequenceGeom& reverse_sequence_geom(const Node& n) { return op_as<ReverseSequence>(n).geom(); }

void register_rnn(OpTable& t) {
  t["RNN"] = [] { return std::unique_ptr<Op>(std::make_unique<Recurrent>(Cell::RNN)); };
  t["GRU"] = [] { return std::unique_ptr<Op>(std::make_unique<Recurrent>(Cell::GRU)); };
  t["LSTM"] = [] { return std::unique_ptr<Op>(std::make_unique<Recurrent>(Cell::LSTM)); };
  t["ReverseSequence"] = [] { return std::unique_ptr<Op>(std::make_unique<ReverseSequence>()); };
}

}  // namespace onnxc
