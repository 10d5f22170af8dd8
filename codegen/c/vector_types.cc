// codegen/c/vector_types.cc — the vector-extension prelude of the generated C (see
// vector_types.h).
#include "codegen/c/vector_types.h"

#include <fmt/format.h>

#include <cctype>
#include <cstdint>
#include <set>

namespace onnxc {

std::string vector_type(int64_t n) { return fmt::format("onnxc_vf{}", n); }

namespace {

// The x86 intrinsic spelling of a fused multiply-add on N floats, or "" (plain C).
struct Fused {
  const char* guard;  // preprocessor condition
  const char* vec;    // intrinsic vector type
  const char* fma;    // fma(a, b, c) = a * b + c
  const char* splat;  // broadcast of a float
};

const Fused* fused_for(int64_t n) {
  static const Fused f4{"defined(__FMA__)", "__m128", "_mm_fmadd_ps", "_mm_set1_ps"};
  static const Fused f8{"defined(__FMA__) && defined(__AVX__)", "__m256", "_mm256_fmadd_ps", "_mm256_set1_ps"};
  static const Fused f16{"defined(__AVX512F__)", "__m512", "_mm512_fmadd_ps", "_mm512_set1_ps"};
  if (n == 4) return &f4;
  if (n == 8) return &f8;
  if (n == 16) return &f16;
  return nullptr;
}

std::string width_definitions(int64_t n) {
  std::string t = vector_type(n);
  std::string s = fmt::format(
      "typedef float {0} __attribute__((vector_size({1})));\n"
      "typedef float {0}u __attribute__((vector_size({1}), aligned(4), may_alias));\n",
      t, 4 * n);
  auto plain = [&] {
    return fmt::format("#define ONNXC_VFMA{0}(a, b, c) ((a) * (b) + (c))\n#define ONNXC_VFMAS{0}(s, b, c) ((s) * (b) + (c))\n", n);
  };
  std::string alt;  // NEON for 4 floats (vfmaq_f32 takes the addend first)
  if (n == 4) {
    alt = fmt::format(
        "#elif defined(__ARM_NEON) && defined(__ARM_FEATURE_FMA)\n"
        "#define ONNXC_VFMA4(a, b, c) (({0})vfmaq_f32((float32x4_t)(c), (float32x4_t)(a), (float32x4_t)(b)))\n"
        "#define ONNXC_VFMAS4(s, b, c) (({0})vfmaq_f32((float32x4_t)(c), vdupq_n_f32(s), (float32x4_t)(b)))\n",
        t);
  }
  if (const Fused* f = fused_for(n)) {
    s += fmt::format("#if {}\n", f->guard);
    s += fmt::format("#define ONNXC_VFMA{0}(a, b, c) (({1}){2}(({3})(a), ({3})(b), ({3})(c)))\n", n, t, f->fma, f->vec);
    s += fmt::format("#define ONNXC_VFMAS{0}(s, b, c) (({1}){2}({4}(s), ({3})(b), ({3})(c)))\n", n, t, f->fma, f->vec, f->splat);
    s += alt + "#else\n" + plain() + "#endif\n";
  } else {
    s += plain();
  }
  return s;
}

}  // namespace

std::string vector_type_definitions(const std::string& code) {
  std::set<int64_t> widths;
  const std::string key = "onnxc_vf";
  for (size_t p = code.find(key); p != std::string::npos; p = code.find(key, p + 1)) {
    if (p > 0 && (std::isalnum(static_cast<unsigned char>(code[p - 1])) || code[p - 1] == '_')) continue;
    size_t q = p + key.size();
    int64_t n = 0;
    while (q < code.size() && std::isdigit(static_cast<unsigned char>(code[q])) && n < (int64_t{1} << 20)) n = n * 10 + (code[q++] - '0');
    if (n > 0) widths.insert(n);
  }
  if (widths.empty()) return "";
  std::string s =
      "/* Vector-extension types of the register-tiled kernels: onnxc_vfN holds N floats, onnxc_vfNu loads and stores\n"
      " * them at any float-aligned address; ONNXC_VFMAN(a, b, c) = a * b + c and ONNXC_VFMASN(s, b, c) = s * b + c\n"
      " * (s a float), fused through the target's intrinsics where it has FMA (gcc does not contract in ISO C mode). */\n"
      "#if defined(__AVX512F__) || defined(__FMA__)\n#include <immintrin.h>\n"
      "#elif defined(__ARM_NEON) && defined(__ARM_FEATURE_FMA)\n#include <arm_neon.h>\n#endif\n";
  for (int64_t n : widths) s += width_definitions(n);
  return s + "\n";
}

}  // namespace onnxc
