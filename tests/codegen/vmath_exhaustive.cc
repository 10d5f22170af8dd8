// tests/codegen/vmath_exhaustive.cc — the inline math helpers of the generated C
// (codegen/c/vmath.h) over all 2^32 float inputs against double-precision libm, one test per
// helper, compiler (gcc and clang at -O3 -march=native, as models are built) and sign (the
// 2^31 bit patterns with the sign bit clear, then set), each within the bounds
// codegen/c/vmath.cc states (tests/codegen/vmath_check.h). Label `long`: a test evaluates the
// double-precision reference 2^31 times, about 20 s of one core; test_vmath.cc runs a strided
// subset in the default suite.
#include <gtest/gtest.h>

#include "tests/codegen/vmath_check.h"

namespace onnxc::test {
namespace {

class VMathExhaustive : public ::testing::TestWithParam<std::tuple<std::string, std::string, bool>> {};

TEST_P(VMathExhaustive, AllFloats) {
  const auto& [cc, fn, negative] = GetParam();
  const uint64_t half = uint64_t{1} << 31;
  expect_vmath_accurate(cc, "-O3 -march=native", {1, negative ? half : 0, negative ? 2 * half : half}, {fn});
}

INSTANTIATE_TEST_SUITE_P(, VMathExhaustive,
                         ::testing::Combine(::testing::Values("gcc", "clang"),
                                            ::testing::Values("expf", "logf", "tanhf", "erff", "sigmoidf", "siluf"), ::testing::Bool()),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_" + std::get<1>(info.param) + (std::get<2>(info.param) ? "_negative" : "_positive");
                         });

}  // namespace
}  // namespace onnxc::test
