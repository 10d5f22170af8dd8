// codegen/c/kernels/quantize.cc — the quantization ops in C (ir/ops/quantize.cc says what
// they mean, ir/ops/quantize.h the views read here):
//  - QuantizeLinear / DequantizeLinear: x as [outer, len, inner]; per-tensor scales give one
//    flat loop over the stored elements (also on blocked channels, quant_nchwc; tasks of
//    kFlatChunk elements when parallel; float32 to bytes on AVX2 targets 32 elements at a time in
//    vectors), others a loop nest whose innermost loop (inner, or the axis when inner is 1) is
//    `omp simd`, the scale and zero point loaded once per row where they do not vary along it.
//  - onnxc.qdq_add, onnxc.qdq_mul: one flat loop over bytes (AVX2 or AVX-512 vectors where the target has
//    them), rows of one broadcast value (emit_qdq_rows, likewise), or a broadcasting loop nest
//    (emit_qdq_add).
//  - onnxc.lookup: one flat loop of table loads (byte shuffles on AVX2 targets, 64 bytes a step by
//    two vpermi2b and a blend where compiled with AVX-512 VBMI; emit_lookup).
//  - DynamicQuantizeLinear: min and max by compare-selects in vector-wide lane arrays, then
//    one quantizing loop; large inputs in chunks side by side, their ranges combined through the
//    output's first bytes (emit_dynamic_quant), so that it stays in the run's parallel region.
//  - MatMulInteger / QLinearMatMul: on AVX-512 VNNI targets, with uint8 A and int8 or uint8 B
//    (quantize_dynamic's transformers), on byte quads: tasks (batch, panel of 64 columns, block
//    of rows) read their panel of B as int8 quads (a constant B packed so at compile time,
//    Layout::quads; another packed by the task) and add vpdpbusd in tiles of 6 rows x 4
//    vectors, the zero points applied to the exact sums afterwards (emit_qmatmul_quads; plain C
//    where compiled without VNNI); a batched A with one B as one product of all its rows; a fused
//    Cast to float and the float steps after it (quantize_dynamic's scale, bias, GELU, residual
//    add) applied to each tile row as it is stored. Otherwise tasks (batch, row of A); per chunk
//    of at most kChunk columns an accumulator row on the stack, updated by one simd loop over the
//    columns per k.
//  - ConvInteger / QLinearConv with constant 2-D weights (not depthwise; Layout::pairs, asked for
//    by qconv_weight_layout): direct, on 16-bit pairs of input channels, register tiles of int32
//    accumulators (16 output channels x 6 positions) updated by _mm256_madd_epi16 on AVX2
//    targets and by the same sums in plain C elsewhere, requantized in vectors (emit_qconv_pairs);
//    on VNNI targets, with int8 weights whose zero point is zero, on byte quads of input
//    channels instead (Layout::pairs(L, 4)): tiles of 2L channels x 12 (6) positions updated by
//    vpdpbusd, AVX-512 VNNI (AVX-VNNI), plain C where compiled without it (emit_qconv_quads);
//    pointwise ones (1x1, one group, 16 positions or more) on AVX-512 with the positions as the lanes, tiles of 8
//    channels x 48 positions whose vectors are stored as they are (emit_qconv_quads_pointwise),
//    after the onnxc.qdq_add / qdq_mul that reads them where the fuse pass grouped it with the
//    conv (qconv_takes_epilogue: the residual add on the 16 bytes in registers, as emit_qdq_add).
//  - 2-D depthwise ConvInteger / QLinearConv: tasks (image, channel), bands of output rows; the
//    band's input as x - x_zero_point on float phase planes (one per stride phase, padding
//    included; the integer sums stay below 2^24, exact in float, so they run as vector FMAs),
//    one simd loop over the band's outputs summing all the kernel taps in registers (planes of unit
//    stride filled and the band requantized 16 at a time under masks on AVX-512),
//    then the requantization (AVX2 vectors packed to bytes on AVX2 targets) (emit_qconv_depthwise).
//  - Other ConvInteger / QLinearConv: direct convolution, tasks (image, output channel); per output
//    row (all spatial dims but the last) and chunk of at most kChunk positions along the last,
//    an accumulator row on the stack; per input channel and kernel position the valid range
//    of the last dim is computed, and one simd loop covers it (padding adds nothing, so it is
//    skipped rather than read).
// Rounding: nearbyintf, round half to even in the default rounding mode (FE_TONEAREST), which
// the generated code never changes; saturation by compare-selects before the conversion, so
// NaN goes to the type's lowest value and no out-of-range float reaches an integer conversion.
// Accumulators are int32_t, or uint32_t (wrapping modulo 2^32) where the sum may leave int32's
// range (`wrap` of QMatMulGeom, QConvGeom). Known gaps: the channel-multiplier convolutions, and
// MatMulInteger / QLinearMatMul without AVX-512 VNNI or with int8 A, are plain loops; the byte-quads
// products have no AVX-VNNI (256-bit) form; no VNNI form of the depthwise kernel or of convs with
// non-zero int8 or uint8 weight zero points; no AMX form.
#include <algorithm>
#include <functional>

#include "codegen/c/fused.h"
#include "codegen/c/kernels/kernels.h"
#include "codegen/c/loops.h"
#include "ir/ops/quantize.h"

namespace onnxc {
namespace {

// Accumulator rows on the stack hold at most this many int32 values (1 KiB).
constexpr int64_t kChunk = 256;
// Elements per task of a parallel flat loop.
constexpr int64_t kFlatChunk = 4096;

// "a + b - 3" of terms ("-3" is subtracted), skipping empty ones; "0" when all are.
std::string sum_terms(const std::vector<std::string>& terms) {
  std::string s;
  for (const std::string& t : terms) {
    if (t.empty()) continue;
    if (s.empty()) s = t;
    else s += t[0] == '-' ? " - " + t.substr(1) : " + " + t;
  }
  return s.empty() ? "0" : s;
}

// The statement that rounds, offsets and saturates float `v` into `dst` of dtype t (range
// lo..hi): `v` is evaluated once.
std::string round_saturate(const std::string& dst, DType t, const std::string& v, const std::string& zp, double lo, double hi) {
  return fmt::format("{{ float q = nearbyintf({}) + {}; q = q > {} ? q : {}; {} = ({})(q < {} ? q : {}); }}", v, zp, c_float(lo),
                     c_float(lo), dst, dtype_ctype(t), c_float(hi), c_float(hi));
}

// Whether the target has AVX2 (the kernels' intrinsic forms, each under #if defined(__AVX2__)).
bool avx2_target(const CEmit& e) {
  return e.target.arch == "x86-64" && std::count(e.target.features.begin(), e.target.features.end(), "avx2") > 0;
}

// The store of 32 bytes at `dst` from int32 vectors t0..t3 whose values are already in the byte
// type's range (so the saturating packs are exact), in their order: the packs interleave 128-bit
// lanes, the permutation puts them back.
void emit_pack_store(CEmit& e, DType t, const std::string& dst) {
  e("const __m256i b = _mm256_{}(_mm256_packs_epi32(t0, t1), _mm256_packs_epi32(t2, t3));", t == DType::U8 ? "packus_epi16" : "packs_epi16");
  e("_mm256_storeu_si256((__m256i*)({}), _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));", dst);
}

// The AVX2 form of QuantizeLinear's last steps on the float vector `v`: v / `scale`, rounded half
// to even, + `zp`, the compare-selects against lov and hiv, as int32 (`scale`, `zp`, lov and hiv
// name __m256 vectors).
std::string quantize_vec(const std::string& v, const char* scale, const char* zp) {
  return fmt::format("_mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(_mm256_add_ps(_mm256_round_ps(_mm256_div_ps({}, {}), "
                     "_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), {}), lov), hiv))",
                     v, scale, zp);
}

// quantize_vec's AVX-512 twin on the __m512 `v`: v divided by (op "div") or multiplied by (op
// "mul") `scale`, rounded half to even, + `zp`, clamped to [lo, hi] (all __m512 expressions),
// as int32 (the requantization of every AVX-512 kernel here, in the order of the scalar form).
std::string quantize_vec512(const std::string& v, const char* op, const std::string& scale, const std::string& zp, const std::string& lo,
                            const std::string& hi) {
  return fmt::format("_mm512_cvtps_epi32(_mm512_min_ps(_mm512_max_ps(_mm512_add_ps(_mm512_roundscale_ps(_mm512_{}_ps({}, {}), "
                     "_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), {}), {}), {}))",
                     op, v, scale, zp, lo, hi);
}

// The float sum (product, `mul`) of two dequantized int32 vectors of 16 lanes, as onnxc.qdq_add
// computes it: (float)(a - za) * sa + (float)(b - zb) * sb (za a __m512i, sa a __m512 expression).
std::string dequantize_combine512(bool mul, const std::string& a, const std::string& za, const std::string& sa, const std::string& b,
                                  const std::string& zb, const std::string& sb) {
  return fmt::format("_mm512_{}_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32({}, {})), {}), "
                     "_mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32({}, {})), {}))",
                     mul ? "mul" : "add", a, za, sa, b, zb, sb);
}

// The elements [iv, end) of a task (iv declared; `end` a C expression): with `vector` (AVX2
// targets), what it emits under #if defined(__AVX2__), a loop that advances iv by kVectorStep,
// then `body` per element i in a simd loop over the rest (at most `trip` elements). `all_vector`:
// the vector loop leaves nothing (the length is a multiple of kVectorStep), so the simd loop is
// only for other targets (#else): gcc warns about a loop it can tell never runs.
constexpr int64_t kVectorStep = 32;
void vector_then_simd(CEmit& e, const std::string& end, int64_t trip, bool all_vector, const std::string& body,
                      const std::function<void()>& vector) {
  if (vector) {
    e("#if defined(__AVX2__)");
    vector();
    e("{}", all_vector ? "#else" : "#endif");
  }
  simd(e, trip);
  e("for (int64_t i = iv; i < {}; ++i) {{", end);
  e("{}", body);
  e("}}");
  if (vector && all_vector) e("#endif");
}

// `for (i ...) { body }` over n elements, `omp simd`; when the target says `work` is worth
// threads, tasks of kFlatChunk elements, each a simd loop. (Not `omp parallel for simd`:
// its bounds live in memory that clang 14 cannot tell apart from a uint8_t output, so it
// does not vectorize the loop and warns.) With `vector` (AVX2 targets), each task runs
// vector_then_simd over [i0, i1) (every task's length a multiple of kVectorStep when n is).
static_assert(kFlatChunk % kVectorStep == 0);
void flat_loop(CEmit& e, int64_t n, double work, const std::string& body, const std::function<void()>& vector = nullptr) {
  if (vector) {
    if (n > kFlatChunk && e.parallel(work)) {
      e.open_nest({.loops = {{"i0", n, kFlatChunk}}, .schedule_static = true});
      e("const int64_t i1 = i0 + {0} < {1} ? i0 + {0} : {1};", kFlatChunk, n);
    } else {
      e("{{");
      e("const int64_t i0 = 0, i1 = {};", n);
    }
    e("int64_t iv = i0;");
    vector_then_simd(e, "i1", std::min(n, kFlatChunk), n % kVectorStep == 0, body, vector);
    e("}}");
    return;
  }
  if (n > kFlatChunk && e.parallel(work)) {
    e.open_nest({.loops = {{"i0", n, kFlatChunk}}, .schedule_static = true});
    e("const int64_t i1 = i0 + {0} < {1} ? i0 + {0} : {1};", kFlatChunk, n);
    e("ONNXC_PRAGMA(omp simd)");
    e("for (int64_t i = i0; i < i1; ++i) {{");
  } else {
    simd(e, n);
    e("for (int64_t i = 0; i < {}; ++i) {{", n);
  }
  e("{}", body);
  e("}}");
  if (n > kFlatChunk && e.parallel(work)) e("}}");
}

// ---------------------------------------------------------------- QuantizeLinear, DequantizeLinear

void emit_quant(CEmit& e) {
  const QuantGeom& g = quant_geom(e.node);
  const bool q = e.node.op_type == "QuantizeLinear";
  const int64_t total = g.outer * g.len * g.inner;
  if (total == 0) return;
  const bool zp = e.has_in(2);
  const DType xt = e.in_dtype(0);
  const std::string X = e.in(0), S = e.in(1), Y = e.out(0);
  // One element: x at index xi, scale s, zero point z (C expressions).
  auto stmt = [&](const std::string& xi, const std::string& s, const std::string& z) {
    std::string dst = fmt::format("{}[{}]", Y, xi);
    if (!q) {
      if (xt == DType::I32) return fmt::format("{} = (float)((int64_t){}[{}] - {}) * {};", dst, X, xi, z, s);
      return fmt::format("{} = (float)((int32_t){}[{}] - {}) * {};", dst, X, xi, z, s);
    }
    if (xt == DType::F32)
      return round_saturate(dst, e.out_dtype(0), fmt::format("{}[{}] / {}", X, xi, s), fmt::format("(float){}", z), g.qmin, g.qmax);
    // int32 x: in double (exact for every int32)
    return fmt::format(
        "{{ double q = nearbyint((double){}[{}] / (double){}) + (double){}; q = q > {} ? q : {}; {} = ({})(q < {} ? q : {}); }}", X,
        xi, s, z, c_double(g.qmin), c_double(g.qmin), dst, e.out_ctype(0), c_double(g.qmax), c_double(g.qmax));
  };
  const std::string zt = xt == DType::I32 ? "int64_t" : "int32_t";
  auto zp_at = [&](const std::string& i) { return zp ? fmt::format("({}){}[{}]", zt, e.in(2), i) : std::string("0"); };
  const std::string form = g.s_outer == 0 && g.s_axis == 0 && g.s_inner == 0 ? "per tensor"
                           : g.block > 1 ? fmt::format("blocks of {} along the axis", g.block) : "per axis";
  e("/* {}, {}: x as [{}, {}, {}] around the axis; nearbyintf rounds half to even */", e.node.op_type, form, g.outer, g.len, g.inner);
  const double work = static_cast<double>(total) * (q ? 4 : 2);
  if (g.s_outer == 0 && g.s_axis == 0 && g.s_inner == 0) {  // per tensor: one flat loop
    // over every stored element: on blocked channels (quant_nchwc) the padding lanes too
    const int64_t stored = numel(e.node.out(0)->physical_shape());
    e.local("const float s = {}[0];", S);
    e.local("const {} z = {};", zt, zp_at("0"));
    const DType yt = e.out_dtype(0);
    if (!q || xt != DType::F32 || (yt != DType::U8 && yt != DType::I8) || !avx2_target(e) || stored < 32) {
      flat_loop(e, stored, work, stmt("i", "s", "z"));
      return;
    }
    // Float32 to bytes on AVX2: 32 elements at a time in vectors (the scalar form's operations:
    // x / s, round half to even, + z, the compare-selects), the rest in the simd loop.
    e.variant = "per tensor, AVX2";
    flat_loop(e, stored, work, stmt("i", "s", "z"), [&] {
      e("const __m256 sv = _mm256_set1_ps(s), zv = _mm256_set1_ps((float)z);");
      e("const __m256 lov = _mm256_set1_ps({}), hiv = _mm256_set1_ps({});", c_float(g.qmin), c_float(g.qmax));
      e("for (; iv + 32 <= i1; iv += 32) {{");
      for (int k = 0; k < 4; ++k)
        e("const __m256i t{} = {};", k, quantize_vec(fmt::format("_mm256_loadu_ps({} + iv + {})", X, 8 * k), "sv", "zv"));
      emit_pack_store(e, yt, Y + " + iv");
      e("}}");
    });
    return;
  }
  const std::string a_div = g.block > 1 ? fmt::format("(a / {})", g.block) : "a";
  const std::string sidx = sum_terms({index_term("o", g.s_outer), index_term(a_div, g.s_axis), index_term("i", g.s_inner)});
  if (g.inner > 1) {
    // tasks (o, a); simd over i
    open_tasks(e, {{"o", g.outer, 1}, {"a", g.len, 1}}, g.outer * g.len > 1 && e.parallel(work));
    e("const int64_t base = (o * {} + a) * {};", g.len, g.inner);
    std::string s = fmt::format("{}[{}]", S, sidx), z = zp_at(sidx);
    if (g.s_inner == 0) {
      e("const float s = {};", s);
      e("const {} z = {};", zt, z);
      s = "s", z = "z";
    }
    simd(e, g.inner);
    open_loop(e, "i", g.inner);
    e("{}", stmt("base + i", s, z));
    e("}}");
    e("}}");
    e("}}");
  } else {
    // tasks (o); simd over the axis
    const std::string sa = sum_terms({index_term("o", g.s_outer), index_term(a_div, g.s_axis)});
    open_tasks(e, {{"o", g.outer, 1}}, g.outer > 1 && e.parallel(work));
    simd(e, g.len);
    open_loop(e, "a", g.len);
    e("{}", stmt(fmt::format("o * {} + a", g.len), fmt::format("{}[{}]", S, sa), zp_at(sa)));
    e("}}");
    e("}}");
  }
}

// Per tensor, Q and DQ run on blocked channels as they are stored (the padding lanes map to
// whatever they map to; no consumer reads them as real lanes).
bool quant_nchwc(const Node& n, int64_t) {
  const QuantGeom& g = quant_geom(n);
  const Value* o = n.out(0);
  return g.s_outer == 0 && g.s_axis == 0 && g.s_inner == 0 && o && o->shape.size() >= 3 && o->shape.size() <= 5;
}

// ---------------------------------------------------------------- DynamicQuantizeLinear

// The range [min(0, min x), max(0, max x)] of x[i0, i1) (run-time bounds) into the new locals
// lo and hi: compare-selects in vector-wide lane arrays (NaN skipped), then the tail.
void dynamic_quant_range(CEmit& e, const std::string& X, int64_t lanes) {
  e("float lo = 0.0f, hi = 0.0f;");
  e("int64_t i = i0;");
  e("{{");
  e("float lo_l[{0}], hi_l[{0}];", lanes);
  e("ONNXC_PRAGMA(omp simd)");
  e("for (int64_t l = 0; l < {}; ++l) lo_l[l] = hi_l[l] = 0.0f;", lanes);
  e("for (; i + {0} <= i1; i += {0}) {{", lanes);
  e("ONNXC_PRAGMA(omp simd)");
  e("for (int64_t l = 0; l < {}; ++l) {{", lanes);
  e("const float v = {}[i + l];", X);
  e("lo_l[l] = v < lo_l[l] ? v : lo_l[l];");
  e("hi_l[l] = v > hi_l[l] ? v : hi_l[l];");
  e("}}");
  e("}}");
  e("for (int64_t l = 0; l < {}; ++l) {{", lanes);
  e("lo = lo_l[l] < lo ? lo_l[l] : lo;");
  e("hi = hi_l[l] > hi ? hi_l[l] : hi;");
  e("}}");
  e("}}");
  e("for (; i < i1; ++i) {{");
  e("lo = {0}[i] < lo ? {0}[i] : lo;", X);
  e("hi = {0}[i] > hi ? {0}[i] : hi;", X);
  e("}}");
}

// DynamicQuantizeLinear. Small inputs: one serial block (range, scale and zero point, the
// quantizing loop). Larger ones (in parallel): chunks of kFlatChunk elements each write their
// range into the output's first bytes (8 per chunk: two floats; the output has a byte per
// element, so room for them), one thread combines them into the scale and zero point outputs,
// then the chunks are quantized with the two read back from those outputs (the output's bytes
// overwrite the ranges only after the combining statement, whose end is a barrier). So the
// kernel stays in the run's one parallel region.
void emit_dynamic_quant(CEmit& e) {
  const int64_t n = numel(e.in_shape(0));
  const std::string X = e.in(0), Y = e.out(0), S = e.out(1), Z = e.out(2);
  const int64_t lanes = std::max<int64_t>(4, e.target.vector_bits / 32);
  e("/* DynamicQuantizeLinear: range [min(0, min x), max(0, max x)] by compare-selects (NaN skipped), */");
  e("/* scale = range / 255 (1 when it is empty), zero point = round(clip(-min / scale, 0, 255)) */");
  auto quantize = [&](const char* i) {  // element i of x to the output
    return round_saturate(fmt::format("{}[{}]", Y, i), DType::U8, fmt::format("{}[{}] / scale", X, i), "zf", 0, 255);
  };
  auto scale_and_zero_point = [&]() {
    e("const float scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;");
    e("float zf = 0.0f - lo / scale;");
    e("zf = zf > 0.0f ? zf : 0.0f;");
    e("zf = nearbyintf(zf < 255.0f ? zf : 255.0f);");
    e("{}[0] = scale;", S);
    e("{}[0] = (uint8_t)zf;", Z);
  };
  const int64_t P = (n + kFlatChunk - 1) / kFlatChunk;
  if (P < 2 || !e.parallel(6.0 * static_cast<double>(n))) {
    // One loop statement of one trip, so that one thread of the region runs it all.
    e.serial();
    e("for (int64_t i0 = 0; i0 < 1; ++i0) {{");
    e("const int64_t i1 = {};", n);
    dynamic_quant_range(e, X, lanes);
    scale_and_zero_point();
    simd(e, n);
    e("for (int64_t k = 0; k < {}; ++k) {{", n);
    e("{}", quantize("k"));
    e("}}");
    e("}}");
    return;
  }
  e.open_nest({.loops = {{"c", P, 1}}, .schedule_static = true});
  e("const int64_t i0 = c * {0}, i1 = i0 + {0} < {1} ? i0 + {0} : {1};", kFlatChunk, n);
  dynamic_quant_range(e, X, lanes);
  e("const float lh[2] = {{lo, hi}};");
  e("memcpy({} + c * 8, lh, sizeof lh);", Y);
  e("}}");
  // One thread: the chunks' ranges gathered into chunk 0's, then the scale and zero point (one
  // loop statement: a serial statement of the region changes no local).
  e.serial();
  e("for (int64_t c = 1; c <= {}; ++c) {{", P);
  e("float r[2];");
  e("memcpy(r, {}, sizeof r);", Y);
  e("if (c < {}) {{", P);
  e("float lh[2];");
  e("memcpy(lh, {} + c * 8, sizeof lh);", Y);
  e("r[0] = lh[0] < r[0] ? lh[0] : r[0];");
  e("r[1] = lh[1] > r[1] ? lh[1] : r[1];");
  e("memcpy({}, r, sizeof r);", Y);
  e("}} else {{");
  e("const float lo = r[0], hi = r[1];");
  scale_and_zero_point();
  e("}}");
  e("}}");
  e.open_nest({.loops = {{"c", P, 1}}, .schedule_static = true});
  e("const int64_t i0 = c * {0}, i1 = i0 + {0} < {1} ? i0 + {0} : {1};", kFlatChunk, n);
  e("const float scale = {}[0], zf = (float){}[0];", S, Z);
  e("ONNXC_PRAGMA(omp simd)");
  e("for (int64_t i = i0; i < i1; ++i) {{");
  e("{}", quantize("i"));
  e("}}");
  e("}}");
}

// ---------------------------------------------------------------- shared by the products

// Whether the zero point at input `input` (-1: none) is absent or a constant of zeros.
bool zero_point_zero(const Node& n, int input) {
  if (input < 0) return true;
  const Value* v = n.in(static_cast<size_t>(input));
  return v->constant && std::all_of(v->constant->bytes.begin(), v->constant->bytes.end(), [](uint8_t b) { return b == 0; });
}

// C expression of parameter p at element offset `off` read as `type` ("0" when absent).
std::string param(CEmit& e, const QParam& p, const std::string& off, const std::string& type) {
  if (p.input < 0) return "0";
  const size_t i = static_cast<size_t>(p.input);
  return fmt::format("{}{}[{}]", type == e.in_ctype(i) ? "" : "(" + type + ")", e.in(i), off);
}

// "(bt / 6 % 2) * 24 + (bt % 3) * 8": the element offset for output batch index bt ("" when
// it does not vary).
std::string batch_offset(const Shape& batch, const Shape& st) {
  Shape cont = strides_of(batch);
  std::vector<std::string> terms;
  for (size_t d = 0; d < batch.size() && d < st.size(); ++d) {
    if (st[d] == 0) continue;
    std::string idx = cont[d] == 1 ? fmt::format("bt % {}", batch[d]) : fmt::format("bt / {} % {}", cont[d], batch[d]);
    terms.push_back(index_term("(" + idx + ")", st[d]));
  }
  return terms.empty() ? "" : sum_terms(terms);
}

// The store of accumulator acc[j] (int32 or requantized with multiplier `m`) into `dst`.
std::string store(bool qlinear, bool wrap, DType yt, const std::string& dst, const std::string& m, const std::string& yz, double lo,
                  double hi) {
  const std::string acc = wrap ? "(int32_t)acc[j]" : "acc[j]";
  if (!qlinear) return fmt::format("{} = {};", dst, acc);
  return round_saturate(dst, yt, fmt::format("(float){} * {}", acc, m), yz, lo, hi);
}

// The accumulation of int32 product `p` into `dst` (through uint32_t when it wraps).
std::string accumulate(bool wrap, const std::string& dst, const std::string& p) {
  return wrap ? fmt::format("{} += (uint32_t)({});", dst, p) : fmt::format("{} += {};", dst, p);
}

// "const int64_t cn = ...": the length of the chunk at `v` of at most T of n.
void chunk_len(CEmit& e, const std::string& v, int64_t n, int64_t T) {
  if (n % T == 0) e("const int64_t cn = {};", T);
  else e("const int64_t cn = {0} - {2} < {1} ? {0} - {2} : {1};", n, T, v);
}

// ---------------------------------------------------------------- MatMulInteger, QLinearMatMul

int vnni_bits(const Target& t);

// Whether MatMulInteger / QLinearMatMul runs on byte quads with AVX-512 VNNI
// (emit_qmatmul_quads): uint8 A (what DynamicQuantizeLinear and quantize_dynamic's models give),
// int8 or uint8 B, sums that stay in int32 (K up to 8192).
bool qmatmul_quads_apply(const Node& n, const Target& t) {
  const QMatMulGeom& g = qmatmul_geom(n);
  if (vnni_bits(t) != 512 || g.wrap || g.K < 1 || g.K > 8192) return false;
  return n.in(static_cast<size_t>(g.a))->dtype == DType::U8 &&
         (n.in(static_cast<size_t>(g.b))->dtype == DType::I8 || n.in(static_cast<size_t>(g.b))->dtype == DType::U8);
}

// The panel width of the byte-quads product: 64 columns (4 vectors, tiles of 6 rows), narrower
// where a packed panel would outgrow 192 KiB (K above 768 quads: 32 columns, 12 rows).
int64_t qmatmul_panel(int64_t K) {
  const int64_t QK = (K + 3) / 4;
  return QK * 64 * 4 <= (192 << 10) ? 64 : QK * 32 * 4 <= (192 << 10) ? 32 : 16;
}

// A constant 2-D B of the byte-quads product is stored in its panels at compile time
// (Layout::quads): the kernel then reads it as it is.
Layout qmatmul_weight_layout(const Node& n, size_t input, const Target& t) {
  if (!qmatmul_quads_apply(n, t)) return Layout::plain();
  const QMatMulGeom& g = qmatmul_geom(n);
  const Value* b = n.in(input);
  if (static_cast<int>(input) != g.b || !b->constant || b->shape.size() != 2) return Layout::plain();
  return Layout::quads(qmatmul_panel(g.K));
}

// Byte quads: per task (batch, panel of NB columns, block of rows) the panel of B is packed as
// int32 quads, bq[q][c] = the bytes of rows 4q..4q+3 of column j0 + c as int8 (uint8 B less
// 128, so that vpdpbusd's uint8 x int8 products take it), with each column's sum; tiles of MR
// rows x NB columns (NB / 16 vectors) of int32 accumulators add vpdpbusd of a panel row of
// quads and the row's 4 bytes of A broadcast. Then, with z the column's zero point in the
// packed form (b_zero_point, less 128 for uint8 B), exactly
//   sum (a - az)(b - bz) = acc - az * colsum - z * rowsum(a) + K * az * z
// (int8 B with no zero point or a zero one: acc - az * colsum, no row sums).
// A constant B is packed at compile time (Layout::quads, uint8 as it is: flipped as it is
// loaded), its column sums a table. Plain C where compiled without AVX-512 VNNI (same panel,
// same sums).
// Whether the byte-quads product may take A's batch dims as more rows: one B for every batch
// (packed or not), A's matrices one after the other, and parameters that do not vary by batch
// or by row (torchvision's ViT writes its projections as [197, 1, 768] x [768, 2304]: 197
// products of one row each, one row per tile, otherwise).
bool qmatmul_fold_batch(const QMatMulGeom& g) {
  if (numel(g.batch) <= 1) return false;
  auto zero = [](const Shape& st) { return std::all_of(st.begin(), st.end(), [](int64_t s) { return s == 0; }); };
  if (!zero(g.b_st) || g.a_st != batch_strides(g.batch, g.batch, g.M * g.K)) return false;
  for (const QParam* p : {&g.a_zp, &g.b_zp, &g.a_scale, &g.b_scale, &g.y_scale, &g.y_zp})
    if (!zero(p->batch_st)) return false;
  return g.a_zp.step == 0 && g.a_scale.step == 0;
}

void emit_qmatmul_quads(CEmit& e) {
  const QMatMulGeom& g = qmatmul_geom(e.node);
  const bool fold = qmatmul_fold_batch(g);
  const int64_t B = fold ? 1 : numel(g.batch), M = fold ? numel(g.batch) * g.M : g.M, N = g.N, K = g.K;
  const int64_t QK = (K + 3) / 4, KF = K / 4;
  const size_t ai = static_cast<size_t>(g.a), bi = static_cast<size_t>(g.b);
  const bool bu8 = e.node.in(bi)->dtype == DType::U8;
  const std::string A = e.in(ai), Bm = e.in(bi), Y = e.out(0);
  const int64_t NB = qmatmul_panel(K);
  const int64_t NV = NB / 16, MR = NV == 4 ? 6 : 12;
  const Value* bv = e.node.in(bi);
  const bool packed = bv->layout.kind == Layout::Kind::Quads;
  ONNXC_ASSERT(!packed || (bv->layout.block == NB && bv->constant), "MatMulInteger's B in quads of another panel width");
  const bool flipv = packed && bu8;  // uint8 B stored as it is: its bytes less 128 as they are loaded
  const int64_t NP = (N + NB - 1) / NB;
  const double work = 2.0 * static_cast<double>(B * M * N) * static_cast<double>(K);
  const bool par = e.parallel(work);
  // Blocks of rows when the panels leave threads idle (each block packs its panel again, unless
  // B was packed at compile time).
  int64_t MB = (M + MR - 1) / MR * MR;
  const int64_t want = 2 * std::max(1, e.target.threads);
  while (par && MB > MR && B * NP * ((M + MB - 1) / MB) < want) MB -= MR;
  const int64_t NRB = (M + MB - 1) / MB;
  // A fused Cast to float32 and the float steps after it (passes/fuse.cc, grow_to_float): applied
  // to each row of the tile as it is stored, the int32 product never written.
  const bool epi = !e.node.epilogue.empty();
  const std::vector<std::string> extras = epi ? matrix_epilogue_extras(e, "(bt * " + std::to_string(M) + " + ii)", "(j0 + c)")
                                              : std::vector<std::string>{};
  e.variant = fold ? "byte quads, AVX-512 VNNI vpdpbusd, A's batch as rows" : "byte quads, AVX-512 VNNI vpdpbusd";
  e("/* {}: [{}] x [{}, {}] x [{}, {}]{}; per task a panel of {} columns of B {} as int8 quads, tiles of {} rows x {} columns",
    e.node.op_type, fmt::join(g.batch, ","), g.M, K, K, N, fold ? fmt::format(" as one product of {} rows", M) : "", NB,
    packed ? "(packed at compile time)" : "packed", MR, NB);
  e(" * of int32 sums by vpdpbusd; the zero points applied to the sums afterwards */");
  open_tasks(e, {{"bt", B, 1}, {"jp", NP, 1}, {"rb", NRB, 1}}, par && B * NP * NRB > 1);
  auto poff = [&](const QParam& p, const std::string& idx) { return sum_terms({batch_offset(g.batch, p.batch_st), index_term(idx, p.step)}); };
  e("const int64_t ao = {};", fold ? "0" : sum_terms({batch_offset(g.batch, g.a_st)}));
  if (!packed) e("const int64_t bo = {};", sum_terms({batch_offset(g.batch, g.b_st)}));  // (a packed B is one matrix)
  e("const int64_t j0 = jp * {};", NB);
  if (N % NB == 0) e("const int64_t nc = {};", NB);
  else e("const int64_t nc = {0} - j0 < {1} ? {0} - j0 : {1};", N, NB);
  e("const int64_t i0 = rb * {0}, i1 = i0 + {0} < {1} ? i0 + {0} : {1};", MB, M);
  const std::string bz = g.b_zp.input >= 0 ? param(e, g.b_zp, poff(g.b_zp, "(j0 + c)"), "int32_t") : "0";
  // int8 B whose zero point is absent or zero (quantize_dynamic's symmetric weights): z = 0, and
  // the rows' sums are not needed.
  const bool no_z = !bu8 && zero_point_zero(e.node, g.b_zp.input);
  if (!no_z) {
    e("int32_t zq[{}];", NB);
    e("for (int64_t c = 0; c < {}; ++c) zq[c] = c < nc ? {}{} : 0;", NB, bz, bu8 ? " - 128" : "");
  }
  if (packed) {
    // The column sums of the packed values (uint8 less 128), padded with zeros to whole panels.
    const Tensor bp = to_plain(*bv->constant, bv->shape, bv->layout);
    std::vector<int64_t> sums(static_cast<size_t>(NP * NB), 0);
    for (int64_t k = 0; k < K; ++k)
      for (int64_t n = 0; n < N; ++n) {
        const uint8_t byte = bp.bytes[static_cast<size_t>(k * N + n)];
        sums[static_cast<size_t>(n)] += bu8 ? static_cast<int64_t>(byte) - 128 : static_cast<int8_t>(byte);
      }
    emit_table(e, "int32_t bsum", sums);
    e("const int32_t* restrict cs = bsum + j0;");
    e("const int32_t* restrict pb = (const int32_t*)(const void*)({} + jp * {});", Bm, QK * NB * 4);
  } else {
    e("const {}* restrict bb = {} + bo + j0;", e.in_ctype(bi), Bm);
    e("int32_t bq[{}] __attribute__((aligned(64)));", QK * NB);
    e("int32_t cs[{}];", NB);
    e("for (int64_t c = 0; c < {}; ++c) cs[c] = 0;", NB);
    // Pack: the four rows' bytes of each column into one int32 (zeros past K and past nc).
    const std::string flip = bu8 ? " ^ 0x80u" : "";
    e("for (int64_t q = 0; q < {}; ++q) {{", QK);
    e("int32_t* restrict dq = bq + q * {};", NB);
    e("if (4 * q + 4 <= {} && nc == {}) {{", K, NB);
    e("const uint8_t* restrict r0 = (const uint8_t*)(bb + (4 * q) * {0}), * restrict r1 = r0 + {0}, * restrict r2 = r1 + {0}, * restrict r3 = r2 + {0};", N);
    simd(e, NB);
    e("for (int64_t c = 0; c < {}; ++c) {{", NB);
    e("const uint32_t b0 = r0[c]{0}, b1 = r1[c]{0}, b2 = r2[c]{0}, b3 = r3[c]{0};", flip);
    e("dq[c] = (int32_t)(b0 | b1 << 8 | b2 << 16 | b3 << 24);");
    e("cs[c] += (int8_t)b0 + (int8_t)b1 + (int8_t)b2 + (int8_t)b3;");
    e("}}");
    e("}} else {{");
    e("for (int64_t c = 0; c < {}; ++c) {{", NB);
    e("uint32_t w = 0;");
    e("for (int64_t t = 0; t < 4; ++t) {{");
    e("const int64_t k = 4 * q + t;");
    e("const uint32_t b = k < {} && c < nc ? (uint32_t)(((const uint8_t*)bb)[k * {} + c]{}) : 0u;", K, N, flip);
    e("w |= b << (8 * t);");
    e("cs[c] += (int8_t)b;");
    e("}}");
    e("dq[c] = (int32_t)w;");
    e("}}");
    e("}}");
    e("}}");
    e("const int32_t* restrict pb = bq;");
  }
  e("int32_t acc[{}] __attribute__((aligned(64)));", MR * NB);
  // A tile of `rows` rows from row i: acc[r * NB + c] = the sum of the row's bytes times the
  // packed column's.
  auto tile = [&](int64_t rows) {
    e("{{");
    e("const uint8_t* restrict ar = {} + ao + i * {};", A, K);
    e("#if defined(__AVX512F__) && defined(__AVX512VNNI__) && defined(__AVX512BW__)");
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t v = 0; v < NV; ++v) e("__m512i a{}_{} = _mm512_setzero_si512();", r, v);
    if (flipv) e("const __m512i f80 = _mm512_set1_epi32((int)0x80808080u);");
    auto step = [&](const std::string& quad_of_row) {
      for (int64_t v = 0; v < NV; ++v) {
        const std::string ld = fmt::format("_mm512_loadu_si512((const void*)(wq + {}))", 16 * v);
        e("const __m512i w{} = {};", v, flipv ? "_mm512_xor_si512(" + ld + ", f80)" : ld);
      }
      for (int64_t r = 0; r < rows; ++r) {
        e("{{");
        e("const __m512i x = _mm512_broadcastd_epi32({});", fmt::format(fmt::runtime(quad_of_row), r * K));
        for (int64_t v = 0; v < NV; ++v) e("a{0}_{1} = _mm512_dpbusd_epi32(a{0}_{1}, x, w{1});", r, v);
        e("}}");
      }
    };
    e("const int32_t* restrict wq = pb;");
    // A count the compiler cannot see (as in emit_qconv_quads): with a known one gcc 12 copies
    // the accumulators to the stack on every step.
    e("int64_t nq = {}; __asm__(\"\" : \"+r\"(nq));", KF);
    e("for (int64_t q = 0; q < nq; ++q, wq += {}) {{", NB);
    step("_mm_loadu_si32((const void*)(ar + {} + 4 * q))");
    e("}}");
    if (K % 4 != 0) {
      e("{{");
      e("const __mmask16 km = (__mmask16){};", (1 << (K % 4)) - 1);
      step(fmt::format("_mm_maskz_loadu_epi8(km, (const void*)(ar + {{}} + {}))", 4 * KF));
      e("}}");
    }
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t v = 0; v < NV; ++v) e("_mm512_store_si512((void*)(acc + {}), a{}_{});", r * NB + 16 * v, r, v);
    if (epi) {
      // The epilogue's constants (GELU's polynomial) kept in vector registers from before the
      // tile would push its accumulators to the stack (gcc 12: 2.7x slower); every vector
      // register clobbered here makes the compiler load them after the tile instead.
      std::string regs;
      for (int x = 0; x < 32; ++x) regs += fmt::format("{}\"xmm{}\"", x ? ", " : "", x);
      e("__asm__ volatile(\"\" ::: {});", regs);
    }
    e("#else");
    e("for (int64_t r = 0; r < {}; ++r) {{", rows);
    e("const uint8_t* restrict a = ar + r * {};", K);
    e("for (int64_t c = 0; c < {}; ++c) {{", NB);
    e("int32_t sum = 0;");
    e("for (int64_t k = 0; k < {}; ++k) sum += (int32_t)a[k] * (int32_t)(int8_t)(uint8_t)(((uint32_t)pb[(k >> 2) * {} + c] >> (8 * (k & 3))){});", K, NB,
      flipv ? " ^ 0x80u" : "");
    e("acc[r * {} + c] = sum;", NB);
    e("}}");
    e("}}");
    e("#endif");
    // The zero points, then the store (requantized for QLinearMatMul).
    e("for (int64_t r = 0; r < {}; ++r) {{", rows);
    e("const int64_t ii = i + r;");
    e("const int32_t az = {};", param(e, g.a_zp, poff(g.a_zp, "ii"), "int32_t"));
    if (!no_z) {
      e("int32_t rs = 0;");
      e("{{");
      e("const uint8_t* restrict a = ar + r * {};", K);
      simd(e, K, "reduction(+:rs)");
      e("for (int64_t k = 0; k < {}; ++k) rs += a[k];", K);
      e("}}");
    }
    if (g.qlinear) {
      e("const float as = {};", param(e, g.a_scale, poff(g.a_scale, "ii"), "float"));
      e("const float ys = {};", param(e, g.y_scale, "0", "float"));
      e("const float yz = {};", param(e, g.y_zp, "0", "float"));
    }
    e("{}* restrict yr = {} + (bt * {} + ii) * {} + j0;", e.out_ctype(0), Y, M, N);
    simd(e, NB);
    e("for (int64_t c = 0; c < nc; ++c) {{");
    if (no_z) e("const int32_t v = acc[r * {} + c] - az * cs[c];", NB);
    else e("const int32_t v = acc[r * {} + c] - az * cs[c] - zq[c] * rs + {} * az * zq[c];", NB, K);
    if (epi) {
      e("{}", epilogue_element(e, "(float)v", extras, "yr[c]"));
    } else if (!g.qlinear) {
      e("yr[c] = v;");
    } else {
      const std::string bs = param(e, g.b_scale, poff(g.b_scale, "(j0 + c)"), "float");
      e("{}", round_saturate("yr[c]", e.out_dtype(0), fmt::format("(float)v * (as * {} / ys)", bs), "yz", g.qmin, g.qmax));
    }
    e("}}");
    e("}}");
    e("}}");
  };
  e("int64_t i = i0;");
  e("for (; i + {} <= i1; i += {}) {{", MR, MR);
  tile(MR);
  e("}}");
  e("for (; i < i1; ++i) {{");
  tile(1);
  e("}}");
  for (int k = 0; k < 3; ++k) e("}}");
  if (epi) e.epilogue_done = true;
}

// Whether the MatMulInteger's kernel applies a fused Cast to float32 and the float steps after it
// (Backend::takes_epilogue; passes/fuse.cc, grow_to_float): the byte-quads product does, on
// each row of a tile as it stores it.
bool qmatmul_takes_epilogue(const Node& n, const Node& step, const Target& t) {
  return n.op_type == "MatMulInteger" && step.op_type == "Cast" && step.out(0) && step.out(0)->dtype == DType::F32 &&
         qmatmul_quads_apply(n, t);
}

void emit_qmatmul(CEmit& e) {
  if (qmatmul_quads_apply(e.node, e.target)) {
    emit_qmatmul_quads(e);
    return;
  }
  ONNXC_ASSERT(e.node.epilogue.empty(), e.node.where() + ": the plain integer product takes no fused steps");
  const QMatMulGeom& g = qmatmul_geom(e.node);
  const int64_t B = numel(g.batch), M = g.M, N = g.N, K = g.K;
  if (B * M * N == 0) return;
  const char* acc_t = g.wrap ? "uint32_t" : "int32_t";
  const std::string A = e.in(static_cast<size_t>(g.a)), Bm = e.in(static_cast<size_t>(g.b)), Y = e.out(0);
  const int64_t T = std::min(N, kChunk);
  e("/* {}: [{}] x [{}, {}] x [{}, {}]; {} accumulators{}, rows of at most {} columns on the stack */", e.node.op_type,
    fmt::join(g.batch, ","), M, K, K, N, acc_t, g.wrap ? " (int32 wrapping modulo 2^32)" : "", T);
  const double work = 2.0 * static_cast<double>(B * M * N) * static_cast<double>(K);
  open_tasks(e, {{"bt", B, 1}, {"i", M, 1}}, B * M > 1 && e.parallel(work));
  e("const int64_t ao = {}, bo = {};", sum_terms({batch_offset(g.batch, g.a_st)}), sum_terms({batch_offset(g.batch, g.b_st)}));
  // Element offset of a row / column parameter.
  auto poff = [&](const QParam& p, const std::string& idx) {
    return sum_terms({batch_offset(g.batch, p.batch_st), index_term(idx, p.step)});
  };
  e("const int32_t az = {};", param(e, g.a_zp, poff(g.a_zp, "i"), "int32_t"));
  const bool bz_vec = g.b_zp.input >= 0 && g.b_zp.step != 0;
  if (!bz_vec) e("const int32_t bz = {};", param(e, g.b_zp, "0", "int32_t"));
  const std::string bz = bz_vec ? param(e, g.b_zp, poff(g.b_zp, "(j0 + j)"), "int32_t") : "bz";
  std::string mult = "mult";
  if (g.qlinear) {
    e("const float as = {};", param(e, g.a_scale, poff(g.a_scale, "i"), "float"));
    e("const float ys = {};", param(e, g.y_scale, "0", "float"));
    e("const float yz = {};", param(e, g.y_zp, "0", "float"));
    if (g.b_scale.step == 0) e("const float mult = as * {} / ys;", param(e, g.b_scale, "0", "float"));
    else mult = fmt::format("(as * {} / ys)", param(e, g.b_scale, poff(g.b_scale, "(j0 + j)"), "float"));
  }
  open_loop(e, "j0", N, T);
  chunk_len(e, "j0", N, T);
  e("{} acc[{}];", acc_t, T);
  simd(e, T);
  e("for (int64_t j = 0; j < {}; ++j) acc[j] = 0;", T);
  e("for (int64_t k = 0; k < {}; ++k) {{", K);
  e("const int32_t av = (int32_t){}[ao + i * {} + k] - az;", A, K);
  e("const {}* restrict bk = {} + bo + k * {} + j0;", e.in_ctype(static_cast<size_t>(g.b)), Bm, N);
  simd(e, T);
  e("for (int64_t j = 0; j < cn; ++j) {}", accumulate(g.wrap, "acc[j]", fmt::format("av * ((int32_t)bk[j] - {})", bz)));
  e("}}");
  e("{}* restrict yr = {} + (bt * {} + i) * {} + j0;", e.out_ctype(0), Y, M, N);
  simd(e, T);
  e("for (int64_t j = 0; j < cn; ++j) {{");
  e("{}", store(g.qlinear, g.wrap, e.out_dtype(0), "yr[j]", mult, "yz", g.qmin, g.qmax));
  e("}}");
  e("}}");  // j0
  e("}}");  // i
  e("}}");  // bt
}


// The body of a loop over the rows of a padded plane: row d (C pointer `d`, `width` elements)
// holds input row `ih` (declared by the caller) from column PL on; rows outside [0, IH) and the
// columns outside [PL, PL + IW) are zeros, cols(lo, hi) emits the loop that fills [lo, hi).
void emit_padded_row(CEmit& e, int64_t width, int64_t IH, int64_t IW, int64_t PL, const std::function<void(int64_t, int64_t)>& cols,
                     const std::string& fill = "0") {
  e("if (ih < 0 || ih >= {}) {{", IH);
  simd(e, width);
  e("for (int64_t t = 0; t < {}; ++t) d[t] = {};", width, fill);
  e("continue;");
  e("}}");
  const int64_t lo = std::min(PL, width), hi = std::min(PL + IW, width);
  if (lo > 0) e("for (int64_t t = 0; t < {}; ++t) d[t] = {};", lo, fill);
  if (hi > lo) cols(lo, hi);
  if (hi < width) e("for (int64_t t = {}; t < {}; ++t) d[t] = {};", hi, width, fill);
}

// The requantization's parameters of the packed integer conv kernels: `const float xs, ys, yz`
// (QLinearConv) and per output channel m = first + i, i < n, int32 bq[i] = `bias` (a C expression
// of m) and float mq[i] = x_scale * w_scale[m] / y_scale, both 0 for m >= M (padding lanes).
void emit_channel_params(CEmit& e, const QConvGeom& q, int64_t n, const std::string& first, const std::string& bias) {
  if (q.qlinear) {
    e("const float xs = {}, ys = {};", param(e, q.x_scale, "0", "float"), param(e, q.y_scale, "0", "float"));
    e("const float yz = {};", param(e, q.y_zp, "0", "float"));
  }
  e("int32_t bq[{}];", n);
  if (q.qlinear) e("float mq[{}];", n);
  e("for (int64_t i = 0; i < {}; ++i) {{", n);
  e("const int64_t m = {};", sum_terms({first == "0" ? "" : first, "i"}));
  e("if (m >= {}) {{ bq[i] = 0;{} continue; }}", q.conv.M, q.qlinear ? " mq[i] = 0;" : "");
  e("bq[i] = {};", bias);
  if (q.qlinear) e("mq[i] = xs * {} / ys;", param(e, q.w_scale, sum_terms({index_term("m", q.w_scale.step)}), "float"));
  e("}}");
}

// ---------------------------------------------------------------- QLinearConv, ConvInteger on 16-bit pairs

// Output channels per block (the int32 lanes of a 256-bit vector), output positions per register
// tile, and the most a task keeps on its stack for its band of paired input rows.
constexpr int64_t kPairLanes = 8;
constexpr int64_t kPairRows = 6;
constexpr int64_t kPairBandBytes = 192 << 10;

struct PairGeom {
  int64_t CP = 0;   // pairs (quads) of input channels per group
  int64_t R = 0;    // output rows per task
  int64_t BR = 0;   // input rows of a band of R output rows
  int64_t IWP = 0;  // input columns the output row reads, padding included
  int64_t MBG = 0;  // blocks of output channels per group
  int64_t bytes() const { return CP * BR * IWP * 4; }
};

// The geometry of the pairs kernel (group 2, 8 lanes) or of the quads kernel (group 4, L lanes).
PairGeom pair_geom(const QConvGeom& q, int64_t group = 2, int64_t lanes = kPairLanes) {
  const ConvGeom& g = q.conv;
  PairGeom p;
  p.CP = (g.CG + group - 1) / group;
  p.IWP = (g.out[1] - 1) * g.s[1] + (g.k[1] - 1) * g.d[1] + 1;
  p.MBG = (g.MG + lanes - 1) / lanes;
  const int64_t OH = g.out[0];
  for (p.R = std::max<int64_t>(1, (OH + 7) / 8);; --p.R) {
    p.BR = (p.R - 1) * g.s[0] + (g.k[0] - 1) * g.d[0] + 1;
    if (p.R == 1 || p.bytes() <= kPairBandBytes) break;
  }
  return p;
}

// Whether QLinearConv / ConvInteger runs on 16-bit pairs (its weights in Layout::pairs): 2-D,
// sums of products that cannot wrap int32 (the bias is then added modulo 2^32, as the direct
// kernel's wrapping accumulators do), blocks of output channels that do not straddle groups
// (one group, or a multiple of the block per group: not depthwise), and a band of one output
// row's paired input rows that fits a task's stack.
bool qconv_pairs_apply(const Node& n) {
  const QConvGeom& q = qconv_geom(n);
  const ConvGeom& g = q.conv;
  if (g.rank() != 2 || g.N == 0 || g.out_size() == 0) return false;
  if (!(g.G == 1 ? g.M >= 4 : g.MG % kPairLanes == 0)) return false;
  return !q.products_wrap && pair_geom(q).bytes() <= kPairBandBytes;
}

// The stores of a register tile (rm blocks of L channels from mb, rn positions from ow0 of row
// oh): element (r, channel m = mb * L + j) is `value` (of r and j).
void emit_pair_stores(CEmit& e, const QConvGeom& q, int rm, int64_t rn, bool groups, const std::string& value, int64_t L = kPairLanes) {
  const ConvGeom& g = q.conv;
  e("for (int64_t j = 0; j < {}; ++j) {{", rm * L);
  e("const int64_t m = mb * {} + j;", L);
  if (!groups && g.M % L != 0) e("if (m >= {}) break;", g.M);
  e("{}* restrict ym = {} + ((n * {} + m) * {} + oh) * {} + ow0;", e.out_ctype(0), e.out(0), g.M, g.out[0], g.out[1]);
  e("for (int64_t r = 0; r < {}; ++r) ym[r] = {};", rn, value);
  e("}}");
}

// The plain-C end of a register tile of the pairs and quads kernels (its sums in acc, position r
// of block j at acc[(r * rm + j) * L]): the bias (modulo 2^32) and the requantization, one simd
// loop per position over its rm * L channels (in place: the requantized values fit int32), then
// the stores.
void emit_tile_finish(CEmit& e, const QConvGeom& q, int rm, int64_t rn, bool groups, int64_t L) {
  e("for (int64_t r = 0; r < {}; ++r) {{", rn);
  e("int32_t* restrict ar = acc + r * {};", rm * L);
  simd(e, rm * L);
  e("for (int64_t j = 0; j < {}; ++j) {{", rm * L);
  e("const int32_t a = (int32_t)((uint32_t)ar[j] + (uint32_t)bq[mb * {} + j]);", L);
  if (q.qlinear) e("{}", round_saturate("ar[j]", DType::I32, fmt::format("(float)a * mq[mb * {} + j]", L), "yz", q.qmin, q.qmax));
  else e("ar[j] = a;");
  e("}}");
  e("}}");
  emit_pair_stores(e, q, rm, rn, groups, fmt::format("({})acc[(r * {} + j / {}) * {} + j % {}]", e.out_ctype(0), rm, L, L, L), L);
}

// x * w on 16-bit pairs, direct: per task (image, band of R output rows) the band's input rows
// with each pair of input channels side by side as int16 x - x_zero_point in one int32 (0 in
// the padding), then per output row, pair of blocks of 8 output channels and tile of up to 6
// positions a register tile of int32 accumulators; each step (channel pair, kh, kw) adds, on
// AVX2, _mm256_madd_epi16 of a block's 8 lanes of w - w_zero_point pairs and the position's pair
// broadcast (16 exact products, 8 sums), elsewhere the same sums in plain C. Exact:
// |x - zx|, |w - zw| <= 255 and CG·KH·KW·255² < 2^31. Then the bias (modulo 2^32) and the
// requantization of the direct kernel.
void emit_qconv_pairs(CEmit& e) {
  const QConvGeom& q = qconv_geom(e.node);
  const ConvGeom& g = q.conv;
  const PairGeom pg = pair_geom(q);
  const int64_t IH = g.in[0], IW = g.in[1], OH = g.out[0], OW = g.out[1], KH = g.k[0], KW = g.k[1];
  const int64_t SH = g.s[0], SW = g.s[1], DH = g.d[0], DW = g.d[1], PT = g.pb[0], PL = g.pb[1];
  const int64_t CP = pg.CP, R = pg.R, BR = pg.BR, IWP = pg.IWP, MBG = pg.MBG, RN = kPairRows, L = kPairLanes;
  const int64_t KP = CP * KH * KW;  // steps per output position
  const size_t xi = static_cast<size_t>(q.x), wi = static_cast<size_t>(q.w);
  const std::string X = e.in(xi), W = e.in(wi), Y = e.out(0);
  const bool wu8 = e.in_dtype(wi) == DType::U8;
  const char* xt = e.in_ctype(xi);
  const char* wt = e.in_ctype(wi);
  // w's zero point: none when absent or a constant zero.
  bool wz = q.w_zp.input >= 0;
  if (wz) {
    const Value* v = e.node.in(static_cast<size_t>(q.w_zp.input));
    if (v->constant) {
      const Tensor& t = *v->constant;
      wz = std::any_of(t.bytes.begin(), t.bytes.end(), [](uint8_t b) { return b != 0; });
    }
  }
  const bool wz_vec = wz && q.w_zp.step != 0;
  const bool avx2 = avx2_target(e);
  e.variant = avx2 ? "16-bit pairs, AVX2 pmaddwd" : "16-bit pairs, plain C";
  e.plan = fmt::format("bands of {} output rows ({} x {} paired input rows, {} KB), {}x{} register tiles (channels x positions)", R, BR,
                       IWP, (pg.bytes() + 1023) / 1024, 2 * L, RN);
  e("/* {}: direct, on 16-bit pairs (weights {}); tasks (image, band of {} output rows): the band's input rows with each */",
    e.node.op_type, e.in_layout(wi).str(4), R);
  e("/* pair of channels side by side as int16 x - x_zero_point (0 in the padding), then per output row, two blocks of 8 */");
  e("/* output channels and up to {} positions, int32 accumulators: AVX2 _mm256_madd_epi16, otherwise the same in plain C */", RN);
  const double work = 2.0 * static_cast<double>(g.N * g.M * OH * OW) * static_cast<double>(g.CG * KH * KW);
  const int64_t bands = (OH + R - 1) / R;
  open_tasks(e, {{"n", g.N, 1}, {"oh0", OH, R}}, g.N * bands > 1 && e.parallel(work));
  if (OH % R == 0) e("const int64_t rh = {};", R);
  else e("const int64_t rh = {0} - oh0 < {1} ? {0} - oh0 : {1};", OH, R);
  e("int32_t xp[{}];", CP * BR * IWP);
  e("int32_t acc[{}];", 2 * L * RN);
  e("const int32_t xz = {};", param(e, q.x_zp, "0", "int32_t"));
  if (wz && !wz_vec) e("const int32_t wz = {};", param(e, q.w_zp, "0", "int32_t"));
  // Per output channel (blocks padded to 8 lanes with zeros): the bias and the requantization's multiplier.
  emit_channel_params(e, q, (g.M + L - 1) / L * L, "0", q.bias >= 0 ? fmt::format("{}[m]", e.in(static_cast<size_t>(q.bias))) : "0");
  const bool groups = g.G > 1;
  if (groups) e("for (int64_t gi = 0; gi < {}; ++gi) {{", g.G);
  e("const {}* restrict xg = {} + (n * {} + {}) * {};", xt, X, g.C, groups ? index_term("gi", g.CG) : "0", IH * IW);
  // The band: row j of channel pair c2 is input row oh0 * SH - PT + j, column t input column t - PL.
  e("for (int64_t c2 = 0; c2 < {}; ++c2) {{", CP);
  e("for (int64_t j = 0; j < {}; ++j) {{", BR);
  e("int32_t* restrict d = xp + (c2 * {} + j) * {};", BR, IWP);
  e("const int64_t ih = {};", sum_terms({index_term("oh0", SH), PT ? fmt::format("-{}", PT) : "", "j"}));
  emit_padded_row(e, IWP, IH, IW, PL, [&](int64_t lo, int64_t hi) {
    e("const {}* restrict x0 = xg + (2 * c2 * {} + ih) * {};", xt, IH, IW);
    auto pair_loop = [&](bool two) {
      simd(e, hi - lo);
      e("for (int64_t t = {}; t < {}; ++t) {{", lo, hi);
      e("const uint32_t a = (uint16_t)((int32_t)x0[t - {}] - xz);", PL);
      if (two) e("const uint32_t b = (uint16_t)((int32_t)x0[t - {} + {}] - xz);", PL, IH * IW);
      e("d[t] = (int32_t)({});", two ? "a | b << 16" : "a");
      e("}}");
    };
    if (g.CG % 2 == 0) {
      pair_loop(true);
    } else {  // the last channel has no partner: its pair's high half is 0
      e("if (2 * c2 + 1 < {}) {{", g.CG);
      pair_loop(true);
      e("}} else {{");
      pair_loop(false);
      e("}}");
    }
  });
  e("}}");  // j
  e("}}");  // c2
  // One register tile: rm blocks of channels from mb, rn positions from column ow0 of row oh.
  auto tile = [&](int rm, int64_t rn, const std::string& ow0) {
    e("{{");
    e("const int64_t ow0 = {};", ow0);
    for (int j = 0; j < rm; ++j) e("const {}* restrict w{} = {} + (mb + {}) * {};", wt, j, W, j, KP * 2 * L);
    e("const int32_t* restrict xo = xr + {};", index_term("ow0", SW));
    if (wz_vec) {
      e("int16_t zl[{}];", 2 * L * rm);
      e("for (int64_t j = 0; j < {}; ++j) {{", L * rm);
      e("const int64_t m = mb * {} + j;", L);
      e("zl[2 * j] = zl[2 * j + 1] = m < {} ? (int16_t){} : 0;", g.M, param(e, q.w_zp, sum_terms({index_term("m", q.w_zp.step)}), "int32_t"));
      e("}}");
    }
    // The steps: channel pair c2, kernel row kh, kernel column kw; position r reads xk[r * SW + kw * DW].
    auto steps_open = [&]() {
      e("for (int64_t c2 = 0; c2 < {}; ++c2) {{", CP);
      e("for (int64_t kh = 0; kh < {}; ++kh) {{", KH);
      e("const int32_t* restrict xk = xo + (c2 * {} + {}) * {};", BR, index_term("kh", DH), IWP);
      e("const int64_t s0 = (c2 * {} + kh) * {};", KH, KW);
      e("for (int64_t kw = 0; kw < {}; ++kw) {{", KW);
    };
    auto pos = [&](int64_t r) { return sum_terms({std::to_string(r * SW), index_term("kw", DW)}); };
    e("#if defined(__AVX2__)");
    for (int j = 0; j < rm; ++j) {
      if (wz_vec) e("const __m256i z{0} = _mm256_loadu_si256((const __m256i*)(zl + {1}));", j, 2 * L * j);
      else if (wz) e("const __m256i z{} = _mm256_set1_epi16((int16_t)wz);", j);
    }
    for (int64_t r = 0; r < rn; ++r)
      for (int j = 0; j < rm; ++j) e("__m256i a{}_{} = _mm256_setzero_si256();", r, j);
    steps_open();
    for (int j = 0; j < rm; ++j) {
      std::string v = fmt::format("{}(_mm_loadu_si128((const __m128i*)(w{} + (s0 + kw) * {})))",
                                  wu8 ? "_mm256_cvtepu8_epi16" : "_mm256_cvtepi8_epi16", j, 2 * L);
      if (wz) v = fmt::format("_mm256_sub_epi16({}, z{})", v, j);
      e("const __m256i v{} = {};", j, v);
    }
    for (int64_t r = 0; r < rn; ++r) {
      e("{{");
      e("const __m256i b = _mm256_set1_epi32(xk[{}]);", pos(r));
      for (int j = 0; j < rm; ++j) e("a{0}_{1} = _mm256_add_epi32(a{0}_{1}, _mm256_madd_epi16(v{1}, b));", r, j);
      e("}}");
    }
    e("}}");  // kw
    e("}}");  // kh
    e("}}");  // c2
    // Bias (modulo 2^32) and requantization on the vectors, the same float operations as the
    // scalar form: _mm256_round_ps to nearest is nearbyintf, max/min are its compare-selects.
    for (int j = 0; j < rm; ++j) {
      e("const __m256i bv{} = _mm256_loadu_si256((const __m256i*)(bq + (mb + {}) * {}));", j, j, L);
      if (q.qlinear) e("const __m256 mv{} = _mm256_loadu_ps(mq + (mb + {}) * {});", j, j, L);
    }
    if (q.qlinear) {
      e("const __m256 yzv = _mm256_set1_ps(yz), lov = _mm256_set1_ps({}), hiv = _mm256_set1_ps({});", c_float(q.qmin), c_float(q.qmax));
    }
    for (int64_t r = 0; r < rn; ++r)
      for (int j = 0; j < rm; ++j) {
        e("{{");
        e("__m256i t = _mm256_add_epi32(a{}_{}, bv{});", r, j, j);
        if (q.qlinear) {
          e("__m256 f = _mm256_round_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(t), mv{}), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);", j);
          e("t = _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(_mm256_add_ps(f, yzv), lov), hiv));");
        }
        e("_mm256_storeu_si256((__m256i*)(acc + {}), t);", (r * rm + j) * L);
        e("}}");
      }
    emit_pair_stores(e, q, rm, rn, groups, fmt::format("({})acc[(r * {} + j / 8) * 8 + j % 8]", e.out_ctype(0), rm));
    e("#else");
    simd(e, rm * rn * L);
    e("for (int64_t i = 0; i < {}; ++i) acc[i] = 0;", rm * rn * L);
    steps_open();
    for (int j = 0; j < rm; ++j) {
      e("{{");
      e("const {}* restrict wk = w{} + (s0 + kw) * {};", wt, j, 2 * L);
      for (int64_t r = 0; r < rn; ++r) {
        e("{{");
        e("const int32_t p = xk[{}], x0 = (int16_t)(uint16_t)(uint32_t)p, x1 = (int16_t)(uint16_t)((uint32_t)p >> 16);", pos(r));
        e("int32_t* restrict ar = acc + {};", (r * rm + j) * L);
        const std::string z0 = wz_vec ? fmt::format("zl[{} + 2 * v]", 2 * L * j) : wz ? "wz" : "";
        const std::string wa = z0.empty() ? "(int32_t)wk[2 * v]" : fmt::format("((int32_t)wk[2 * v] - {})", z0);
        const std::string wb = z0.empty() ? "(int32_t)wk[2 * v + 1]" : fmt::format("((int32_t)wk[2 * v + 1] - {})", z0);
        simd(e, L);
        e("for (int64_t v = 0; v < {}; ++v) ar[v] += {} * x0 + {} * x1;", L, wa, wb);
        e("}}");
      }
      e("}}");
    }
    e("}}");  // kw
    e("}}");  // kh
    e("}}");  // c2
    emit_tile_finish(e, q, rm, rn, groups, L);
    e("#endif");
    e("}}");
  };
  const std::string mb0 = groups ? fmt::format("gi * {}", MBG) : "0";
  const std::string mb1 = groups ? fmt::format("gi * {} + {}", MBG, MBG) : std::to_string(MBG);
  // A row of tiles: full ones of RN positions, then one of the OW % RN left.
  auto row = [&](int rm) {
    if (OW >= RN) {
      e("for (int64_t t0 = 0; t0 + {} <= {}; t0 += {})", RN, OW, RN);
      tile(rm, RN, "t0");
    }
    if (OW % RN) tile(rm, OW % RN, std::to_string(OW - OW % RN));
  };
  e("for (int64_t oh = oh0; oh < oh0 + rh; ++oh) {{");
  e("const int32_t* restrict xr = xp + {};", index_term("(oh - oh0)", SH * IWP));
  if (MBG >= 2) {
    e("for (int64_t mb = {}; mb + 2 <= {}; mb += 2) {{", mb0, mb1);
    row(2);
    e("}}");
  }
  if (MBG % 2) {
    e("{{");
    e("const int64_t mb = {} - 1;", mb1);
    row(1);
    e("}}");
  }
  e("}}");  // oh
  if (groups) e("}}");  // gi
  e("}}");  // oh0
  e("}}");  // n
}

// ---------------------------------------------------------------- QLinearConv, ConvInteger on byte quads (VNNI)

// The width of the target's byte dot products: 512 (AVX-512 VNNI), 256 (AVX-VNNI), 0 (none).
int vnni_bits(const Target& t) {
  if (t.arch != "x86-64") return 0;
  auto has = [&](const char* f) { return std::count(t.features.begin(), t.features.end(), f) > 0; };
  return has("avx512vnni") && has("avx512f") ? 512 : has("avxvnni") && has("avx2") ? 256 : 0;
}

// Positions per register tile of the quads kernel: 2 x 12 accumulators of 32 registers, or 2 x 6 of 16.
int64_t quad_rows(int bits) { return bits == 512 ? 12 : 6; }

// Whether QLinearConv / ConvInteger runs on byte quads (weights in Layout::pairs(L, 4)): where
// it would run on pairs, on a target with VNNI, with int8 weights whose zero point is zero (what
// quantize_static writes: symmetric per-channel weights), and, with groups, a whole number of
// blocks of L = vector lanes output channels per group.
bool qconv_quads_apply(const Node& n, const Target& t) {
  const int bits = vnni_bits(t);
  if (bits == 0 || !qconv_pairs_apply(n)) return false;
  const QConvGeom& q = qconv_geom(n);
  const ConvGeom& g = q.conv;
  const int64_t L = bits / 32;
  if (n.in(static_cast<size_t>(q.w))->dtype != DType::I8 || !zero_point_zero(n, q.w_zp.input)) return false;
  if (g.G > 1 && g.MG % L != 0) return false;
  return pair_geom(q, 4, L).bytes() <= kPairBandBytes;
}

Layout qconv_weight_layout(const Node& n, size_t input, const Target& t) {
  if (static_cast<int>(input) != qconv_geom(n).w || !qconv_pairs_apply(n)) return Layout::plain();
  if (qconv_quads_apply(n, t)) return Layout::pairs(vnni_bits(t) / 32, 4);
  return Layout::pairs(kPairLanes);
}

// `static const int32_t wsum[]`: each output channel's sum of its int8 weights (the constant
// weights of the quads kernels), padded with zeros to a multiple of 16 channels.
void emit_weight_sums(CEmit& e, const QConvGeom& q) {
  const ConvGeom& g = q.conv;
  const size_t wi = static_cast<size_t>(q.w);
  const Value* wv = e.node.in(wi);
  ONNXC_ASSERT(wv->constant != nullptr, "byte quads without constant weights");
  const Tensor wp = to_plain(*wv->constant, wv->shape, wv->layout);
  const int64_t KS = g.CG * g.k_size(), M16 = (g.M + 15) / 16 * 16;
  std::vector<int64_t> ws(static_cast<size_t>(M16), 0);
  for (int64_t m = 0; m < g.M; ++m)
    for (int64_t k = 0; k < KS; ++k) ws[static_cast<size_t>(m)] += static_cast<int8_t>(wp.bytes[static_cast<size_t>(m * KS + k)]);
  emit_table(e, "int32_t wsum", ws);
}

// The quads kernels' int32 bias of channel m: the bias less xz times its weight sum (wsum), modulo 2^32.
std::string quad_bias(CEmit& e, const QConvGeom& q) {
  return fmt::format("(int32_t)((uint32_t){} - (uint32_t)xz * (uint32_t)wsum[m])",
                     q.bias >= 0 ? fmt::format("{}[m]", e.in(static_cast<size_t>(q.bias))) : "0");
}

// Pointwise convolutions (1x1, one group) on byte quads with AVX-512 VNNI take the output positions
// as the vector lanes instead (emit_qconv_quads_pointwise): tasks (image, band of R output rows,
// chunk of MC output channels); the band's positions packed as quads, one int32 per position and
// channel quad, in one row of PV (R x OW rounded up to 16) per quad; tiles of 8 output channels x
// up to 3 vectors of 16 positions, each step (channel quad) adding vpdpbusd of the positions'
// quads and the channel's 4 weights broadcast. A vector of sums is 16 consecutive positions of one
// channel: requantized, packed to bytes and stored as they are (no transposition to the channel-
// major output, which costs the tile kernel as much as its sums where the reduction is short).
constexpr int64_t kPwChannels = 8;
constexpr int64_t kPwVectors = 3;

struct PwGeom {
  int64_t R = 0, PV = 0, MC = 0;
  int64_t bytes(int64_t CQ) const { return CQ * PV * 4; }
};

PwGeom pw_geom(const QConvGeom& q) {
  const ConvGeom& g = q.conv;
  const int64_t OH = g.out[0], OW = g.out[1], CQ = (g.CG + 3) / 4;
  PwGeom p;
  // Rows enough for about 6 vectors of positions, fewer where the band would not fit the stack.
  p.R = std::min(OH, std::max<int64_t>(1, (96 + OW - 1) / OW));
  for (;; --p.R) {
    p.PV = (p.R * OW + 15) / 16 * 16;
    if (p.R == 1 || p.bytes(CQ) <= kPairBandBytes) break;
  }
  // Channel chunks: enough tasks for 8 threads where the channels allow it (at least 64 a task).
  const int64_t M8 = (g.M + kPwChannels - 1) / kPwChannels * kPwChannels, bands = g.N * ((OH + p.R - 1) / p.R);
  int64_t split = std::max<int64_t>(1, std::min<int64_t>(M8 / 64, (8 + bands - 1) / bands));
  p.MC = (M8 / kPwChannels + split - 1) / split * kPwChannels;
  return p;
}

bool quads_pointwise_apply(const QConvGeom& q, int64_t L) {
  const ConvGeom& g = q.conv;
  // (A map of fewer than 16 positions, a Gemm's rows as a 1x1 conv, would fill a fraction of each vector.)
  return L == 16 && g.G == 1 && g.k[0] == 1 && g.k[1] == 1 && g.out[0] * g.out[1] >= 16 && pw_geom(q).bytes((g.CG + 3) / 4) <= kPairBandBytes;
}

// A fused onnxc.qdq_add / qdq_mul step (passes/fuse.cc, grow_integer): its constant scales and
// zero points, which operand the anchor's bytes are, and y's range.
struct QdqStep {
  bool mul = false, anchor_a = true;
  float sa = 0, sb = 0, sy = 0;
  int64_t za = 0, zb = 0, zy = 0;
  double lo = 0, hi = 0;
};

QdqStep qdq_step(const Node& m, const Value* anchor_out) {
  QdqStep s;
  s.mul = m.op_type == "onnxc.qdq_mul";
  s.anchor_a = m.in(0) == anchor_out;
  s.sa = m.in(1)->constant->data<float>()[0];
  s.za = m.in(2)->constant->get_i64(0);
  s.sb = m.in(4)->constant->data<float>()[0];
  s.zb = m.in(5)->constant->get_i64(0);
  s.sy = m.in(6)->constant->data<float>()[0];
  s.zy = m.in(7)->constant->get_i64(0);
  qdq_add_range(m, &s.lo, &s.hi);
  return s;
}

// onnxc.qdq_add / qdq_mul as a fused step of an integer group (CKernel::stmts): a and b are
// args[0] and args[3] (the anchor's byte as a float local, or the extra input's element), the
// constants baked in; the same float operations as emit_qdq_add, `dst` the quantized value.
std::string qdq_add_stmts(const Node& m, const std::vector<std::string>& args, const std::string& dst) {
  const QdqStep s = qdq_step(m, nullptr);
  return fmt::format("float {0}; {{ const float v = (float)((int32_t)({1}) - {2}) * {3} {4} (float)((int32_t)({5}) - {6}) * {7}; {8} }}", dst,
                     args.at(0), s.za, c_float(s.sa), s.mul ? "*" : "+", args.at(3), s.zb, c_float(s.sb),
                     round_saturate(dst, DType::F32, fmt::format("v / {}", c_float(s.sy)), c_float(static_cast<double>(s.zy)), s.lo, s.hi));
}

void emit_qconv_quads_pointwise(CEmit& e) {
  const QConvGeom& q = qconv_geom(e.node);
  const ConvGeom& g = q.conv;
  const size_t xi = static_cast<size_t>(q.x), wi = static_cast<size_t>(q.w);
  const PwGeom pw = pw_geom(q);
  const int64_t IH = g.in[0], IW = g.in[1], OH = g.out[0], OW = g.out[1], SH = g.s[0], SW = g.s[1], PT = g.pb[0], PL = g.pb[1];
  const int64_t CQ = (g.CG + 3) / 4, R = pw.R, PV = pw.PV, MC = pw.MC, MT = kPwChannels, NV = kPwVectors;
  const int64_t M8 = (g.M + MT - 1) / MT * MT;
  const std::string X = e.in(xi), W = e.in(wi), Y = e.out(0);
  const bool xs8 = e.in_dtype(xi) == DType::I8;
  const char* xt = e.in_ctype(xi);
  const char* yt = e.out_ctype(0);
  // A fused residual add (passes/fuse.cc): applied to each vector before it is stored.
  const Node* step = e.node.epilogue.empty() ? nullptr : e.node.epilogue[0].get();
  ONNXC_ASSERT(!step || (q.qlinear && e.node.epilogue.size() == 1 && e.node.extra_inputs.size() == 1),
               e.node.where() + ": pointwise byte quads with an epilogue other than one onnxc.qdq_add");
  const QdqStep st = step ? qdq_step(*step, e.node.anchor_out) : QdqStep{};
  const char* rt = step ? dtype_ctype(e.node.extra_inputs[0]->dtype) : "";
  if (step) e.epilogue_done = true;
  e.variant = "byte quads, positions as lanes, AVX-512 VNNI vpdpbusd";
  e.plan = fmt::format("tasks of {} output rows ({} positions of {} channel quads, {} KB) x {} channels, {}x{} register tiles (channels x "
                       "positions)", R, PV, CQ, (pw.bytes(CQ) + 1023) / 1024, MC, MT, NV * 16);
  e("/* {}: pointwise, on byte quads (weights {}) with the output positions as the vector lanes; tasks (image, band of {} */",
    e.node.op_type, e.in_layout(wi).str(4), R);
  e("/* output rows, {} output channels): the band's positions with each quad of channels as 4 bytes (uint8{}), then */", MC,
    xs8 ? ": int8 x plus 128" : "");
  e("/* tiles of {} channels x {} positions: _mm512_dpbusd_epi32 of the positions' quads and a channel's 4 weights */", MT, NV * 16);
  e("/* broadcast where compiled for it, otherwise the same in plain C; x's zero point times each channel's weight sum */");
  e("/* is taken off with the bias; each vector of 16 positions of one channel is requantized and stored as it is */");
  if (step)
    e("/* after {} of its bytes and the other operand's ({}): the residual add in registers */", step->op_type, step->name);
  emit_weight_sums(e, q);
  const double work = 2.0 * static_cast<double>(g.N * g.M * OH * OW) * static_cast<double>(g.CG);
  const int64_t tasks = g.N * ((OH + R - 1) / R) * ((M8 + MC - 1) / MC);
  open_tasks(e, {{"n", g.N, 1}, {"oh0", OH, R}, {"m0", M8, MC}}, tasks > 1 && e.parallel(work));
  if (OH % R == 0) e("const int64_t rh = {};", R);
  else e("const int64_t rh = {0} - oh0 < {1} ? {0} - oh0 : {1};", OH, R);
  e("const int64_t np = rh * {};  /* positions in the band */", OW);
  e("const int64_t nvec = (np + 15) / 16;");
  if (M8 % MC == 0) e("const int64_t mc = {};", MC);
  else e("const int64_t mc = {0} - m0 < {1} ? {0} - m0 : {1};", M8, MC);
  e("int32_t xp[{}];", CQ * PV);
  e("int32_t acc[{}];", MT * NV * 16);
  e("const int32_t xz = {}{};", param(e, q.x_zp, "0", "int32_t"), xs8 ? " + 128" : "");
  e("const int32_t xzq = (int32_t)((uint32_t)xz * 0x01010101u);");
  // Per output channel of the chunk (past M: zeros): the bias less xz times the weight sum, the multiplier.
  emit_channel_params(e, q, MC, "m0", quad_bias(e, q));
  // The band: position p = r * OW + ow of quad c4 at xp[c4 * PV + p]; positions past np hold xzq.
  e("const {}* restrict xg = {} + n * {};", xt, X, g.C * IH * IW);
  e("for (int64_t c4 = 0; c4 < {}; ++c4) {{", CQ);
  e("int32_t* restrict d = xp + c4 * {};", PV);
  e("for (int64_t r = 0; r < rh; ++r) {{");
  e("const int64_t ih = {};", sum_terms({index_term("(oh0 + r)", SH), PT ? fmt::format("-{}", PT) : ""}));
  e("int32_t* restrict dr = d + r * {};", OW);
  e("if (ih < 0 || ih >= {}) {{", IH);
  e("for (int64_t ow = 0; ow < {}; ++ow) dr[ow] = xzq;", OW);
  e("continue;");
  e("}}");
  e("const {}* restrict x0 = xg + (4 * c4 * {} + ih) * {};", xt, IH, IW);
  // The valid columns: iw = ow * SW - PL in [0, IW).
  const int64_t lo = std::min(OW, (PL + SW - 1) / SW), hi = std::max(lo, std::min(OW, (IW - 1 + PL) / SW + 1));
  if (lo > 0) e("for (int64_t ow = 0; ow < {}; ++ow) dr[ow] = xzq;", lo);
  const std::string col = sum_terms({index_term("ow", SW), PL ? fmt::format("-{}", PL) : ""});
  const std::string byte = xs8 ? "(uint32_t)(uint8_t)(x0[{} + {}] ^ (int8_t)-128)" : "(uint32_t)x0[{} + {}]";
  auto quad_loop = [&](int64_t have) {
    simd(e, hi - lo);
    e("for (int64_t ow = {}; ow < {}; ++ow) {{", lo, hi);
    std::string v;
    for (int64_t i = 0; i < have; ++i)
      v += (v.empty() ? "" : " | ") + fmt::format(fmt::runtime(byte), col, i * IH * IW) + (i ? fmt::format(" << {}", 8 * i) : "");
    e("dr[ow] = (int32_t)({});", v);
    e("}}");
  };
  if (g.CG % 4 == 0) {
    quad_loop(4);
  } else {
    e("if (4 * c4 + 4 <= {}) {{", g.CG);
    quad_loop(4);
    e("}} else {{");
    quad_loop(g.CG % 4);
    e("}}");
  }
  if (hi < OW) e("for (int64_t ow = {}; ow < {}; ++ow) dr[ow] = xzq;", hi, OW);
  e("}}");  // r
  e("for (int64_t p = np; p < {}; ++p) d[p] = xzq;", PV);
  e("}}");  // c4
  // Tiles: channels mt..mt+7 (their weights' quads at wt + c4 * 64 + 4 i), vectors pv..pv+nv-1.
  auto tile = [&](int64_t nv) {
    e("{{");
    e("#if defined(__AVX512F__) && defined(__AVX512VNNI__) && defined(__AVX512BW__) && defined(__AVX512VL__)");
    for (int64_t i = 0; i < MT; ++i)
      for (int64_t v = 0; v < nv; ++v) e("__m512i a{}_{} = _mm512_setzero_si512();", i, v);
    e("const int32_t* restrict xq = xp + pv * 16;");
    e("const int8_t* restrict wq = wt;");
    e("int64_t nq = {}; __asm__(\"\" : \"+r\"(nq));  /* (see emit_qconv_quads) */", CQ);
    e("for (int64_t c4 = 0; c4 < nq; ++c4, xq += {}, wq += 64) {{", PV);
    for (int64_t v = 0; v < nv; ++v) e("const __m512i xv{0} = _mm512_loadu_si512((const void*)(xq + {1}));", v, 16 * v);
    for (int64_t i = 0; i < MT; ++i) {
      e("{{");
      e("const __m512i b = _mm512_broadcastd_epi32(_mm_loadu_si32((const void*)(wq + {})));", 4 * i);
      for (int64_t v = 0; v < nv; ++v) e("a{0}_{1} = _mm512_dpbusd_epi32(a{0}_{1}, xv{1}, b);", i, v);
      e("}}");
    }
    e("}}");
    for (int64_t i = 0; i < MT; ++i)
      for (int64_t v = 0; v < nv; ++v) e("_mm512_storeu_si512((void*)(acc + {}), a{}_{});", (i * NV + v) * 16, i, v);
    if (q.qlinear) {
      e("const __m512 yzv = _mm512_set1_ps(yz), lov = _mm512_set1_ps({}), hiv = _mm512_set1_ps({});", c_float(q.qmin), c_float(q.qmax));
    }
    e("for (int64_t i = 0; i < {}; ++i) {{", MT);
    e("const int64_t m = mt + i;");
    if (M8 > g.M) e("if (m >= {}) break;", g.M);
    e("const __m512i bv = _mm512_set1_epi32(bq[m - m0]);");
    if (q.qlinear) e("const __m512 mv = _mm512_set1_ps(mq[m - m0]);");
    e("{}* restrict ym = {} + ((n * {} + m) * {} + oh0) * {};", yt, Y, g.M, OH, OW);
    if (step) e("const {}* restrict rm = {} + ((n * {} + m) * {} + oh0) * {};", rt, e.extra(0), g.M, OH, OW);
    e("for (int64_t v = 0; v < {}; ++v) {{", nv);
    e("const int64_t p = (pv + v) * 16;");
    e("const __mmask16 k = np - p >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (np - p)) - 1u);");
    e("__m512i t = _mm512_add_epi32(_mm512_loadu_si512((const void*)(acc + (i * {} + v) * 16)), bv);", NV);
    if (q.qlinear) {
      e("t = {};", quantize_vec512("_mm512_cvtepi32_ps(t)", "mul", "mv", "yzv", "lov", "hiv"));
      if (step) {
        // The residual add on the 16 bytes just made (as ints) and the other operand's 16, as emit_qdq_add.
        e("{{");
        e("const __m512i o = {}(_mm_maskz_loadu_epi8(k, (const void*)(rm + p)));",
          e.node.extra_inputs[0]->dtype == DType::U8 ? "_mm512_cvtepu8_epi32" : "_mm512_cvtepi8_epi32");
        const std::string ta = st.anchor_a ? "t" : "o", tb = st.anchor_a ? "o" : "t";
        auto set1 = [](const std::string& c) { return "_mm512_set1_ps(" + c + ")"; };
        auto set1i = [](int64_t z) { return fmt::format("_mm512_set1_epi32({})", z); };
        e("const __m512 v = {};", dequantize_combine512(st.mul, ta, set1i(st.za), set1(c_float(st.sa)), tb, set1i(st.zb), set1(c_float(st.sb))));
        e("t = {};", quantize_vec512("v", "div", set1(c_float(st.sy)), set1(c_float(static_cast<double>(st.zy))), set1(c_float(st.lo)),
                                     set1(c_float(st.hi))));
        e("}}");
      }
      e("_mm_mask_storeu_epi8((void*)(ym + p), k, _mm512_cvtepi32_epi8(t));");
    } else {
      e("_mm512_mask_storeu_epi32((void*)(ym + p), k, t);");
    }
    e("}}");
    e("}}");
    e("#else");
    simd(e, MT * NV * 16);
    e("for (int64_t i = 0; i < {}; ++i) acc[i] = 0;", MT * NV * 16);
    e("for (int64_t c4 = 0; c4 < {}; ++c4) {{", CQ);
    e("const int32_t* restrict xq = xp + c4 * {} + pv * 16;", PV);
    e("for (int64_t i = 0; i < {}; ++i) {{", MT);
    e("const int8_t* restrict w4 = wt + c4 * 64 + 4 * i;");
    e("int32_t* restrict ai = acc + i * {};", NV * 16);
    simd(e, nv * 16);
    e("for (int64_t p = 0; p < {}; ++p) {{", nv * 16);
    e("const uint32_t u = (uint32_t)xq[p];");
    e("ai[p] += w4[0] * (int32_t)(u & 255u) + w4[1] * (int32_t)(u >> 8 & 255u) + w4[2] * (int32_t)(u >> 16 & 255u) + w4[3] * (int32_t)(u >> 24);");
    e("}}");
    e("}}");
    e("}}");
    e("for (int64_t i = 0; i < {}; ++i) {{", MT);
    e("const int64_t m = mt + i;");
    if (M8 > g.M) e("if (m >= {}) break;", g.M);
    e("{}* restrict ym = {} + ((n * {} + m) * {} + oh0) * {} + pv * 16;", yt, Y, g.M, OH, OW);
    if (step) e("const {}* restrict rm = {} + ((n * {} + m) * {} + oh0) * {} + pv * 16;", rt, e.extra(0), g.M, OH, OW);
    e("const int64_t pn = np - pv * 16 < {0} ? np - pv * 16 : {0};", nv * 16);
    e("for (int64_t p = 0; p < pn; ++p) {{");
    e("const int32_t a = (int32_t)((uint32_t)acc[i * {} + p] + (uint32_t)bq[m - m0]);", NV * 16);
    if (step) {
      e("float c;");
      e("{}", round_saturate("c", DType::F32, "(float)a * mq[m - m0]", "yz", q.qmin, q.qmax));
      e("{}", epilogue_element(e, "c", {"rm[p]"}, "ym[p]"));
    } else if (q.qlinear) {
      e("{}", round_saturate("ym[p]", e.out_dtype(0), "(float)a * mq[m - m0]", "yz", q.qmin, q.qmax));
    } else {
      e("ym[p] = a;");
    }
    e("}}");
    e("}}");
    e("#endif");
    e("}}");
  };
  e("for (int64_t mt = m0; mt < m0 + mc; mt += {}) {{", MT);
  if (M8 > g.M) e("if (mt >= {}) break;", g.M);
  e("const int8_t* restrict wt = {} + (mt / 16) * {} + mt % 16 * 4;", W, CQ * 64);
  // Vectors in threes while more than 4 are left; then 4 as two tiles of 2 (not 3 + 1), or 3, 2, 1.
  e("int64_t pv = 0;");
  e("for (; nvec - pv > 4; pv += {})", NV);
  tile(NV);
  e("if (nvec - pv == 4) {{");
  e("for (int64_t h = 0; h < 2; ++h, pv += 2)");
  tile(2);
  e("}} else if (nvec - pv == 3)");
  tile(3);
  e("else if (nvec - pv == 2)");
  tile(2);
  e("else if (nvec - pv == 1)");
  tile(1);
  e("}}");  // mt
  e("}}");  // m0
  e("}}");  // oh0
  e("}}");  // n
}

// Whether the QLinearConv's kernel applies a fused onnxc.qdq_add / qdq_mul (Backend::takes_epilogue):
// the pointwise byte quads kernel does, on its vectors before they are stored.
bool qconv_takes_epilogue(const Node& n, const Node& step, const Target&) {
  const QConvGeom& q = qconv_geom(n);
  const Layout& wl = n.in(static_cast<size_t>(q.w))->layout;
  return q.qlinear && (step.op_type == "onnxc.qdq_add" || step.op_type == "onnxc.qdq_mul") && wl.kind == Layout::Kind::Pairs &&
         wl.in_block == 4 && quads_pointwise_apply(q, wl.block);
}

// The quads kernel's bands: the pairs kernel's, or the whole map where its quads take at most
// 96 KB (7x7 and 14x14 maps: each block of weights then serves every row before the next).
PairGeom quad_geom(const QConvGeom& q, int64_t L) {
  const ConvGeom& g = q.conv;
  PairGeom p = pair_geom(q, 4, L);
  const int64_t OH = g.out[0], BR = (OH - 1) * g.s[0] + (g.k[0] - 1) * g.d[0] + 1;
  if (p.R < OH && p.CP * BR * p.IWP * 4 <= (96 << 10)) {
    p.R = OH;
    p.BR = BR;
  }
  return p;
}

// x * w on byte quads, direct: per task (image, band of R output rows) the band's input rows with
// each quad of input channels side by side as 4 bytes of one int32 (uint8 x as it is, int8 x plus
// 128; the padding is x's zero point), then per output row, pair of blocks of L output channels
// and tile of up to RN positions a register tile of int32 accumulators; each step (channel quad,
// kh, kw) adds, on VNNI, vpdpbusd of a block's L lanes of 4 int8 weights and the position's quad
// broadcast (4L exact products, L sums of 4), elsewhere the same sums in plain C. The sums are
// Σ x·w; Σ (x - x_zero_point)·w is that minus x_zero_point · Σ w, whose per-channel Σ w is a
// table made here from the constant weights, taken off with the bias (all modulo 2^32, which
// is exact: the true sum fits int32, qconv_pairs_apply). Then the requantization of the pairs
// kernel, on L lanes.
void emit_qconv_quads(CEmit& e) {
  const QConvGeom& q = qconv_geom(e.node);
  const ConvGeom& g = q.conv;
  const size_t xi = static_cast<size_t>(q.x), wi = static_cast<size_t>(q.w);
  const int64_t L = e.in_layout(wi).block;
  if (quads_pointwise_apply(q, L)) {
    emit_qconv_quads_pointwise(e);
    return;
  }
  const int bits = static_cast<int>(L * 32);
  const PairGeom pg = quad_geom(q, L);
  const int64_t IH = g.in[0], IW = g.in[1], OH = g.out[0], OW = g.out[1], KH = g.k[0], KW = g.k[1];
  const int64_t SH = g.s[0], SW = g.s[1], DH = g.d[0], DW = g.d[1], PT = g.pb[0], PL = g.pb[1];
  const int64_t CQ = pg.CP, R = pg.R, BR = pg.BR, IWP = pg.IWP, MBG = pg.MBG, RN = quad_rows(bits);
  const int64_t KQ = CQ * KH * KW;  // steps per output position
  // Tiles of positions as wide as RN allows, of equal width; rows of at most 8 (7x7 and 14x14
  // maps) take 3 blocks of channels a tile on AVX-512 (21-24 accumulators), others 2.
  const int64_t TW = (OW + (OW + RN - 1) / RN - 1) / ((OW + RN - 1) / RN);
  const int RM = bits == 512 && TW <= 8 ? 3 : 2;
  const std::string X = e.in(xi), W = e.in(wi), Y = e.out(0);
  const bool xs8 = e.in_dtype(xi) == DType::I8;
  const char* xt = e.in_ctype(xi);
  // The vector forms: 512-bit (AVX-512 VNNI) or 256-bit (AVX-VNNI).
  const bool z = bits == 512;
  const std::string guard = z ? "defined(__AVX512F__) && defined(__AVX512VNNI__)" : "defined(__AVXVNNI__)";
  const std::string vi = z ? "__m512i" : "__m256i", vf = z ? "__m512" : "__m256", p = z ? "_mm512_" : "_mm256_";
  const std::string dp = z ? "_mm512_dpbusd_epi32" : "_mm256_dpbusd_avx_epi32";
  const std::string round = z ? "_mm512_roundscale_ps" : "_mm256_round_ps";
  const std::string zero = z ? "_mm512_setzero_si512()" : "_mm256_setzero_si256()";
  auto load = [&](const std::string& a) { return fmt::format("{}loadu_si{}((const void*)({}))", p, bits, a); };
  auto store = [&](const std::string& a, const std::string& v) { return fmt::format("{}storeu_si{}((void*)({}), {});", p, bits, a, v); };
  e.variant = fmt::format("byte quads, {}", z ? "AVX-512 VNNI vpdpbusd" : "AVX-VNNI vpdpbusd");
  e.plan = fmt::format("bands of {} output rows ({} x {} input rows of channel quads, {} KB), {}x{} register tiles (channels x positions)", R,
                       BR, IWP, (pg.bytes() + 1023) / 1024, RM * L, TW);
  e("/* {}: direct, on byte quads (weights {}); tasks (image, band of {} output rows): the band's input rows with each */",
    e.node.op_type, e.in_layout(wi).str(4), R);
  e("/* quad of channels side by side as 4 bytes (uint8{}; x's zero point in the padding), then per output row, */",
    xs8 ? ": int8 x plus 128" : "");
  e("/* {} blocks of {} output channels and up to {} positions, int32 accumulators of sum x * w: {} where compiled for it, */", RM, L, TW,
    dp);
  e("/* otherwise the same in plain C; x's zero point times each channel's weight sum is taken off with the bias */");
  emit_weight_sums(e, q);
  const int64_t KS = g.CG * KH * KW, M16 = (g.M + L - 1) / L * L;
  const double work = 2.0 * static_cast<double>(g.N * g.M * OH * OW) * static_cast<double>(KS);
  const int64_t bands = (OH + R - 1) / R;
  // Tasks also split one group's blocks of output channels where the bands are few (whole maps
  // of 7x7 or 14x14): MCB blocks a task, a multiple of RM.
  int64_t MCB = MBG;
  if (g.G == 1) {
    const int64_t split = std::max<int64_t>(1, std::min<int64_t>(MBG / (2 * RM), (8 + g.N * bands - 1) / (g.N * bands)));
    MCB = ((MBG + split - 1) / split + RM - 1) / RM * RM;
  }
  const int64_t chunks = (MBG + MCB - 1) / MCB;
  if (chunks > 1) e.plan += fmt::format(", tasks of {} output channels", MCB * L);
  open_tasks(e, {{"n", g.N, 1}, {"oh0", OH, R}, {"mc0", MBG, MCB}}, g.N * bands * chunks > 1 && e.parallel(work));
  if (OH % R == 0) e("const int64_t rh = {};", R);
  else e("const int64_t rh = {0} - oh0 < {1} ? {0} - oh0 : {1};", OH, R);
  e("int32_t xp[{}];", CQ * BR * IWP);
  e("int32_t acc[{}];", RM * L * RN);
  // x's zero point as the quads hold x (int8 x plus 128), and four of it in the padding.
  e("const int32_t xz = {}{};", param(e, q.x_zp, "0", "int32_t"), xs8 ? " + 128" : "");
  e("const int32_t xzq = (int32_t)((uint32_t)xz * 0x01010101u);");
  // Per output channel (blocks padded to L lanes with zeros): the bias less xz times the weight
  // sum, and the requantization's multiplier.
  emit_channel_params(e, q, M16, "0", quad_bias(e, q));
  const bool groups = g.G > 1;
  if (groups) e("for (int64_t gi = 0; gi < {}; ++gi) {{", g.G);
  e("const {}* restrict xg = {} + (n * {} + {}) * {};", xt, X, g.C, groups ? index_term("gi", g.CG) : "0", IH * IW);
  // The band: row j of channel quad c4 is input row oh0 * SH - PT + j, column t input column t - PL.
  e("for (int64_t c4 = 0; c4 < {}; ++c4) {{", CQ);
  e("for (int64_t j = 0; j < {}; ++j) {{", BR);
  e("int32_t* restrict d = xp + (c4 * {} + j) * {};", BR, IWP);
  e("const int64_t ih = {};", sum_terms({index_term("oh0", SH), PT ? fmt::format("-{}", PT) : "", "j"}));
  emit_padded_row(
      e, IWP, IH, IW, PL,
      [&](int64_t lo, int64_t hi) {
        e("const {}* restrict x0 = xg + (4 * c4 * {} + ih) * {};", xt, IH, IW);
        const std::string byte = xs8 ? "(uint32_t)(uint8_t)(x0[t - {} + {}] ^ (int8_t)-128)" : "(uint32_t)x0[t - {} + {}]";
        auto quad_loop = [&](int64_t have) {  // the first `have` channels of the quad (the others: 0)
          simd(e, hi - lo);
          e("for (int64_t t = {}; t < {}; ++t) {{", lo, hi);
          std::vector<std::string> parts;
          for (int64_t i = 0; i < have; ++i) {
            parts.push_back(fmt::format(fmt::runtime(byte), PL, i * IH * IW) + (i ? fmt::format(" << {}", 8 * i) : ""));
          }
          std::string v;
          for (const std::string& s : parts) v += (v.empty() ? "" : " | ") + s;
          e("d[t] = (int32_t)({});", v);
          e("}}");
        };
        const int64_t rest = g.CG % 4;
        if (rest == 0) {
          quad_loop(4);
        } else {  // the last quad has only `rest` channels: its other bytes are 0 (their weights are zeros)
          e("if (4 * c4 + 4 <= {}) {{", g.CG);
          quad_loop(4);
          e("}} else {{");
          quad_loop(rest);
          e("}}");
        }
      },
      "xzq");
  e("}}");  // j
  e("}}");  // c4
  // One register tile: rm blocks of channels from mb, rn positions from column ow0 of row oh.
  auto tile = [&](int rm, int64_t rn, const std::string& ow0) {
    e("{{");
    e("const int64_t ow0 = {};", ow0);
    for (int j = 0; j < rm; ++j) e("const int8_t* restrict w{} = {} + (mb + {}) * {};", j, W, j, KQ * 4 * L);
    e("const int32_t* restrict xo = xr + {};", index_term("ow0", SW));
    // The steps: channel quad c4, kernel row kh, kernel column kw; position r reads xk[r * SW + kw * DW].
    // vec: the vector form's loop over quads runs to a count the compiler cannot see (an empty asm
    // statement hands it over): with a known count gcc 12 copies every accumulator to the stack
    // on every step (resnet50: 1.12x slower; hiding the kernel's rows and columns too, 1.3x).
    auto steps_open = [&](bool vec = false) {
      if (vec) e("int64_t nq = {}; __asm__(\"\" : \"+r\"(nq));", CQ);
      e("for (int64_t c4 = 0; c4 < {}; ++c4) {{", vec ? "nq" : std::to_string(CQ));
      e("for (int64_t kh = 0; kh < {}; ++kh) {{", KH);
      e("const int32_t* restrict xk = xo + (c4 * {} + {}) * {};", BR, index_term("kh", DH), IWP);
      e("const int64_t s0 = (c4 * {} + kh) * {};", KH, KW);
      e("for (int64_t kw = 0; kw < {}; ++kw) {{", KW);
    };
    auto steps_close = [&]() {
      e("}}");  // kw
      e("}}");  // kh
      e("}}");  // c4
    };
    auto pos = [&](int64_t r) { return sum_terms({std::to_string(r * SW), index_term("kw", DW)}); };
    const std::string value = fmt::format("({})acc[(r * {} + j / {}) * {} + j % {}]", e.out_ctype(0), rm, L, L, L);
    e("#if {}", guard);
    for (int64_t r = 0; r < rn; ++r)
      for (int j = 0; j < rm; ++j) e("{} a{}_{} = {};", vi, r, j, zero);
    steps_open(true);
    for (int j = 0; j < rm; ++j) e("const {} v{} = {};", vi, j, load(fmt::format("w{} + (s0 + kw) * {}", j, 4 * L)));
    for (int64_t r = 0; r < rn; ++r) {
      e("{{");
      e("const {} b = {}set1_epi32(xk[{}]);", vi, p, pos(r));
      for (int j = 0; j < rm; ++j) e("a{0}_{1} = {2}(a{0}_{1}, b, v{1});", r, j, dp);
      e("}}");
    }
    steps_close();
    // The sums to the stack first (no accumulator stays live into the requantization, which
    // would leave the compiler short of registers in the loop), then the bias (modulo 2^32) and
    // the requantization one vector at a time, the same float operations as the scalar form:
    // rounding to nearest is nearbyintf, max/min are its compare-selects.
    for (int64_t r = 0; r < rn; ++r)
      for (int j = 0; j < rm; ++j) e("{}", store(fmt::format("acc + {}", (r * rm + j) * L), fmt::format("a{}_{}", r, j)));
    if (q.qlinear) {
      e("const {0} yzv = {1}set1_ps(yz), lov = {1}set1_ps({2}), hiv = {1}set1_ps({3});", vf, p, c_float(q.qmin), c_float(q.qmax));
    }
    e("for (int64_t i = 0; i < {}; ++i) {{", rn * rm);
    e("const int64_t c = mb * {} + {};", L, rm == 1 ? "0" : fmt::format("i % {} * {}", rm, L));
    e("{} t = {}add_epi32({}, {});", vi, p, load(fmt::format("acc + i * {}", L)), load("bq + c"));
    if (q.qlinear) {
      e("{0} f = {1}({2}mul_ps({2}cvtepi32_ps(t), {2}loadu_ps(mq + c)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);", vf, round, p);
      e("t = {0}cvtps_epi32({0}min_ps({0}max_ps({0}add_ps(f, yzv), lov), hiv));", p);
    }
    e("{}", store(fmt::format("acc + i * {}", L), "t"));
    e("}}");
    emit_pair_stores(e, q, rm, rn, groups, value, L);
    e("#else");
    simd(e, rm * rn * L);
    e("for (int64_t i = 0; i < {}; ++i) acc[i] = 0;", rm * rn * L);
    steps_open();
    for (int j = 0; j < rm; ++j) {
      e("{{");
      e("const int8_t* restrict wk = w{} + (s0 + kw) * {};", j, 4 * L);
      for (int64_t r = 0; r < rn; ++r) {
        e("{{");
        e("const uint32_t u = (uint32_t)xk[{}];", pos(r));
        // (u0..u3, not x0..x3: those name the function's inputs, which this #else branch would seem to read)
        e("const int32_t u0 = (int32_t)(u & 255u), u1 = (int32_t)(u >> 8 & 255u), u2 = (int32_t)(u >> 16 & 255u), u3 = (int32_t)(u >> 24);");
        e("int32_t* restrict ar = acc + {};", (r * rm + j) * L);
        simd(e, L);
        e("for (int64_t v = 0; v < {}; ++v) ar[v] += wk[4 * v] * u0 + wk[4 * v + 1] * u1 + wk[4 * v + 2] * u2 + wk[4 * v + 3] * u3;", L);
        e("}}");
      }
      e("}}");
    }
    steps_close();
    emit_tile_finish(e, q, rm, rn, groups, L);
    e("#endif");
    e("}}");
  };
  const std::string mb0 = groups ? fmt::format("gi * {}", MBG) : "mc0";
  // A row of tiles: as few as RN allows, of equal width (the last one narrower when OW does not split evenly).
  auto row = [&](int rm) {
    if (OW >= TW) {
      e("for (int64_t t0 = 0; t0 + {} <= {}; t0 += {})", TW, OW, TW);
      tile(rm, TW, "t0");
    }
    if (OW % TW) tile(rm, OW % TW, std::to_string(OW - OW % TW));
  };
  // Per RM blocks of channels (their weights, RM x KQ x 4L bytes, stay in cache) every row of the band.
  auto rows = [&](int rm) {
    e("for (int64_t oh = oh0; oh < oh0 + rh; ++oh) {{");
    e("const int32_t* restrict xr = xp + {};", index_term("(oh - oh0)", SH * IWP));
    row(rm);
    e("}}");
  };
  if (groups) e("const int64_t mb1 = gi * {} + {};", MBG, MBG);
  else if (MBG % MCB == 0) e("const int64_t mb1 = mc0 + {};", MCB);
  else e("const int64_t mb1 = mc0 + {0} < {1} ? mc0 + {0} : {1};", MCB, MBG);
  e("int64_t mb = {};", mb0);
  e("for (; mb + {} <= mb1; mb += {}) {{", RM, RM);
  rows(RM);
  e("}}");
  for (int left = RM - 1; left >= 1; --left) {  // the blocks left over: one tile of them
    e("if (mb1 - mb == {}) {{", left);
    rows(left);
    e("}}");
  }
  if (groups) e("}}");  // gi
  e("}}");  // mc0
  e("}}");  // oh0
  e("}}");  // n
}

// ---------------------------------------------------------------- depthwise QLinearConv, ConvInteger

// The most kernel taps the depthwise kernel unrolls (its sums of products then stay far inside
// int32), about the most bytes a band's planes take (an L1-resident working set), and the most a
// task keeps on its stack (planes, sums, outputs; wider or more dilated convolutions go to the
// direct kernel).
constexpr int64_t kDepthwiseTaps = 64;
constexpr int64_t kDepthwiseBandBytes = 16 << 10;
constexpr int64_t kDepthwiseStackBytes = 192 << 10;

// A depthwise task (image, channel) runs in bands of R output rows. A band's padded input rows
// are split by the strides into SH x SW phase planes of QH x QW int32 (as TVM's and XNNPACK's
// strided depthwise kernels split them): padded element (j, t) of the band is phase
// (j % SH, t % SW) at (j / SH) * QW + t / SW, so that output (oh, ow) of the band is p = oh * QW +
// ow and tap (kh, kw) reads its phase plane at p + (kh * DH / SH) * QW + kw * DW / SW: one index
// with unit stride runs over all the band's outputs, for every stride; the positions at ow >= OW
// are computed and dropped (QW - OW = (KW - 1) * DW / SW of them per row).
struct DwGeom {
  int64_t R = 0, QH = 0, QW = 0;
  int64_t plane() const { return QH * QW; }
  int64_t bytes(const ConvGeom& g) const { return (g.s[0] * g.s[1] * plane() + 2 * R * QW) * 4; }
  // Where tap (kh, kw) starts in the planes.
  int64_t tap(const ConvGeom& g, int64_t kh, int64_t kw) const {
    const int64_t h = kh * g.d[0], w = kw * g.d[1];
    return ((h % g.s[0]) * g.s[1] + w % g.s[1]) * plane() + h / g.s[0] * QW + w / g.s[1];
  }
};

DwGeom dw_geom(const ConvGeom& g) {
  DwGeom d;
  const int64_t dh = (g.k[0] - 1) * g.d[0] / g.s[0], dw = (g.k[1] - 1) * g.d[1] / g.s[1];
  d.QW = g.out[1] + dw;
  const int64_t extra = dh + (dw > 0 ? 1 : 0);  // the last row's dropped positions read one row on
  const int64_t rows = std::max<int64_t>(1, kDepthwiseBandBytes / (4 * g.s[0] * g.s[1] * d.QW) - extra);
  const int64_t bands = (g.out[0] + rows - 1) / rows;
  d.R = (g.out[0] + bands - 1) / bands;  // bands of equal height, the last one at most as high
  d.QH = d.R + extra;
  return d;
}

// Whether a 2-D depthwise QLinearConv / ConvInteger (one input and one output channel per group)
// runs on phase planes (emit_qconv_depthwise).
bool qconv_depthwise_apply(const QConvGeom& q) {
  const ConvGeom& g = q.conv;
  if (g.rank() != 2 || g.CG != 1 || g.MG != 1 || g.N == 0 || g.out_size() == 0 || q.products_wrap) return false;
  if (g.out[1] > (int64_t{1} << 16) || g.k_size() > kDepthwiseTaps || g.s[0] * g.s[1] > 16) return false;
  return dw_geom(g).bytes(g) <= kDepthwiseStackBytes;
}

// "v + c" / "v - c" / "v".
std::string plus(const std::string& v, int64_t c) { return sum_terms({v, c ? fmt::format("{}", c) : ""}); }

// Depthwise, tasks (image, channel), bands of output rows (DwGeom): the band's input as int32
// x - x_zero_point on phase planes with the padding (zeros), then one simd loop over the band's
// outputs that sums their taps' (w - w_zero_point) times the planes (exact int32 products), and
// one that adds the bias (modulo 2^32) and requantizes (on AVX2 targets, 32 positions at a time
// in vectors packed to bytes); the rows of OW values are then copied out.
void emit_qconv_depthwise(CEmit& e) {
  const QConvGeom& q = qconv_geom(e.node);
  const ConvGeom& g = q.conv;
  const DwGeom dg = dw_geom(g);
  const int64_t IH = g.in[0], IW = g.in[1], OH = g.out[0], OW = g.out[1], KH = g.k[0], KW = g.k[1];
  const int64_t SH = g.s[0], SW = g.s[1], PT = g.pb[0], PL = g.pb[1];
  const int64_t R = dg.R, QH = dg.QH, QW = dg.QW, BP = R * QW;
  const size_t xi = static_cast<size_t>(q.x), wi = static_cast<size_t>(q.w);
  const char* xt = e.in_ctype(xi);
  // The requantization as AVX2 vectors (QLinearConv with byte outputs on AVX2 targets).
  const bool vec = q.qlinear && (e.out_dtype(0) == DType::U8 || e.out_dtype(0) == DType::I8) && avx2_target(e);
  e.variant = vec ? "depthwise, phase planes, AVX2 or AVX-512 requantization" : "depthwise, phase planes";
  e("/* {}: depthwise, tasks (image, channel), bands of {} output rows: x - x_zero_point as float on {} phase plane(s) of {}x{} */",
    e.node.op_type, R, SH * SW, QH, QW);
  e("/* with the padding; band output (oh, ow) is p = oh * {} + ow, one simd loop over p sums the {} taps (those at ow >= {} */", QW,
    KH * KW, OW);
  e("/* are dropped; the sums of at most {} products of |x - xz|, |w - wz| <= 255 stay below 2^24: exact in float), another */",
    kDepthwiseTaps);
  e("/* requantizes */");
  const double work = 2.0 * static_cast<double>(g.N * g.M * OH * OW) * static_cast<double>(KH * KW);
  open_tasks(e, {{"n", g.N, 1}, {"c", g.M, 1}}, g.N * g.M > 1 && e.parallel(work));
  e("float pl[{}];", SH * SW * dg.plane());
  e("int32_t acc[{}];", BP);
  const char* yt = e.out_ctype(0);
  e("{} qv[{}];", yt, BP);
  e("const int32_t xz = {};", param(e, q.x_zp, "0", "int32_t"));
  e("const int32_t wz = {};", param(e, q.w_zp, sum_terms({index_term("c", q.w_zp.step)}), "int32_t"));
  e("const int32_t bm = {};", q.bias >= 0 ? fmt::format("{}[c]", e.in(static_cast<size_t>(q.bias))) : "0");
  if (q.qlinear) {
    e("const float mult = {} * {} / {};", param(e, q.x_scale, "0", "float"),
      param(e, q.w_scale, sum_terms({index_term("c", q.w_scale.step)}), "float"), param(e, q.y_scale, "0", "float"));
    e("const float yz = {};", param(e, q.y_zp, "0", "float"));
  }
  e("const {}* restrict xc = {} + (n * {} + c) * {};", xt, e.in(xi), g.C, IH * IW);
  e("const {}* restrict wc = {} + c * {};", e.in_ctype(wi), e.in(wi), KH * KW);
  std::vector<std::string> taps;
  for (int64_t t = 0; t < KH * KW; ++t) {
    e("const float w{} = (float)((int32_t)wc[{}] - wz);", t, t);
    taps.push_back(fmt::format("pl[{}] * w{}", plus("p", dg.tap(g, t / KW, t % KW)), t));
  }
  e("{}* restrict yc = {} + (n * {} + c) * {};", yt, e.out(0), g.M, OH * OW);
  open_loop(e, "oh0", OH, R);
  e("const int64_t rn = {};", OH % R == 0 ? fmt::format("{}", R) : fmt::format("oh0 + {0} < {1} ? {0} : {1} - oh0", R, OH));
  // The band's planes, a padded row j at a time: input row oh0 * SH + j - PT; phase sw of the row
  // holds the padded columns t = u * SW + sw (input column t - PL), u < QW.
  e("for (int64_t j = 0; j < {}; ++j) {{", QH * SH);
  e("float* restrict d = pl + {};", sum_terms({SH > 1 ? fmt::format("(j % {}) * {}", SH, SW * dg.plane()) : "",
                                                  SH > 1 ? fmt::format("(j / {}) * {}", SH, QW) : index_term("j", QW)}));
  e("const int64_t ih = {};", plus(sum_terms({index_term("oh0", SH), "j"}), -PT));
  e("if (ih < 0 || ih >= {}) {{", IH);
  for (int64_t sw = 0; sw < SW; ++sw) {
    simd(e, QW);
    e("for (int64_t u = 0; u < {}; ++u) d[{}] = 0;", QW, plus("u", sw * dg.plane()));
  }
  e("continue;");
  e("}}");
  for (int64_t sw = 0; sw < SW; ++sw) {
    // Input columns u * SW + sw - PL in [0, IW): u in [lo, hi).
    const int64_t lo = std::min(QW, std::max<int64_t>(0, (PL - sw + SW - 1) / SW));
    const int64_t hi = std::max(lo, std::min(QW, (PL + IW - sw + SW - 1) / SW));
    const std::string ds = fmt::format("d[{}]", plus("u", sw * dg.plane()));
    if (lo > 0) e("for (int64_t u = 0; u < {}; ++u) {} = 0;", lo, ds);
    if (hi > lo) {
      // On AVX-512, 16 columns a step, the last ones under a mask (rows of 7-28). Unit stride: 16
      // bytes widened to int32; stride 2: the 31 bytes from the phase's first column widened to
      // 16-bit lanes, each int32 lane's low half the even byte (the phase's column).
      const bool bytes = e.in_dtype(xi) == DType::U8 || e.in_dtype(xi) == DType::I8;
      const bool u8 = e.in_dtype(xi) == DType::U8;
      const bool z = (SW == 1 || SW == 2) && bytes && avx2_target(e);
      if (z) {
        e("#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)");
        e("for (int64_t u = {0}; u < {1}; u += 16) {{", lo, hi);
        e("const __mmask16 k = {0} - u >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << ({0} - u)) - 1u);", hi);
        if (SW == 1) {
          e("const __m512i v = {}(_mm_maskz_loadu_epi8(k, (const void*)(xc + ih * {} + {})));",
            u8 ? "_mm512_cvtepu8_epi32" : "_mm512_cvtepi8_epi32", IW, plus("u", -PL));
        } else {
          e("const int64_t m = {0} - u >= 16 ? 16 : {0} - u;", hi);
          e("const __mmask32 kb = (__mmask32)((1ull << (2 * m - 1)) - 1u);");
          e("const __m512i h = {}(_mm256_maskz_loadu_epi8(kb, (const void*)(xc + ih * {} + {})));",
            u8 ? "_mm512_cvtepu8_epi16" : "_mm512_cvtepi8_epi16", IW, plus("2 * u", sw - PL));
          e("const __m512i v = {};", u8 ? "_mm512_and_si512(h, _mm512_set1_epi32(0xFFFF))" : "_mm512_srai_epi32(_mm512_slli_epi32(h, 16), 16)");
        }
        e("_mm512_mask_storeu_ps(d + {}, k, _mm512_cvtepi32_ps(_mm512_sub_epi32(v, _mm512_set1_epi32(xz))));", plus("u", sw * dg.plane()));
        e("}}");
        e("#else");
      }
      simd(e, hi - lo);
      e("for (int64_t u = {}; u < {}; ++u) {} = (float)((int32_t)xc[ih * {} + {}] - xz);", lo, hi, ds, IW, plus(index_term("u", SW), sw - PL));
      if (z) e("#endif");
    }
    if (hi < QW) e("for (int64_t u = {}; u < {}; ++u) {} = 0;", hi, QW, ds);
  }
  e("}}");
  simd(e, BP);
  e("for (int64_t p = 0; p < rn * {}; ++p) acc[p] = (int32_t)({});", QW, sum_terms(taps));
  // Bias and requantization: on AVX2 32 positions at a time as vectors (the same float operations
  // as the scalar form; the values are then in the output type's range, so the saturating packs
  // to bytes are exact), the rest in a simd loop.
  e("int64_t p0 = 0;");
  if (vec) {
    // AVX-512: 16 positions a step, the last ones under a mask (no scalar tail: with short rows
    // the tail was most of the band).
    e("#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)");
    e("{{");
    e("const __m512i bz = _mm512_set1_epi32(bm);");
    e("const __m512 mz = _mm512_set1_ps(mult), yzz = _mm512_set1_ps(yz), loz = _mm512_set1_ps({}), hiz = _mm512_set1_ps({});",
      c_float(q.qmin), c_float(q.qmax));
    e("for (; p0 < rn * {}; p0 += 16) {{", QW);
    e("const __mmask16 k = rn * {0} - p0 >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (rn * {0} - p0)) - 1u);", QW);
    e("__m512i t = _mm512_add_epi32(_mm512_maskz_loadu_epi32(k, acc + p0), bz);");
    e("t = {};", quantize_vec512("_mm512_cvtepi32_ps(t)", "mul", "mz", "yzz", "loz", "hiz"));
    e("_mm_mask_storeu_epi8((void*)(qv + p0), k, _mm512_cvtepi32_epi8(t));");
    e("}}");
    e("}}");
    e("#elif defined(__AVX2__)");
    e("const __m256i bv = _mm256_set1_epi32(bm);");
    e("const __m256 mv = _mm256_set1_ps(mult), yzv = _mm256_set1_ps(yz), lov = _mm256_set1_ps({}), hiv = _mm256_set1_ps({});",
      c_float(q.qmin), c_float(q.qmax));
    e("for (; p0 + 32 <= rn * {}; p0 += 32) {{", QW);
    for (int k = 0; k < 4; ++k) {
      e("__m256i t{0} = _mm256_add_epi32(_mm256_loadu_si256((const __m256i*)(acc + p0 + {1})), bv);", k, 8 * k);
      e("t{0} = _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(_mm256_add_ps(_mm256_round_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(t{0}), mv), "
        "_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), yzv), lov), hiv));", k);
    }
    emit_pack_store(e, e.out_dtype(0), "qv + p0");
    e("}}");
    e("#endif");
  }
  simd(e, BP);
  e("for (int64_t p = p0; p < rn * {}; ++p) {{", QW);
  e("const int32_t a = (int32_t)((uint32_t)acc[p] + (uint32_t)bm);");
  if (q.qlinear) e("{}", round_saturate("qv[p]", e.out_dtype(0), "(float)a * mult", "yz", q.qmin, q.qmax));
  else e("qv[p] = a;");
  e("}}");
  e("for (int64_t oh = 0; oh < rn; ++oh) memcpy(yc + (oh0 + oh) * {}, qv + oh * {}, {});", OW, QW,
    OW * static_cast<int64_t>(dtype_size(e.out_dtype(0))));
  e("}}");  // oh0
  e("}}");  // c
  e("}}");  // n
}

// ---------------------------------------------------------------- ConvInteger, QLinearConv

void emit_qconv(CEmit& e) {
  const Layout& wl = e.in_layout(static_cast<size_t>(qconv_geom(e.node).w));
  if (wl.kind == Layout::Kind::Pairs) {
    if (wl.in_block == 4) emit_qconv_quads(e);
    else emit_qconv_pairs(e);
    return;
  }
  if (qconv_depthwise_apply(qconv_geom(e.node))) {
    emit_qconv_depthwise(e);
    return;
  }
  const QConvGeom& q = qconv_geom(e.node);
  const ConvGeom& g = q.conv;
  const size_t r = g.rank(), L = r - 1;
  const int64_t XS = g.in_size(), YS = g.out_size(), KS = g.k_size();
  const int64_t OL = g.out[L], KL = g.k[L], SL = g.s[L], DL = g.d[L], PL = g.pb[L], IL = g.in[L];
  const int64_t ROWS = YS / OL, KO = KS / KL, T = std::min(OL, kChunk);
  const char* acc_t = q.wrap ? "uint32_t" : "int32_t";
  const std::string X = e.in(static_cast<size_t>(q.x)), W = e.in(static_cast<size_t>(q.w)), Y = e.out(0);
  e("/* {}: direct, {} accumulators{}; per output row and chunk of at most {} positions of the last dim, */", e.node.op_type,
    acc_t, q.wrap ? " (int32 wrapping modulo 2^32)" : "", T);
  e("/* each input channel and kernel position adds over the valid part of the chunk (padding adds nothing) */");
  const double work = 2.0 * static_cast<double>(g.N * g.M * YS) * static_cast<double>(g.CG * KS);
  open_tasks(e, {{"n", g.N, 1}, {"m", g.M, 1}}, g.N * g.M > 1 && e.parallel(work));
  e("const {}* restrict xn = {} + (n * {} + m / {} * {}) * {};", e.in_ctype(static_cast<size_t>(q.x)), X, g.C, g.MG, g.CG, XS);
  e("const {}* restrict wm = {} + m * {};", e.in_ctype(static_cast<size_t>(q.w)), W, g.CG * KS);
  e("const int32_t xz = {};", param(e, q.x_zp, "0", "int32_t"));
  e("const int32_t wz = {};", param(e, q.w_zp, sum_terms({index_term("m", q.w_zp.step)}), "int32_t"));
  std::string init = q.bias >= 0 ? fmt::format("({}){}[m]", acc_t, e.in(static_cast<size_t>(q.bias))) : "0";
  if (q.qlinear) {
    std::string ws = param(e, q.w_scale, sum_terms({index_term("m", q.w_scale.step)}), "float");
    e("const float mult = {} * {} / {};", param(e, q.x_scale, "0", "float"), ws, param(e, q.y_scale, "0", "float"));
    e("const float yz = {};", param(e, q.y_zp, "0", "float"));
  }
  e("{}* restrict ym = {} + (n * {} + m) * {};", e.out_ctype(0), Y, g.M, YS);
  // Output rows: r over the outer spatial dims; kernel positions: ko over the outer kernel dims.
  Shape rows(g.out.begin(), g.out.end() - 1), kos(g.k.begin(), g.k.end() - 1);
  Shape rst = strides_of(rows), kst = strides_of(kos), xst = strides_of(g.in);
  open_loop(e, "r", ROWS);
  open_loop(e, "ow0", OL, T);
  chunk_len(e, "ow0", OL, T);
  e("{} acc[{}];", acc_t, T);
  simd(e, T);
  e("for (int64_t j = 0; j < {}; ++j) acc[j] = {};", T, init);
  e("for (int64_t c = 0; c < {}; ++c) {{", g.CG);
  open_loop(e, "ko", KO);
  e("int64_t xo = c * {};", XS);
  e("int ok = 1;");
  // Index i of dim d of a flat index v over `dims` (strides st): "v / st % n", simplified.
  auto digit = [](const std::string& v, const Shape& dims, const Shape& st, size_t d) {
    std::string s = st[d] == 1 ? v : fmt::format("{} / {}", v, st[d]);
    return d == 0 ? s : fmt::format("{} % {}", s, dims[d]);
  };
  for (size_t d = 0; d < L; ++d) {
    // input index along outer dim d: output index * stride - pad + kernel index * dilation
    std::string id = sum_terms({index_term(digit("r", rows, rst, d), g.s[d]), g.pb[d] ? fmt::format("-{}", g.pb[d]) : "",
                                kos[d] > 1 ? index_term(digit("ko", kos, kst, d), g.d[d]) : ""});
    e("{{");
    e("const int64_t id = {};", id);
    e("ok = ok && id >= 0 && id < {};", g.in[d]);
    e("xo += id * {};", xst[d]);
    e("}}");
  }
  e("if (!ok) continue;");
  e("for (int64_t kw = 0; kw < {}; ++kw) {{", KL);
  e("const int32_t wv = (int32_t)wm[c * {} + ko * {} + kw] - wz;", KS, KL);
  // Last dim: output o reads input column o * SL + t, valid for lo <= o < hi.
  e("const int64_t t = {};", sum_terms({index_term("kw", DL), PL ? fmt::format("-{}", PL) : ""}));
  if (SL == 1) e("int64_t lo = t < 0 ? -t : 0, hi = {} - t;", IL);
  else e("int64_t lo = t < 0 ? (-t + {0}) / {1} : 0, hi = {2} - t <= 0 ? 0 : ({2} - t + {0}) / {1};", SL - 1, SL, IL);
  e("lo = lo > ow0 ? lo : ow0;");
  e("hi = hi < ow0 + cn ? hi : ow0 + cn;");
  simd(e, T);
  e("for (int64_t o = lo; o < hi; ++o) {}",
    accumulate(q.wrap, "acc[o - ow0]", fmt::format("wv * ((int32_t)xn[xo + {} + t] - xz)", index_term("o", SL))));
  e("}}");  // kw
  e("}}");  // ko
  e("}}");  // c
  simd(e, T);
  e("for (int64_t j = 0; j < cn; ++j) {{");
  const std::string y = fmt::format("ym[{}]", sum_terms({index_term("r", OL), "ow0", "j"}));
  e("{}", store(q.qlinear, q.wrap, e.out_dtype(0), y, "mult", "yz", q.qmin, q.qmax));
  e("}}");
  e("}}");  // ow0
  e("}}");  // r
  e("}}");  // m
  e("}}");  // n
}

// ---------------------------------------------------------------- onnxc.qdq_add, onnxc.qdq_mul

// The elements per row when `full` has y's shape and `part` one value per row of y's trailing
// dimensions (`part`'s trailing dims 1, the others y's); 0 otherwise.
int64_t row_elements(const Shape& ys, const Shape& full, const Shape& part) {
  if (full != ys || part.size() > ys.size()) return 0;
  Shape p(ys.size() - part.size(), 1);
  p.insert(p.end(), part.begin(), part.end());
  size_t t = p.size();
  while (t > 0 && p[t - 1] == 1) --t;
  int64_t inner = 1;
  for (size_t i = 0; i < p.size(); ++i) {
    if (i < t && p[i] != ys[i]) return 0;
    if (i >= t) inner *= ys[i];
  }
  return inner;
}

// onnxc.qdq_add / onnxc.qdq_mul where one input has one value per row of `inner` elements of the
// other (a squeeze-and-excitation's gate): tasks of rows, each that value dequantized once, then a
// flat loop over the row (on AVX2 targets 32 elements at a time in vectors, on AVX-512 16 at a
// time with the last under a mask). b_rows: b is the
// one per row. The sum or product is commutative in float32: the same values as written.
void emit_qdq_rows(CEmit& e, bool b_rows, int64_t inner, double lo, double hi) {
  const DType yt = e.out_dtype(0);
  const size_t f = b_rows ? 0 : 3, r = b_rows ? 3 : 0;  // the full input and the per-row one
  const std::string F = e.in(f), R = e.in(r), Y = e.out(0);
  const std::string fz = b_rows ? "za" : "zb", fs = b_rows ? "sa" : "sb";
  const bool mul = e.node.op_type == "onnxc.qdq_mul";
  const int64_t rows = numel(e.out_view(0)) / inner;
  e.variant = "rows of one broadcast value";
  open_tasks(e, {{"r", rows, 1}}, rows > 1 && e.parallel(3.0 * static_cast<double>(rows * inner)));
  e("const float vr = (float)((int32_t){}[r] - {}) * {};", R, b_rows ? "zb" : "za", b_rows ? "sb" : "sa");
  e("const {}* restrict fr = {} + r * {};", e.in_ctype(f), F, inner);
  e("{}* restrict yr = {} + r * {};", e.out_ctype(0), Y, inner);
  e("int64_t iv = 0;");
  auto vector = [&] {
    // On AVX-512 the whole row 16 elements a step, the last ones under a mask (rows of 49 or 196
    // positions left a scalar tail of 17 or 4 in the AVX2 loop).
    e("#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)");
    e("{{");
    e("const __m512 fsz = _mm512_set1_ps({}), vrz = _mm512_set1_ps(vr), syz = _mm512_set1_ps(sy), zyz = _mm512_set1_ps(zy);", fs);
    e("const __m512 loz = _mm512_set1_ps({}), hiz = _mm512_set1_ps({});", c_float(lo), c_float(hi));
    e("const __m512i fzz = _mm512_set1_epi32({});", fz);
    e("for (; iv < {}; iv += 16) {{", inner);
    e("const __mmask16 k = {0} - iv >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << ({0} - iv)) - 1u);", inner);
    e("const __m512i a = _mm512_sub_epi32({}(_mm_maskz_loadu_epi8(k, (const void*)(fr + iv))), fzz);",
      e.in_dtype(f) == DType::U8 ? "_mm512_cvtepu8_epi32" : "_mm512_cvtepi8_epi32");
    e("const __m512 v = _mm512_{}_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(a), fsz), vrz);", mul ? "mul" : "add");
    e("_mm_mask_storeu_epi8((void*)(yr + iv), k, _mm512_cvtepi32_epi8({}));", quantize_vec512("v", "div", "syz", "zyz", "loz", "hiz"));
    e("}}");
    e("}}");
    e("#endif");
    e("const __m256 fsv = _mm256_set1_ps({}), vrv = _mm256_set1_ps(vr), syv = _mm256_set1_ps(sy), zyv = _mm256_set1_ps(zy);", fs);
    e("const __m256 lov = _mm256_set1_ps({}), hiv = _mm256_set1_ps({});", c_float(lo), c_float(hi));
    e("const __m256i fzv = _mm256_set1_epi32({});", fz);
    e("for (; iv + 32 <= {}; iv += 32) {{", inner);
    for (int k = 0; k < 4; ++k) {
      e("const __m256i a{0} = _mm256_sub_epi32({1}(_mm_loadl_epi64((const __m128i*)(fr + iv + {2}))), fzv);", k,
        e.in_dtype(f) == DType::U8 ? "_mm256_cvtepu8_epi32" : "_mm256_cvtepi8_epi32", 8 * k);
      e("const __m256 v{0} = _mm256_{1}_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(a{0}), fsv), vrv);", k, mul ? "mul" : "add");
      e("const __m256i t{0} = {1};", k, quantize_vec(fmt::format("v{}", k), "syv", "zyv"));
    }
    emit_pack_store(e, yt, "yr + iv");
    e("}}");
  };
  const std::string body = fmt::format("{{ const float v = (float)((int32_t)fr[i] - {}) * {} {} vr; {} }}", fz, fs, mul ? "*" : "+",
                                       round_saturate("yr[i]", yt, "v / sy", "zy", lo, hi));
  vector_then_simd(e, std::to_string(inner), inner, inner % kVectorStep == 0, body,
                   avx2_target(e) ? std::function<void()>(vector) : nullptr);
  e("}}");
}

// QuantizeLinear(DequantizeLinear(a) + DequantizeLinear(b)) (or the product): the three ops'
// float arithmetic per element. a, b and y of one element count (a residual add): one flat loop (tasks of
// kFlatChunk elements when parallel), on AVX2 targets 32 elements at a time in vectors (the same
// float operations; the values are in y's range then, so the saturating packs to bytes are
// exact); otherwise one broadcasting loop nest.
void emit_qdq_add(CEmit& e) {
  double lo = 0, hi = 0;
  qdq_add_range(e.node, &lo, &hi);
  const DType yt = e.out_dtype(0);
  const std::string A = e.in(0), B = e.in(3), Y = e.out(0);
  const bool mul = e.node.op_type == "onnxc.qdq_mul";
  const char* op = mul ? "*" : "+";
  auto value = [&](const std::string& ia, const std::string& ib, const std::string& iy) {
    return fmt::format("{{ const float v = (float)((int32_t){}[{}] - za) * sa {} (float)((int32_t){}[{}] - zb) * sb; {} }}", A, ia, op, B, ib,
                       round_saturate(fmt::format("{}[{}]", Y, iy), yt, "v / sy", "zy", lo, hi));
  };
  e.local("const float sa = {}[0], sb = {}[0], sy = {}[0];", e.in(1), e.in(4), e.in(6));
  e.local("const int32_t za = (int32_t){}[0], zb = (int32_t){}[0];", e.in(2), e.in(5));
  e.local("const float zy = (float){}[0];", e.in(7));
  const Shape& ys = e.out_view(0);
  const int64_t n = numel(ys);
  const int64_t inner_b = row_elements(ys, e.in_view(0), e.in_view(3)), inner_a = row_elements(ys, e.in_view(3), e.in_view(0));
  if (inner_b >= 32 || inner_a >= 32) {
    emit_qdq_rows(e, inner_b >= 32, inner_b >= 32 ? inner_b : inner_a, lo, hi);
    return;
  }
  if (e.in_view(0) != ys || e.in_view(3) != ys) {
    e.variant = "broadcasting";
    emit_broadcast(e, ys, {e.in_view(0), e.in_view(3)},
                   [&](const std::vector<std::string>& idx, const std::string& o) { return value(idx[0], idx[1], o); });
    return;
  }
  const double work = 3.0 * static_cast<double>(n);
  if (!avx2_target(e)) {
    e.variant = "flat";
    flat_loop(e, n, work, value("i", "i", "i"));
    return;
  }
  e.variant = "flat, AVX2 (64 bytes a step on AVX-512)";
  auto widen = [](DType t) { return t == DType::U8 ? "_mm256_cvtepu8_epi32" : "_mm256_cvtepi8_epi32"; };
  flat_loop(e, n, work, value("i", "i", "i"), [&] {
    // On AVX-512, 64 elements a step first: the same operations on 16 lanes (the results are in
    // the byte type's range, so vpmovdb's truncation is exact).
    auto widen512 = [](DType t) { return t == DType::U8 ? "_mm512_cvtepu8_epi32" : "_mm512_cvtepi8_epi32"; };
    e("#if defined(__AVX512F__)");
    e("{{");
    e("const __m512 sav = _mm512_set1_ps(sa), sbv = _mm512_set1_ps(sb), syv = _mm512_set1_ps(sy), zyv = _mm512_set1_ps(zy);");
    e("const __m512 lov = _mm512_set1_ps({}), hiv = _mm512_set1_ps({});", c_float(lo), c_float(hi));
    e("const __m512i zav = _mm512_set1_epi32(za), zbv = _mm512_set1_epi32(zb);");
    e("for (; iv + 64 <= i1; iv += 64) {{");
    for (int k = 0; k < 4; ++k) {
      e("{{");
      e("const __m512i a = {}(_mm_loadu_si128((const __m128i*)({} + iv + {})));", widen512(e.in_dtype(0)), A, 16 * k);
      e("const __m512i b = {}(_mm_loadu_si128((const __m128i*)({} + iv + {})));", widen512(e.in_dtype(3)), B, 16 * k);
      e("const __m512 v = {};", dequantize_combine512(mul, "a", "zav", "sav", "b", "zbv", "sbv"));
      e("_mm_storeu_si128((__m128i*)({} + iv + {}), _mm512_cvtepi32_epi8({}));", Y, 16 * k, quantize_vec512("v", "div", "syv", "zyv", "lov", "hiv"));
      e("}}");
    }
    e("}}");
    e("}}");
    e("#endif");
    e("const __m256 sav = _mm256_set1_ps(sa), sbv = _mm256_set1_ps(sb), syv = _mm256_set1_ps(sy), zyv = _mm256_set1_ps(zy);");
    e("const __m256 lov = _mm256_set1_ps({}), hiv = _mm256_set1_ps({});", c_float(lo), c_float(hi));
    e("const __m256i zav = _mm256_set1_epi32(za), zbv = _mm256_set1_epi32(zb);");
    e("for (; iv + 32 <= i1; iv += 32) {{");
    for (int k = 0; k < 4; ++k) {
      e("const __m256i a{0} = _mm256_sub_epi32({1}(_mm_loadl_epi64((const __m128i*)({2} + iv + {3}))), zav);", k, widen(e.in_dtype(0)), A,
        8 * k);
      e("const __m256i b{0} = _mm256_sub_epi32({1}(_mm_loadl_epi64((const __m128i*)({2} + iv + {3}))), zbv);", k, widen(e.in_dtype(3)), B,
        8 * k);
      e("const __m256 v{0} = _mm256_{1}_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(a{0}), sav), _mm256_mul_ps(_mm256_cvtepi32_ps(b{0}), sbv));", k,
        mul ? "mul" : "add");
      e("const __m256i t{0} = {1};", k, quantize_vec(fmt::format("v{}", k), "syv", "zyv"));
    }
    emit_pack_store(e, yt, Y + " + iv");
    e("}}");
  });
}

// ---------------------------------------------------------------- onnxc.lookup

// y[i] = table[x[i] - lowest]: one flat loop (tasks of kFlatChunk elements when parallel) of
// table loads; on AVX2 targets 32 elements at a time by byte shuffles: the table as 16 rows of
// 16 bytes, row k shuffled by x - 16k biased so that only the x of row k keep the shuffle's
// index bit 7 clear (the others read 0), the 16 results or-ed; with AVX-512 VBMI first 64 at a
// time: vpermi2b of x's low 7 bits into each half of the table, x's bit 7 choosing between them.
void emit_lookup(CEmit& e) {
  const int64_t n = numel(e.out_view(0));
  const bool s8 = e.in_dtype(0) == DType::I8;
  const std::string X = e.in(0), T = e.in(1), Y = e.out(0);
  const std::string body = fmt::format("{}[i] = {}[{}];", Y, T, s8 ? fmt::format("(int32_t){}[i] + 128", X) : X + "[i]");
  if (!avx2_target(e)) {
    e.variant = "flat";
    flat_loop(e, n, static_cast<double>(n), body);
    return;
  }
  e.variant = "flat, AVX2 byte shuffles (AVX-512 VBMI byte permutes where compiled for it)";
  flat_loop(e, n, static_cast<double>(n), body, [&] {
    // With VBMI, 64 elements a step first: two 128-entry permutes (index bits 0-6) of the table's
    // halves, the one bit 7 picks blended in.
    e("#if defined(__AVX512VBMI__) && defined(__AVX512BW__)");
    e("{{");
    e("const __m512i q0 = _mm512_loadu_si512((const void*)({0})), q1 = _mm512_loadu_si512((const void*)({0} + 64));", T);
    e("const __m512i q2 = _mm512_loadu_si512((const void*)({0} + 128)), q3 = _mm512_loadu_si512((const void*)({0} + 192));", T);
    e("for (; iv + 64 <= i1; iv += 64) {{");
    e("{}__m512i x = _mm512_loadu_si512((const void*)({} + iv));", s8 ? "" : "const ", X);
    if (s8) e("x = _mm512_xor_si512(x, _mm512_set1_epi8((char)0x80));  /* x - lowest, as bytes */");
    e("const __m512i lo = _mm512_permutex2var_epi8(q0, x, q1), hi = _mm512_permutex2var_epi8(q2, x, q3);");
    e("_mm512_storeu_si512((void*)({} + iv), _mm512_mask_blend_epi8(_mm512_movepi8_mask(x), lo, hi));", Y);
    e("}}");
    e("}}");
    e("#endif");
    e("__m256i rows[16];");
    e("for (int k = 0; k < 16; ++k) rows[k] = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i*)({} + 16 * k)));", T);
    e("const __m256i bias = _mm256_set1_epi8(0x70), step = _mm256_set1_epi8(16);");
    e("for (; iv + 32 <= i1; iv += 32) {{");
    e("__m256i x = _mm256_loadu_si256((const __m256i*)({} + iv)), y = _mm256_setzero_si256();", X);
    if (s8) e("x = _mm256_xor_si256(x, _mm256_set1_epi8((char)0x80));  /* x - lowest, as bytes */");
    e("for (int k = 0; k < 16; ++k) {{  /* x in row k: x - 16k + 0x70 in 0x70..0x7f; otherwise >= 0x80 */");
    e("y = _mm256_or_si256(y, _mm256_shuffle_epi8(rows[k], _mm256_adds_epu8(x, bias)));");
    e("x = _mm256_sub_epi8(x, step);");
    e("}}");
    e("_mm256_storeu_si256((__m256i*)({} + iv), y);", Y);
    e("}}");
  });
}

}  // namespace

void register_quantize(CKernelTable& t) {
  t["QuantizeLinear"] = {emit_quant, quant_nchwc, nullptr, nullptr};
  t["DequantizeLinear"] = {emit_quant, quant_nchwc, nullptr, nullptr};
  t["DynamicQuantizeLinear"] = {emit_dynamic_quant, nullptr, nullptr, nullptr};
  t["MatMulInteger"] = {emit_qmatmul, nullptr, nullptr, nullptr, qmatmul_weight_layout, qmatmul_takes_epilogue};
  t["QLinearMatMul"] = {emit_qmatmul, nullptr, nullptr, nullptr, qmatmul_weight_layout};
  t["ConvInteger"] = {emit_qconv, nullptr, nullptr, nullptr, qconv_weight_layout};
  t["QLinearConv"] = {emit_qconv, nullptr, nullptr, nullptr, qconv_weight_layout, qconv_takes_epilogue};
  t["onnxc.qdq_add"] = {emit_qdq_add, nullptr, nullptr, qdq_add_stmts};
  t["onnxc.qdq_mul"] = {emit_qdq_add, nullptr, nullptr, qdq_add_stmts};
  t["onnxc.lookup"] = {emit_lookup, nullptr, nullptr, nullptr};
}

}  // namespace onnxc
