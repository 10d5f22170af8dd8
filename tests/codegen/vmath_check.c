/* tests/codegen/vmath_check.c — accuracy driver for the inline math helpers of the generated C
 * (codegen/c/vmath.cc). It is linked with a translation unit that tests/codegen/vmath_check.h
 * writes and compiles with the flags under test: the helpers exactly as the module writer
 * emits them and, per checked function F, `void vmath_run_F(const float* x, float* y, int64_t n)`,
 * an omp simd loop y[i] = F(x[i]). This driver itself is built at -O2 with OpenMP.
 *
 * Usage: vmath_check STRIDE FIRST END FUNCTION...
 * For each function it evaluates the float bit patterns FIRST, FIRST + STRIDE, ... below END
 * (1 0 4294967296: all of them) and a list of special inputs, compares each result y with the
 * double-precision libm reference r, and prints one line
 *   FUNCTION checked N max_ulp U at X main_ulp V at W max_abs A at Z bad B
 * where U is the largest |y - r| in float ulps at the exact value r (2^-149 in the denormals),
 * V the same over the inputs x >= the function's `lo` (siluf: x * sigmoid(x) where the sigmoid
 * is not denormal; -inf, i.e. all inputs, for the others), A the largest |y - r|, and X, W, Z
 * the inputs (hex floats) where they occur. An input is bad when
 * the reference rounds to NaN or +-inf and y is not NaN or that infinity, when r is exactly +-0
 * and y is not the same signed zero, or when y is NaN or infinite and the reference is not;
 * the first bad inputs are printed as "bad FUNCTION x=... y=... ref=...". Exit status 0 unless
 * the arguments are wrong. */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void vmath_run_expf(const float* x, float* y, int64_t n);
void vmath_run_logf(const float* x, float* y, int64_t n);
void vmath_run_tanhf(const float* x, float* y, int64_t n);
void vmath_run_erff(const float* x, float* y, int64_t n);
void vmath_run_sigmoidf(const float* x, float* y, int64_t n);
void vmath_run_siluf(const float* x, float* y, int64_t n);

static double ref_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
static double ref_silu(double x) { return x / (1.0 + exp(-x)); }

static const struct {
  const char* name;
  void (*run)(const float*, float*, int64_t);
  double (*ref)(double);
  float lo;  /* main_ulp covers x >= lo */
} kFunctions[] = {
    {"expf", vmath_run_expf, exp, -INFINITY},
    {"logf", vmath_run_logf, log, -INFINITY},
    {"tanhf", vmath_run_tanhf, tanh, -INFINITY},
    {"erff", vmath_run_erff, erf, -INFINITY},
    {"sigmoidf", vmath_run_sigmoidf, ref_sigmoid, -INFINITY},
    {"siluf", vmath_run_siluf, ref_silu, -0x1.5d589ep+6f}, /* -87.34: sigmoid(x) >= 2^-126 above */
};

/* Inputs every run checks besides the strided ones: zeros, denormals, the normal range's ends,
 * infinities, NaNs (quiet, signalling, negative, payloads), and the helpers' boundaries (exp's
 * clamps and overflow/underflow edges, log's sqrt(1/2) split, tanh's and erf's branch points). */
static const uint32_t kSpecials[] = {
    0x00000000u, 0x80000000u, 0x00000001u, 0x80000001u, 0x007fffffu, 0x807fffffu, 0x00800000u, 0x80800000u,
    0x7f7fffffu, 0xff7fffffu, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00000u, 0x7f800001u, 0xff800001u,
    0x7fffffffu, 0xffffffffu, 0x7fa00000u, 0x3f800000u, 0xbf800000u, 0x3f000000u, 0xbf000000u, 0x3f7fffffu,
    0x3f800001u, 0x3f3504f3u, 0x3f3504f2u, 0x3f3504f4u, 0x42b17217u, 0x42b17218u, 0x42b20000u, 0xc2b17217u,
    0xc2aeac4fu, 0xc2aeac50u, 0xc2cff1b4u, 0xc2cff1b5u, 0xc2d00000u, 0x42b00000u, 0x3f666666u, 0xbf666666u,
    0x3f666665u, 0x3f666667u, 0x3f6b851fu, 0xbf6b851fu, 0x3f6b851eu, 0x3f6b8520u, 0x407ae148u, 0x40800000u,
    0xc0800000u, 0x40800001u, 0x41300000u, 0xc1300000u, 0x42300000u, 0xc2300000u,
};
enum { kNumSpecials = sizeof kSpecials / sizeof kSpecials[0], kBlock = 4096 };

/* 1 / (float ulp at the exact value r): 2^(23 - e) for |r| in [2^e, 2^(e+1)), 2^149 below 2^-126. */
static double inv_ulp(double r) {
  uint64_t b;
  memcpy(&b, &r, sizeof b);
  int64_t e = (int64_t)((b >> 52) & 0x7ff) - 23; /* biased double exponent of the ulp */
  if (e < 1023 - 149) e = 1023 - 149;
  uint64_t ib = (uint64_t)(2046 - e) << 52;
  double d;
  memcpy(&d, &ib, sizeof d);
  return d;
}

int main(int argc, char** argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: vmath_check STRIDE FIRST END FUNCTION...\n");
    return 2;
  }
  const uint64_t stride = strtoull(argv[1], NULL, 10), first = strtoull(argv[2], NULL, 10), end = strtoull(argv[3], NULL, 10);
  if (stride == 0 || first >= end || end > (UINT64_C(1) << 32)) return 2;
  const uint64_t strided = (end - first + stride - 1) / stride, total = strided + kNumSpecials;
  const uint64_t blocks = (total + kBlock - 1) / kBlock;
  for (int a = 4; a < argc; ++a) {
    size_t f = 0;
    while (f < sizeof kFunctions / sizeof kFunctions[0] && strcmp(kFunctions[f].name, argv[a]) != 0) ++f;
    if (f == sizeof kFunctions / sizeof kFunctions[0]) {
      fprintf(stderr, "vmath_check: unknown function '%s'\n", argv[a]);
      return 2;
    }
    double max_ulp = 0, main_ulp = 0, max_abs = 0;
    float at_ulp = 0, at_main = 0, at_abs = 0;
    long long bad = 0;
#pragma omp parallel for schedule(dynamic, 16) reduction(+ : bad)
    for (uint64_t b = 0; b < blocks; ++b) {
      float x[kBlock], y[kBlock];
      const uint64_t b0 = b * kBlock, n = total - b0 < kBlock ? total - b0 : kBlock;
      for (uint64_t i = 0; i < n; ++i) {
        const uint64_t k = b0 + i;
        const uint32_t u = k < strided ? (uint32_t)(first + k * stride) : kSpecials[k - strided];
        memcpy(&x[i], &u, sizeof u);
      }
      kFunctions[f].run(x, y, (int64_t)n);
      double bu = 0, bn = 0, ba = 0;
      float xu = 0, xn = 0, xa = 0;
      for (uint64_t i = 0; i < n; ++i) {
        const double r = kFunctions[f].ref((double)x[i]);
        const float rf = (float)r, yi = y[i];
        int ok = 1;
        if (isnan(rf) || isinf(rf)) ok = isnan(rf) ? isnan(yi) : yi == rf;
        else if (isnan(yi) || isinf(yi)) ok = 0;
        else if (r == 0) ok = yi == 0 && !signbit(yi) == !signbit(r);
        if (!ok) {
          ++bad;
#pragma omp critical
          if (bad <= 5) printf("bad %s x=%a y=%a ref=%a\n", argv[a], x[i], yi, r);
          continue;
        }
        if (isnan(rf) || isinf(rf)) continue;
        const double d = fabs((double)yi - r), ulps = d * inv_ulp(r);
        if (ulps > bu) bu = ulps, xu = x[i];
        if (ulps > bn && x[i] >= kFunctions[f].lo) bn = ulps, xn = x[i];
        if (d > ba) ba = d, xa = x[i];
      }
#pragma omp critical
      {
        if (bu > max_ulp) max_ulp = bu, at_ulp = xu;
        if (bn > main_ulp) main_ulp = bn, at_main = xn;
        if (ba > max_abs) max_abs = ba, at_abs = xa;
      }
    }
    printf("%s checked %" PRIu64 " max_ulp %.4f at %a main_ulp %.4f at %a max_abs %.4g at %a bad %lld\n", argv[a], total,
           max_ulp, at_ulp, main_ulp, at_main, max_abs, at_abs, bad);
    fflush(stdout);
  }
  return 0;
}
