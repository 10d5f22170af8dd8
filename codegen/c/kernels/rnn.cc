// codegen/c/kernels/rnn.cc — RNN, GRU, LSTM and ReverseSequence in C (ir/ops/rnn.cc says
// what they mean, ir/ops/rnn.h has the offsets). float32, plain layout.
//  RNN/GRU/LSTM  one task per (direction, batch entry), parallel when there are several and
//                the work is large: each runs its own recurrence with its state on the stack
//                (h[H], the LSTM's c[H], the gate pre-activations gt[G*H], GRU's q[H]). Per
//                step the gate rows are dot products: row r of W (of R) against x_t (against
//                h), `omp simd reduction` over the input (hidden) dimension, W, R, B and P read
//                through pointers to compile-time-sized arrays; then one `omp simd` loop over
//                the hidden units applies clip, the activations (onnxc_sigmoidf/onnxc_tanhf,
//                compare-selects; Softplus calls libm's log1pf and is not vectorized) and the
//                cell update, and writes Y. With a single task the row loop of each step goes
//                parallel instead when it is large. A run-time sequence length is clamped to
//                [0, seq_length] before use, so no index leaves X or Y.
//  ReverseSequence  per (batch entry, step) one copy of the inner elements (memcpy; one
//                assignment when there is one), the source step t < len ? len-1-t : t with the
//                length clamped likewise; parallel over the batch when large.
// Known gaps: X·Wᵀ is computed step by step inside the recurrence rather than as one matrix
// product over all steps; the stack holds (G + 3) * H floats per task, so hidden sizes above
// that limit (kMaxStateFloats) are refused.
#include <algorithm>
#include <functional>

#include "codegen/c/kernels/kernels.h"
#include "codegen/c/loops.h"
#include "ir/ops/rnn.h"

namespace onnxc {
namespace {

using Cell = RnnGeom::Cell;
using ActKind = RnnAct::Kind;

constexpr int64_t kMaxStateFloats = int64_t{1} << 16;  // 256 KiB of stack per task

// The float32 C expression of activation a over the identifier x.
std::string act_c(const RnnAct& a, const std::string& x) {
  std::string al = c_float(a.alpha), be = c_float(a.beta);
  switch (a.kind) {
    case ActKind::Relu: return fmt::format("({0} > 0.0f ? {0} : 0.0f)", x);
    case ActKind::Tanh: return fmt::format("onnxc_tanhf({})", x);
    case ActKind::Sigmoid: return fmt::format("onnxc_sigmoidf({})", x);
    case ActKind::Affine: return fmt::format("({1} * {0} + {2})", x, al, be);
    case ActKind::LeakyRelu: return fmt::format("({0} >= 0.0f ? {0} : {1} * {0})", x, al);
    case ActKind::ThresholdedRelu: return fmt::format("({0} > {1} ? {0} : 0.0f)", x, al);
    case ActKind::ScaledTanh: return fmt::format("({1} * onnxc_tanhf({2} * {0}))", x, al, be);
    case ActKind::HardSigmoid: {
      std::string v = fmt::format("({1} * {0} + {2})", x, al, be);
      return fmt::format("({0} < 0.0f ? 0.0f : {0} > 1.0f ? 1.0f : {0})", v);
    }
    case ActKind::Elu: return fmt::format("({0} >= 0.0f ? {0} : {1} * (onnxc_expf({0}) - 1.0f))", x, al);
    case ActKind::Softsign: return fmt::format("({0} / (1.0f + fabsf({0})))", x);
    case ActKind::Softplus: return fmt::format("(({0} > 0.0f ? {0} : 0.0f) + log1pf(onnxc_expf(-fabsf({0}))))", x);
  }
  return x;
}

// The printer of one RNN/GRU/LSTM node: its geometry, what it has (optional inputs and
// outputs), the offsets of X, Y and the states as C expressions of t, d and b, and the parts
// of the function, each a method.
struct Recurrent {
  CEmit& e;
  const RnnGeom& g;
  int64_t S, B, I, H, D, GH;
  bool gru, lstm, has_y, has_yh, has_yc, lens, bias, peep;
  bool vec;       // the unit loops vectorize (no Softplus: libm's log1pf)
  bool par_rows;  // one task: the rows of each step go parallel
  std::string xoff, yoff, soff;

  explicit Recurrent(CEmit& em) : e(em), g(rnn_geom(em.node)) {
    S = g.seq, B = g.batch, I = g.input, H = g.hidden, D = g.dirs, GH = g.gates * H;
    gru = g.cell == Cell::GRU, lstm = g.cell == Cell::LSTM;
    has_y = e.node.out(0), has_yh = e.node.out(1), has_yc = lstm && e.node.out(2);
    lens = e.has_in(4), bias = e.has_in(3), peep = lstm && e.has_in(7);
    vec = std::none_of(g.acts.begin(), g.acts.end(), [](const RnnAct& a) { return a.kind == ActKind::Softplus; });
    xoff = g.batch_major ? fmt::format("(b * {} + t) * {}", S, I) : fmt::format("(t * {} + b) * {}", B, I);
    yoff = g.batch_major ? fmt::format("((b * {} + t) * {} + d) * {}", S, D, H) : fmt::format("((t * {} + d) * {} + b) * {}", D, B, H);
    soff = g.batch_major ? fmt::format("(b * {} + d) * {}", D, H) : fmt::format("(d * {} + b) * {}", B, H);
  }

  const RnnAct& act(int64_t k) const { return g.acts[static_cast<size_t>(k)]; }

  // The weights as pointers to arrays; the tasks (direction, batch entry), parallel when
  // several and the work is large (else the rows of a step, when large); the task's clamped
  // length and its state on the stack, h (and c) from the initial states.
  void open_task() {
    if (I > 0) e.local("const float (*restrict Wm)[{0}][{1}] = (const float (*)[{0}][{1}]){2};", GH, I, e.in(1));
    e.local("const float (*restrict Rm)[{0}][{1}] = (const float (*)[{0}][{1}]){2};", GH, H, e.in(2));
    if (bias) e.local("const float (*restrict Bm)[{0}] = (const float (*)[{0}]){1};", 2 * GH, e.in(3));
    if (peep) e.local("const float (*restrict Pm)[{0}] = (const float (*)[{0}]){1};", 3 * H, e.in(7));
    const double work = 2.0 * static_cast<double>(S) * static_cast<double>(B * D) * static_cast<double>(GH) * static_cast<double>(I + H);
    const bool par_tasks = B * D > 1 && e.parallel(work);
    par_rows = !par_tasks && B * D == 1 && e.parallel(2.0 * static_cast<double>(GH) * static_cast<double>(I + H));
    if (par_rows) e.own_region = "the rows of each step go parallel inside the serial recurrence";
    open_tasks(e, {{"d", D, 1}, {"b", B, 1}}, par_tasks);
    if (lens) {
      e("int64_t len = (int64_t){}[b];", e.in(4));
      e("len = len < 0 ? 0 : len > {0} ? {0} : len; /* clamped to the sequence */", S);
    } else {
      e("const int64_t len = {};", S);
    }
    e("float h[{}], gt[{}];", H, GH);
    if (lstm) e("float c[{}];", H);
    if (gru) e("float q[{}];", H);
    const std::string h0 = e.has_in(5) ? fmt::format("{}[{} + j]", e.in(5), soff) : "0.0f";
    const std::string c0 = e.has_in(6) ? fmt::format("{}[{} + j]", e.in(6), soff) : "0.0f";
    simd(e, H);
    e("for (int64_t j = 0; j < {}; ++j) {{", H);
    e("h[j] = {};", h0);
    if (lstm) e("c[j] = {};", c0);
    e("}}");
  }

  // Step s of the task's sequence: its time t, x_t and y_t.
  void open_step() {
    e("for (int64_t s = 0; s < len; ++s) {{");
    if (D == 2) e("const int64_t t = d == 1 ? len - 1 - s : s;");
    else if (g.reverse) e("const int64_t t = len - 1 - s;");
    else e("const int64_t t = s;");
    if (I > 0) e("const float* restrict xt = {} + {};", e.in(0), xoff);
    if (has_y) e("float* restrict yt = {} + {};", e.out(0), yoff);
  }

  // dst[dst0 + r] (+)= [Wb + W[r0 + r]·x_t] + [Rb + R[r0 + r]·hv] for r in [0, n).
  void rows(int64_t r0, int64_t n, const std::string& dst, int64_t dst0, bool with_x, const std::string& hv, bool add) {
    if (par_rows) e.open_nest({.loops = {{"r", n}}, .schedule_static = true});
    else e("for (int64_t r = 0; r < {}; ++r) {{", n);
    std::vector<std::string> init;
    if (add) init.push_back(fmt::format("{}[{}]", dst, affine("r", 1, dst0)));
    if (bias && with_x) init.push_back(fmt::format("Bm[d][{}]", affine("r", 1, r0)));
    if (bias && !hv.empty()) init.push_back(fmt::format("Bm[d][{}]", affine("r", 1, GH + r0)));
    e("float acc = {};", init.empty() ? "0.0f" : fmt::format("{}", fmt::join(init, " + ")));
    if (with_x && I > 0) {
      simd(e, I, "reduction(+:acc)");
      e("for (int64_t k = 0; k < {}; ++k) acc += Wm[d][{}][k] * xt[k];", I, affine("r", 1, r0));
    }
    if (!hv.empty()) {
      simd(e, H, "reduction(+:acc)");
      e("for (int64_t k = 0; k < {}; ++k) acc += Rm[d][{}][k] * {}[k];", H, affine("r", 1, r0), hv);
    }
    e("{}[{}] = acc;", dst, affine("r", 1, dst0));
    e("}}");
  }

  // `const float name = act(clip(pre))`, the pre-activation first in its own name.
  void gate(const std::string& name, const std::string& pre, const RnnAct& a) {
    e("const float {}_p = {};", name, pre);
    std::string x = name + "_p";
    if (g.has_clip) {
      std::string c = c_float(g.clip), mc = c_float(-g.clip);
      e("const float {0}_c = {1} < {2} ? {2} : {1} > {3} ? {3} : {1};", name, x, mc, c);
      x = name + "_c";
    }
    e("const float {} = {};", name, act_c(a, x));
  }

  // A loop over the hidden units, body(a0) with a0 the first activation of the direction:
  // the activations are constant when D == 1; with two directions the loop is emitted once
  // per direction.
  void units(const std::function<void(int64_t)>& body) {
    auto loop = [&](int64_t dd) {
      if (vec) simd(e, H);
      e("for (int64_t j = 0; j < {}; ++j) {{", H);
      body(dd * g.acts_per_dir);
      e("}}");
    };
    if (D == 1) return loop(0);
    for (int64_t dd = 0; dd < D; ++dd) {
      e("{}if (d == {}) {{", dd == 0 ? "" : "else ", dd);
      loop(dd);
      e("}}");
    }
  }

  void store(const std::string& hn) {
    e("const float hn = {};", hn);
    e("h[j] = hn;");
    if (has_y) e("yt[j] = hn;");
  }

  void rnn_step() {
    rows(0, H, "gt", 0, true, "h", false);
    units([&](int64_t a0) {
      gate("a", "gt[j]", act(a0));
      store("a");
    });
  }

  void gru_step() {
    rows(0, 2 * H, "gt", 0, true, "h", false);
    rows(2 * H, H, "gt", 2 * H, true, "", false);
    if (g.linear_before_reset) rows(2 * H, H, "q", 0, false, "h", false);
    units([&](int64_t a0) {
      gate("z", "gt[j]", act(a0));
      gate("r", fmt::format("gt[{} + j]", H), act(a0));
      if (g.linear_before_reset) {
        gate("hh", fmt::format("gt[{} + j] + r * q[j]", 2 * H), act(a0 + 1));
        store("(1.0f - z) * hh + z * h[j]");
      } else {
        e("gt[j] = z;");
        e("q[j] = r * h[j];");
      }
    });
    if (g.linear_before_reset) return;
    rows(2 * H, H, "gt", 2 * H, false, "q", true);
    units([&](int64_t a0) {
      gate("hh", fmt::format("gt[{} + j]", 2 * H), act(a0 + 1));
      e("const float z = gt[j];");
      store("(1.0f - z) * hh + z * h[j]");
    });
  }

  void lstm_step() {
    rows(0, GH, "gt", 0, true, "h", false);
    auto pp = [&](int64_t p, const std::string& cv) { return peep ? fmt::format(" + Pm[d][{}] * {}", affine("j", 1, p * H), cv) : std::string(); };
    units([&](int64_t a0) {
      e("const float cp = c[j];");
      gate("ig", "gt[j]" + pp(0, "cp"), act(a0));
      if (g.input_forget) e("const float fg = 1.0f - ig;");
      else gate("fg", fmt::format("gt[{} + j]", 2 * H) + pp(2, "cp"), act(a0));
      gate("cg", fmt::format("gt[{} + j]", 3 * H), act(a0 + 1));
      e("const float cn = fg * cp + ig * cg;");
      gate("og", fmt::format("gt[{} + j]", H) + pp(1, "cn"), act(a0));
      e("c[j] = cn;");
      store(fmt::format("og * {}", act_c(act(a0 + 2), "cn")));
    });
  }

  // After the steps: Y's steps past the length zeroed, Y_h (Y_c) the last state (0 for an
  // empty sequence); the tasks closed.
  void close_task() {
    if (has_y && lens) {
      e("for (int64_t t = len; t < {}; ++t) {{", S);
      e("float* restrict yt = {} + {};", e.out(0), yoff);
      simd(e, H);
      e("for (int64_t j = 0; j < {}; ++j) yt[j] = 0.0f;", H);
      e("}}");
    }
    std::string last = lens ? "len > 0 ? {} : 0.0f" : S > 0 ? "{}" : "0.0f";
    if (has_yh || has_yc) {
      simd(e, H);
      e("for (int64_t j = 0; j < {}; ++j) {{", H);
      if (has_yh) e("{}[{} + j] = {};", e.out(1), soff, fmt::format(fmt::runtime(last), "h[j]"));
      if (has_yc) e("{}[{} + j] = {};", e.out(2), soff, fmt::format(fmt::runtime(last), "c[j]"));
      e("}}");
    }
    e("}}");  // b
    e("}}");  // d
  }
};

void emit_recurrent(CEmit& e) {
  Recurrent k(e);
  if (k.B == 0) return;
  const int64_t state = k.GH + 3 * k.H;
  if (state > kMaxStateFloats)
    e.node.unsupported(fmt::format("hidden_size {} needs {} floats of state per sequence; the C kernel keeps at most {} on the stack",
                                   k.H, state, kMaxStateFloats));
  const char* dir = k.D == 2 ? "bidirectional" : k.g.reverse ? "reverse" : "forward";
  e("/* {} {}: seq {}, batch {}, input {}, hidden {}, layout {} */", e.node.op_type, dir, k.S, k.B, k.I, k.H, k.g.batch_major ? 1 : 0);
  k.open_task();
  k.open_step();
  if (k.g.cell == Cell::RNN) k.rnn_step();
  else if (k.gru) k.gru_step();
  else k.lstm_step();
  e("}}");  // steps
  k.close_task();
}

void emit_reverse_sequence(CEmit& e) {
  const ReverseSequenceGeom& g = reverse_sequence_geom(e.node);
  const int64_t T = g.time, B = g.batch, K = g.inner;
  if (T * B * K == 0) return;
  const char* ct = e.in_ctype(0);
  auto off = [&](const std::string& t) {
    return g.time_first ? fmt::format("({} * {} + b) * {}", t, B, K) : fmt::format("(b * {} + {}) * {}", T, t, K);
  };
  open_tasks(e, {{"b", B, 1}}, B > 1 && e.parallel(static_cast<double>(T * B * K)));
  e("int64_t len = (int64_t){}[b];", e.in(1));
  e("len = len < 0 ? 0 : len > {0} ? {0} : len; /* clamped to the time axis */", T);
  e("for (int64_t t = 0; t < {}; ++t) {{", T);
  e("const int64_t src = t < len ? len - 1 - t : t;");
  if (K == 1) e("{}[{}] = {}[{}];", e.out(0), off("t"), e.in(0), off("src"));
  else e("memcpy({} + {}, {} + {}, {} * sizeof({}));", e.out(0), off("t"), e.in(0), off("src"), K, ct);
  e("}}");
  e("}}");
}

}  // namespace

void register_rnn(CKernelTable& t) {
  for (const char* k : {"RNN", "GRU", "LSTM"}) t[k] = {emit_recurrent, nullptr, nullptr, nullptr};
  t["ReverseSequence"] = {emit_reverse_sequence, nullptr, nullptr, nullptr};
}

}  // namespace onnxc
