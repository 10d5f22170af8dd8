// tests/codegen/vmath_exhaustive.cc — the inline math helpers of the generated C
// (codegen/c/vmath.h) over all 2^32 float inputs against double-precision libm, one test per
// helper and compiler (gcc and clang at -O3 -march=native, as models are built), each within
// the bounds codegen/c/vmath.cc states (tests/codegen/vmath_check.h). Label `long`: each test
// takes 20-60 s on two cores; test_vmath.cc runs a strided subset in the default suite.
#include <gtest/gtest.h>

#include "tests/codegen/vmath_check.h"

namespace onnxc::test {
namespace {

class VMathExhaustive : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(VMathExhaustive, AllFloats) {
  const auto& [cc, fn] = GetParam();
  expect_vmath_accurate(cc, "-O3 -march=native", 1, {fn}, 1LL << 32);
}

INSTANTIATE_TEST_SUITE_P(, VMathExhaustive,
                         ::testing::Combine(::testing::Values("gcc", "clang"),
                                            ::testing::Values("expf", "logf", "tanhf", "erff", "sigmoidf", "siluf")),
                         [](const auto& info) { return std::get<0>(info.param) + "_" + std::get<1>(info.param); });

}  // namespace
}  // namespace onnxc::test
