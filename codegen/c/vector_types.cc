// codegen/c/vector_types.cc — the vector-extension prelude of the generated C (see
// vector_types.h).
#include "codegen/c/vector_types.h"

#include <fmt/format.h>

#include <cctype>
#include <cstdint>
#include <set>

namespace onnxc {

std::string vector_type(int64_t n) { return fmt::format("onnxc_vf{}", n); }
std::string vector_int_type(int64_t n) { return fmt::format("onnxc_vi{}", n); }

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
      " * them at any float-aligned address. Multiply-adds are plain `a += x * w` (a float x is broadcast); they become\n"
      " * fused multiply-adds where the compiler contracts them (-ffp-contract=fast with gcc -std=c11, see the top). */\n";
  for (int64_t n : widths)
    s += fmt::format(
        "typedef float {0} __attribute__((vector_size({1})));\n"
        "typedef float {0}u __attribute__((vector_size({1}), aligned(4), may_alias));\n"
        "typedef int {2} __attribute__((vector_size({1})));\n",
        vector_type(n), 4 * n, vector_int_type(n));
  return s + "\n";
}

std::string intrinsic_includes(const std::string& code) {
  if (code.find("_mm256_") == std::string::npos && code.find("_mm512_") == std::string::npos) return "";
  return "/* x86 intrinsics of the integer products (each with a plain-C #else for other targets). */\n"
         "#if defined(__AVX2__) || defined(__AVXVNNI__) || defined(__AVX512F__)\n#include <immintrin.h>\n#endif\n\n";
}

}  // namespace onnxc
