// codegen/c/vmath.cc — the inline math helpers of the generated C (see vmath.h).
//
// Conventions of the helper sources below: float arithmetic only (no double, no libm call);
// bit manipulation through a union (C11 allows reading another member) on unsigned integers
// (converted to int32_t only where the value fits), so nothing is undefined or
// implementation-defined for any input, NaN included;
// special cases are selects between values computed for every input, written as
// onnxc_select (an and/or of the bits) rather than `c ? a : b`: with a ternary, gcc 12's PRE
// makes a path on which x is the clamp constant, folds the whole function there into a float
// product that overflows, and then, under the default -ftrapping-math, will not if-convert a
// block that may trap, so no loop calling the helper vectorized on AVX2 targets (AVX-512
// masks hid it); a select whose one side is a long computation used nowhere else can also
// make gcc sink that computation into a branch and give up vectorizing, see onnxc_logf. The error bounds are
// the maxima over all 2^32 float inputs, built by gcc 12 (no contraction of a * b + c into an
// FMA in ISO C mode) and by clang 14 (contracts) at -O3 -march=native, against the
// double-precision libm function: ulps of the float grid at the exact value (2^-149 in the
// denormals). tests/codegen/vmath_exhaustive.cc (label `long`) measures them, test_vmath.cc
// checks every 97th input, also built by gcc with -ffp-contract=fast (the targets' flags,
// codegen/target.cc), where gcc contracts as clang does and gives the same errors there. Polynomial coefficients are minimax fits rounded to float
// (tools/vmath_fit.py).
#include "codegen/c/vmath.h"

#include <cctype>
#include <cstddef>
#include <iterator>

namespace onnxc {
namespace {

struct Helper {
  const char* name;
  std::vector<const char*> calls;  // helpers it calls, all earlier in kHelpers
  const char* source;
};

// In emission order: a helper comes after every helper it calls.
const Helper kHelpers[] = {
    {"onnxc_bits", {}, R"(/* The bits of a float, and the float of given bits. */
static inline uint32_t onnxc_bits(float x) {
  union { float f; uint32_t u; } v;
  v.f = x;
  return v.u;
}
)"},
    {"onnxc_float", {}, R"(static inline float onnxc_float(uint32_t u) {
  union { float f; uint32_t u; } v;
  v.u = u;
  return v.f;
}
)"},
    {"onnxc_select", {"onnxc_bits", "onnxc_float"}, R"(/* c ? a : b on the bits: no branch for the compiler to thread constants into. */
static inline float onnxc_select(int c, float a, float b) {
  const uint32_t m = 0u - (uint32_t)(c != 0);
  return onnxc_float((onnxc_bits(a) & m) | (onnxc_bits(b) & ~m));
}
)"},
    {"onnxc_expf", {"onnxc_bits", "onnxc_float", "onnxc_select"}, R"(/* e^x. x is clamped to [-104, 89] (the result is 0 or +inf beyond; NaN passes the clamps);
 * n = round(x / ln 2) by adding 1.5 * 2^23; r = x - n ln 2 in two steps (n * ln2_hi is exact),
 * |r| <= ln(2) / 2, with the rounding error of the second step kept in rl; e^r = 1 + (r + (rl +
 * r^2 q(r))), q of degree 4 (a minimax fit of e^r with relative error 3.1e-9); 2^n applied as
 * two normal factors 2^k1 * 2^k2, k1 + k2 = n, so that the last product rounds once into the
 * denormals (gradual underflow) or overflows to +inf. NaN -> NaN, -inf -> 0, +inf -> +inf.
 * Max error 0.90 ulp (glibc's expf: 0.50 on every 7th input). */
static inline float onnxc_expf(float x) {
  x = onnxc_select(x < -104.0f, -104.0f, x);
  x = onnxc_select(x > 89.0f, 89.0f, x);
  const float t = x * 0x1.715476p+0f + 0x1.8p+23f;
  const float n = t - 0x1.8p+23f;
  const float r1 = x - n * 0x1.62e400p-1f;
  const float c = n * 0x1.7f7d1cp-20f;
  const float r = r1 - c;
  const float rl = (r1 - r) - c;
  float q = 0x1.6a4f88p-10f;
  q = q * r + 0x1.123988p-7f;
  q = q * r + 0x1.5558aep-5f;
  q = q * r + 0x1.555492p-3f;
  q = q * r + 0x1.fffffcp-2f;
  const float p = 1.0f + (r + (rl + r * r * q));
  const uint32_t nb = onnxc_bits(t) - 0x4b400000u + 150u; /* n + 150, in [0, 279] */
  const uint32_t k1 = nb / 2u, k2 = nb - k1;
  return p * onnxc_float((k1 + 52u) << 23) * onnxc_float((k2 + 52u) << 23);
}
)"},
    {"onnxc_logf", {"onnxc_bits", "onnxc_float", "onnxc_select"}, R"(/* ln x. Denormal x is scaled by 2^23 first; x = 2^k * m with m in [sqrt(1/2), sqrt(2)) from the
 * bits; with f = m - 1 (exact), ln(1 + f) = f - f^2/2 + f^3 P(f), P a degree-7 minimax
 * polynomial (relative error 5.9e-9); k ln 2 added in two parts. Special inputs add a
 * correction to the result rather than replace it: ln(+-0) = -inf, ln(+inf) = +inf, negative
 * or NaN -> NaN. Max error 0.87 ulp (glibc's logf: 0.82 on every 7th input). */
static inline float onnxc_logf(float x) {
  const float scale = onnxc_select(x < 0x1p-126f, 0x1p+23f, 1.0f);
  const uint32_t u = onnxc_bits(x * scale);
  const uint32_t e = (u + 0x004afb0du) >> 23; /* biased exponent of x / sqrt(1/2) */
  const float f = onnxc_float(u - ((e - 127u) << 23)) - 1.0f;
  const float k = (float)((int32_t)e - (int32_t)(onnxc_bits(scale) >> 23));
  float p = -0x1.38c3c4p-4f;
  p = p * f + 0x1.055e26p-3f;
  p = p * f + -0x1.0d8306p-3f;
  p = p * f + 0x1.22d958p-3f;
  p = p * f + -0x1.547280p-3f;
  p = p * f + 0x1.99a01ap-3f;
  p = p * f + -0x1.000226p-2f;
  p = p * f + 0x1.555554p-2f;
  const float z = f * f;
  float y = f * z * p;
  y = y + k * -0x1.bd0106p-13f;
  y = y - 0.5f * z;
  float r = f + y;
  r = r + k * 0x1.630000p-1f;
  float fix = onnxc_select(x > 0.0f, 0.0f, NAN);
  fix = onnxc_select(x == 0.0f, -INFINITY, fix);
  fix = onnxc_select(x == INFINITY, INFINITY, fix);
  return r + fix;
}
)"},
    {"onnxc_sigmoidf", {"onnxc_bits", "onnxc_float", "onnxc_select", "onnxc_expf"}, R"(/* 1 / (1 + e^-x), from e = e^-|x| (no overflow): 1 / (1 + e) for x >= 0, e / (1 + e) below,
 * so that the result underflows gradually like e^x. NaN -> NaN, +inf -> 1, -inf -> 0.
 * Max error 2.41 ulp, max absolute error 9.0e-8 (1 / (1 + expf(-x)) with glibc's expf: 0 below
 * x = -88.72, where the exact value is a denormal). x * onnxc_sigmoidf(x) (SiLU, as fused loops
 * compute it): 3.23 ulp for x >= -87.34; below, where the sigmoid is a denormal, the product
 * scales its rounding error 2^-150 by |x| <= 104 (up to 52.02 ulp of results below 1e-36). */
static inline float onnxc_sigmoidf(float x) {
  const float e = onnxc_expf(onnxc_float(onnxc_bits(x) | 0x80000000u));
  return onnxc_select(x >= 0.0f, 1.0f, e) / (1.0f + e);
}
)"},
    {"onnxc_tanhf", {"onnxc_bits", "onnxc_float", "onnxc_select", "onnxc_expf"}, R"(/* tanh x, as tanh |x| with the sign of x put back. |x| < 0.9: |x| + |x|^3 P(x^2), P a degree-6
 * minimax polynomial (relative error 1.1e-9); above: 1 - 2 / (e^(2|x|) + 1), which reaches 1
 * (and +-inf gives +-1) once e^(2|x|) overflows. NaN -> NaN, -0 -> -0.
 * Max error 1.04 ulp, max absolute error 6.2e-8 (glibc's tanhf: 2.16 ulp on every 7th input). */
static inline float onnxc_tanhf(float x) {
  const float a = onnxc_float(onnxc_bits(x) & 0x7fffffffu);
  const float s = a * a;
  float p = -0x1.ddd836p-12f;
  p = p * s + 0x1.529d4cp-9f;
  p = p * s + -0x1.0ed7a8p-7f;
  p = p * s + 0x1.62f1cap-6f;
  p = p * s + -0x1.b9ca4ep-5f;
  p = p * s + 0x1.110f38p-3f;
  p = p * s + -0x1.55554ep-2f;
  const float small = a + a * s * p;
  const float big = 1.0f - 2.0f / (onnxc_expf(2.0f * a) + 1.0f);
  const float r = onnxc_select(a < 0.9f, small, big);
  return onnxc_float(onnxc_bits(r) | (onnxc_bits(x) & 0x80000000u));
}
)"},
    {"onnxc_erff", {"onnxc_bits", "onnxc_float", "onnxc_select", "onnxc_expf"}, R"(/* erf x, as erf |x| with the sign of x put back. |x| < 0.92: |x| + |x| P(x^2), P a degree-6
 * minimax polynomial (relative error 8.9e-10); above: 1 - e^Q(b), b = min(|x|, 4), Q a degree-8
 * minimax polynomial for ln(erfc(b)) on [0.92, 4] (absolute error 1.4e-8; erf rounds to 1 from
 * 3.92 on). NaN -> NaN, +-inf -> +-1, -0 -> -0.
 * Max error 1.30 ulp, max absolute error 7.8e-8 (glibc's erff: 0.90 ulp on every 7th input). */
static inline float onnxc_erff(float x) {
  const float a = onnxc_float(onnxc_bits(x) & 0x7fffffffu);
  const float s = a * a;
  float p = 0x1.4f562ep-14f;
  p = p * s + -0x1.a606c2p-11f;
  p = p * s + 0x1.5449e4p-8f;
  p = p * s + -0x1.b80118p-6f;
  p = p * s + 0x1.ce2d64p-4f;
  p = p * s + -0x1.812740p-2f;
  p = p * s + 0x1.06eba8p-3f;
  const float small = a + a * p;
  const float b = onnxc_select(a > 4.0f, 4.0f, a);
  float q = 0x1.ae30d0p-20f;
  q = q * b + -0x1.7c79b8p-15f;
  q = q * b + 0x1.35b5f2p-11f;
  q = q * b + -0x1.36019ap-8f;
  q = q * b + 0x1.af7b8cp-6f;
  q = q * b + -0x1.c240f8p-4f;
  q = q * b + -0x1.4394e4p-1f;
  q = q * b + -0x1.21504cp+0f;
  q = q * b + 0x1.3490d4p-12f;
  const float big = 1.0f - onnxc_expf(q);
  const float r = onnxc_select(a < 0.92f, small, big);
  return onnxc_float(onnxc_bits(r) | (onnxc_bits(x) & 0x80000000u));
}
)"},
};

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Whether `name` occurs in `code` as a whole identifier.
bool names(const std::string& code, const std::string& name) {
  for (size_t p = code.find(name); p != std::string::npos; p = code.find(name, p + 1)) {
    size_t end = p + name.size();
    if ((p == 0 || !word_char(code[p - 1])) && (end == code.size() || !word_char(code[end]))) return true;
  }
  return false;
}

}  // namespace

std::string vmath_definitions(const std::string& code) {
  constexpr size_t n = std::size(kHelpers);
  bool need[n] = {};
  for (size_t i = n; i-- > 0;) {
    if (!need[i] && !names(code, kHelpers[i].name)) continue;
    need[i] = true;
    for (const char* c : kHelpers[i].calls)
      for (size_t j = 0; j < i; ++j)
        if (std::string(kHelpers[j].name) == c) need[j] = true;
  }
  std::string s;
  for (size_t i = 0; i < n; ++i)
    if (need[i]) s += kHelpers[i].source;
  if (s.empty()) return s;
  return "/* Inline math (onnxc codegen/c/vmath.cc): branch-free, vectorizable in omp simd loops. */\n" + s + "\n";
}

std::vector<std::string> vmath_helper_names() {
  std::vector<std::string> r;
  for (const Helper& h : kHelpers) r.push_back(h.name);
  return r;
}

}  // namespace onnxc
