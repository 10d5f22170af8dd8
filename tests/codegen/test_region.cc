// tests/codegen/test_region.cc — node function bodies in the inference's one parallel region
// (codegen/c/region.h): which bodies every thread may call with their loops shared, which run
// on one thread, which keep their own fork/join, and the worksharing form of the shared ones.
#include <gtest/gtest.h>

#include <string>

#include "codegen/c/region.h"

namespace onnxc::test {
namespace {

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

TEST(Region, SerialBodyRunsOnOneThread) {
  const std::string body =
      "  for (int64_t i = 0; i < 8; ++i) y0[i] = x0[i] + 1.0f;\n"
      "  ONNXC_PRAGMA(omp simd)\n"
      "  for (int64_t i = 8; i < 16; ++i) y0[i] = 0.0f;\n";
  const RegionBody r = region_body(body);
  EXPECT_EQ(r.role, RegionRole::Serial);
  EXPECT_EQ(r.body, body);
}

TEST(Region, EmptyBodyNeedsNoThreadAndNoBarrier) {
  const RegionBody r = region_body("  /* written in place by its inputs */\n");
  EXPECT_EQ(r.role, RegionRole::Shared);
}

TEST(Region, ParallelLoopsInBareBlocksBecomeWorksharingLoops) {
  const std::string body =
      "  /* tasks (image, chunks, output row) {not a brace that counts} */\n"
      "  {\n"
      "    const int64_t n = 0;\n"
      "    float* const yn = y0 + n * 64;\n"
      "    ONNXC_PRAGMA(omp parallel for collapse(2) schedule(static))\n"
      "    for (int64_t a = 0; a < 4; ++a) {\n"
      "      for (int64_t b = 0; b < 16; ++b) {\n"
      "        yn[a * 16 + b] = x0[a * 16 + b];\n"
      "      }\n"
      "    }\n"
      "    ONNXC_PRAGMA(omp parallel for)\n"
      "    for (int64_t a = 0; a < 64; ++a) yn[a] += 1.0f;\n"
      "  }\n";
  const RegionBody r = region_body(body);
  ASSERT_EQ(r.role, RegionRole::Shared);
  EXPECT_EQ(count(r.body, "omp parallel"), 0u) << r.body;
  EXPECT_EQ(count(r.body, "ONNXC_PRAGMA(omp for collapse(2) schedule(static))"), 1u) << r.body;
  EXPECT_EQ(count(r.body, "ONNXC_PRAGMA(omp for)"), 1u) << r.body;
  EXPECT_EQ(count(r.body, "omp single"), 0u) << r.body;
  EXPECT_EQ(count(r.body, "\n"), count(body, "\n"));  // nothing else added or lost
}

TEST(Region, ParallelBlockOfCopiesEndsInABarrier) {
  const std::string body =
      "  ONNXC_PRAGMA(omp parallel)\n"
      "  {\n"
      "    ONNXC_PRAGMA(omp for nowait)\n"
      "    for (int64_t i = 0; i < 64; ++i) y0[i] = x0[i];\n"
      "    ONNXC_PRAGMA(omp single nowait)\n"
      "    memcpy(y0 + 64, x1, 256);\n"
      "  }\n";
  const RegionBody r = region_body(body);
  ASSERT_EQ(r.role, RegionRole::Shared);
  EXPECT_EQ(count(r.body, "omp parallel"), 0u) << r.body;
  EXPECT_EQ(count(r.body, "ONNXC_PRAGMA(omp for nowait)"), 1u) << r.body;
  // The barrier is the block's last statement.
  EXPECT_NE(r.body.find("memcpy(y0 + 64, x1, 256);\n    ONNXC_PRAGMA(omp barrier)\n  }\n"), std::string::npos) << r.body;
}

TEST(Region, SerialStatementBesideParallelLoopsRunsInSingle) {
  const std::string body =
      "  ONNXC_PRAGMA(omp parallel for)\n"
      "  for (int64_t i = 0; i < 64; ++i) y0[i * 64] = x0[i];\n"
      "  /* lanes 32..63 are padding: zeros */\n"
      "  for (int64_t p = 0; p < 64; ++p) {\n"
      "    float* restrict yp = y0 + p * 64;\n"
      "    ONNXC_PRAGMA(omp simd)\n"
      "    for (int64_t l = 32; l < 64; ++l) yp[l] = 0.0f;\n"
      "  }\n"
      "  ONNXC_PRAGMA(omp simd)\n"
      "  for (int64_t i = 0; i < 4096; ++i) y1[i] = y1[i] > 0.0f ? y1[i] : 0.0f;\n";
  const RegionBody r = region_body(body);
  ASSERT_EQ(r.role, RegionRole::Shared);
  EXPECT_EQ(count(r.body, "ONNXC_PRAGMA(omp single)\n  {\n"), 2u) << r.body;
  EXPECT_NE(r.body.find("  ONNXC_PRAGMA(omp single)\n  {\n    ONNXC_PRAGMA(omp simd)\n    for (int64_t i = 0; i < 4096; ++i)"),
            std::string::npos)
      << r.body;
  EXPECT_EQ(count(r.body, "omp parallel"), 0u) << r.body;
}

TEST(Region, StatementThatChangesALocalKeepsItsForkJoin) {
  // Each thread of a region has its own locals: a statement on one thread cannot set them.
  const char* writes[] = {"s += x0[i];", "s = x0[i];", "++s;", "s--;", "acc[1] = x0[i];", "v[0] += x0[i];", "f(&s);"};
  for (const char* w : writes) {
    const std::string body = std::string(
                                 "  float s = 0.0f;\n"
                                 "  float acc[4];\n"
                                 "  onnxc_vf16 v;\n"
                                 "  for (int64_t i = 0; i < 4; ++i) {\n    ") +
                             w +
                             "\n  }\n"
                             "  ONNXC_PRAGMA(omp parallel for)\n"
                             "  for (int64_t i = 0; i < 64; ++i) y0[i] = s;\n";
    const RegionBody r = region_body(body);
    EXPECT_EQ(r.role, RegionRole::Alone) << w;
    EXPECT_EQ(r.body, body) << w;
  }
  // Writes through a local pointer reach shared memory; a comparison is not a write.
  const std::string body =
      "  float* const q = y0 + 64;\n"
      "  const int64_t k = 3;\n"
      "  for (int64_t i = 0; i < 4; ++i) q[i] = (k == 3) ? 1.0f : 0.0f;\n"
      "  ONNXC_PRAGMA(omp parallel for)\n"
      "  for (int64_t i = 0; i < 64; ++i) y0[i] = 1.0f;\n";
  EXPECT_EQ(region_body(body).role, RegionRole::Shared);
}

TEST(Region, BodiesItDoesNotUnderstandKeepTheirForkJoin) {
  const char* bodies[] = {
      // a parallel loop inside a serial loop
      "  for (int64_t n = 0; n < 2; ++n) {\n"
      "    ONNXC_PRAGMA(omp parallel for)\n"
      "    for (int64_t i = 0; i < 64; ++i) y0[n * 64 + i] = 0.0f;\n"
      "  }\n",
      // a reduction into a local
      "  float s = 0.0f;\n"
      "  ONNXC_PRAGMA(omp parallel for reduction(+:s))\n"
      "  for (int64_t i = 0; i < 64; ++i) s += x0[i];\n"
      "  y0[0] = s;\n",
      // a declaration that calls a function (an allocation per thread)
      "  float* t = malloc(256);\n"
      "  ONNXC_PRAGMA(omp parallel for)\n"
      "  for (int64_t i = 0; i < 64; ++i) t[i] = x0[i];\n"
      "  free(t);\n",
      // an else on its own line
      "  ONNXC_PRAGMA(omp parallel for)\n"
      "  for (int64_t i = 0; i < 64; ++i) y0[i] = 0.0f;\n"
      "  if (x0[0] > 0.0f) { y0[0] = 1.0f; }\n"
      "  else { y0[0] = 2.0f; }\n",
      // a return
      "  ONNXC_PRAGMA(omp parallel for)\n"
      "  for (int64_t i = 0; i < 64; ++i) y0[i] = 0.0f;\n"
      "  if (x0[0] > 0.0f) return;\n",
      // other parallel constructs
      "  ONNXC_PRAGMA(omp parallel sections)\n"
      "  {\n"
      "    ONNXC_PRAGMA(omp section)\n"
      "    y0[0] = 0.0f;\n"
      "  }\n",
      // braces that do not balance
      "  ONNXC_PRAGMA(omp parallel for)\n"
      "  for (int64_t i = 0; i < 64; ++i) {\n"
      "    y0[i] = 0.0f;\n",
  };
  for (const char* b : bodies) {
    const RegionBody r = region_body(b);
    EXPECT_EQ(r.role, RegionRole::Alone) << b;
    EXPECT_EQ(r.body, b);
  }
}

}  // namespace
}  // namespace onnxc::test
