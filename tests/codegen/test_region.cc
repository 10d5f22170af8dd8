// tests/codegen/test_region.cc — node function bodies in the inference's one parallel region
// (codegen/c/region.h): which bodies every thread may call with their loops shared, which run
// on one thread, which keep their own fork/join, and the worksharing form of the shared ones;
// the group form of a fork-join region's lists (thread groups) and the task form (OpenMP tasks
// and taskloops), each compiled and run by gcc with OpenMP at 1-5 threads; the iterations of a
// body's parallel loops, which the schedule's cost model reads.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "codegen/c/region.h"
#include "passes/schedule.h"

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

// The group form of a body that the one region shares ("" and a failure when it does not).
std::string grouped(const std::string& body) {
  const RegionBody r = region_body(body);
  if (r.role != RegionRole::Shared) {
    ADD_FAILURE() << "not a shared body:\n" << body;
    return "";
  }
  return group_body(r.body);
}

// A shared body's loops, in group form: each member takes its static share, then the group's
// barrier; a collapsed nest becomes one flattened range; a `single` runs on the first member.
// The pieces a kernel's work splits into, read from its parallel loop nests: the widest nest's
// iterations (a collapsed nest as one range, a step counted), 1 with no parallel loop, 0 where
// a bound is not a constant.
TEST(Region, ParallelIterationsOfTheWidestNest) {
  EXPECT_EQ(parallel_iterations("  for (int64_t i = 0; i < 64; ++i) y0[i] = 0.0f;\n"), 1);
  EXPECT_EQ(parallel_iterations("  ONNXC_PRAGMA(omp parallel for)\n"
                                "  for (int64_t i = 0; i < 49; ++i) y0[i] = 0.0f;\n"),
            49);
  EXPECT_EQ(parallel_iterations("  /* ONNXC_PRAGMA(omp parallel for) in a comment */\n"
                                "  {\n"
                                "    ONNXC_PRAGMA(omp parallel for collapse(2) schedule(static))\n"
                                "    for (int64_t grp = 0; grp < 4; ++grp) {\n"
                                "      for (int64_t seg = 0; seg < 9; ++seg) {\n"
                                "        y0[grp * 9 + seg] = 0.0f;\n"
                                "      }\n"
                                "    }\n"
                                "  }\n"
                                "  ONNXC_PRAGMA(omp parallel for)\n"
                                "  for (int64_t i = 8; i < 8 + 2 * (3 + 1); i += 3) y0[i] = 1.0f;\n"),
            36);
  EXPECT_EQ(parallel_iterations("  ONNXC_PRAGMA(omp parallel for)\n"
                                "  for (int64_t i = 8; i < 8 + 2 * (3 + 1); i += 3) y0[i] = 1.0f;\n"),
            3);  // 8, 11, 14
  EXPECT_EQ(parallel_iterations("  ONNXC_PRAGMA(omp parallel for)\n"
                                "  for (int64_t i = 0; i < n; ++i) y0[i] = 1.0f;\n"),
            0);
  EXPECT_EQ(parallel_iterations("  ONNXC_PRAGMA(omp parallel for)\n"
                                "  for (int64_t i = 0; i < 64 / 0; ++i) y0[i] = 1.0f;\n"),
            0);
  EXPECT_EQ(parallel_iterations("  ONNXC_PRAGMA(omp parallel for collapse(2))\n"
                                "  for (int64_t i = 0; i < 4; ++i) {\n"
                                "    y0[i] = 1.0f;\n"
                                "  }\n"),
            0);  // the second loop of the nest is missing
  // A known nest beside an unknown one: the known one.
  EXPECT_EQ(parallel_iterations("  ONNXC_PRAGMA(omp parallel for)\n"
                                "  for (int64_t i = 0; i < n; ++i) y0[i] = 1.0f;\n"
                                "  ONNXC_PRAGMA(omp parallel for simd)\n"
                                "  for (int64_t i = 0; i < 12; ++i) y0[i] = 1.0f;\n"),
            12);
}

TEST(Group, LoopsSplitAmongTheGroupAndEndAtItsBarrier) {
  const std::string g = grouped(
      "  {\n"
      "    const int64_t n = 0;\n"
      "    ONNXC_PRAGMA(omp parallel for collapse(2) schedule(static))\n"
      "    for (int64_t a = 0; a < 4; ++a) {\n"
      "      for (int64_t b = 2; b < 18; b += 4) {\n"
      "        y0[a * 16 + b] = x0[n + a * 16 + b];\n"
      "      }\n"
      "    }\n"
      "    ONNXC_PRAGMA(omp parallel for simd)\n"
      "    for (int64_t a = 0; a < 64; ++a) y0[a] += 1.0f;\n"
      "  }\n"
      "  for (int64_t p = 0; p < 4; ++p) y0[64 + p] = 0.0f;\n");
  ASSERT_FALSE(g.empty());
  EXPECT_EQ(count(g, "omp for"), 0u) << g;
  EXPECT_EQ(count(g, "omp single"), 0u) << g;
  EXPECT_EQ(count(g, "onnxc_group_lo(onnxc_g, 4 * (((18 - 2) + 4 - 1) / 4))"), 1u) << g;
  EXPECT_EQ(count(g, "const int64_t a = onnxc_i / (((18 - 2) + 4 - 1) / 4);"), 1u) << g;
  EXPECT_EQ(count(g, "const int64_t b = 2 + 4 * (onnxc_i % (((18 - 2) + 4 - 1) / 4));"), 1u) << g;
  EXPECT_EQ(count(g, "for (int64_t a = onnxc_group_lo(onnxc_g, 64), onnxc_end = onnxc_group_hi(onnxc_g, 64); a < onnxc_end; ++a) y0[a] += 1.0f;"), 1u) << g;
  EXPECT_EQ(count(g, "ONNXC_PRAGMA(omp simd)"), 1u) << g;
  EXPECT_EQ(count(g, "if (onnxc_g->rank == 0)"), 1u) << g;
  EXPECT_EQ(count(g, "onnxc_group_barrier(onnxc_g);"), 3u) << g;  // two loops, the single
}

TEST(Group, NowaitCopiesAndTheBlockBarrier) {
  const std::string g = grouped(
      "  ONNXC_PRAGMA(omp parallel)\n"
      "  {\n"
      "    ONNXC_PRAGMA(omp for nowait)\n"
      "    for (int64_t i = 0; i < 64; ++i) y0[i] = x0[i];\n"
      "    ONNXC_PRAGMA(omp single nowait)\n"
      "    memcpy(y0 + 64, x1, 256);\n"
      "  }\n");
  EXPECT_EQ(count(g, "onnxc_group_barrier(onnxc_g);"), 1u) << g;
  EXPECT_NE(g.find("if (onnxc_g->rank == 0)\n    memcpy(y0 + 64, x1, 256);\n    onnxc_group_barrier(onnxc_g);\n  }\n"), std::string::npos) << g;
}

TEST(Group, UnknownConstructsKeepTheFunctionAsWritten) {
  for (const char* b : {
           // a schedule the split does not make
           "  ONNXC_PRAGMA(omp for schedule(dynamic))\n  for (int64_t i = 0; i < 64; ++i) y0[i] = 0.0f;\n",
           // an inner bound that moves with the outer loop
           "  ONNXC_PRAGMA(omp for collapse(2))\n  for (int64_t a = 0; a < 4; ++a) {\n    for (int64_t b = a; b < 4; ++b) {\n"
           "      y0[a * 4 + b] = 0.0f;\n    }\n  }\n",
           // a loop header of another shape
           "  ONNXC_PRAGMA(omp for)\n  for (int64_t i = 63; i >= 0; --i) y0[i] = 0.0f;\n",
           // the team's thread number
           "  ONNXC_PRAGMA(omp for)\n  for (int64_t i = 0; i < 64; ++i) y0[i] = (float)omp_get_thread_num();\n",
       })
    EXPECT_EQ(group_body(b), "") << b;
}

std::string read_text(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The body the compiled tests rewrite: y0[i] += x0[i] + 1 over a 7 x 13 collapsed nest (the
// inner loop in steps of 2), then y1[j] += the sum of all of y0 (needs the loop before it
// complete), then one thread adds 1 to y1[5].
const char* const kCompiledBody =
    "  ONNXC_PRAGMA(omp parallel for collapse(2) schedule(static))\n"
    "  for (int64_t a = 0; a < 7; ++a) {\n"
    "    for (int64_t b = 1; b < 27; b += 2) {\n"
    "      y0[a * 13 + (b - 1) / 2] += x0[a * 13 + (b - 1) / 2] + 1.0f;\n"
    "    }\n"
    "  }\n"
    "  ONNXC_PRAGMA(omp parallel for)\n"
    "  for (int64_t j = 0; j < 5; ++j) {\n"
    "    float s = 0.0f;\n"
    "    for (int64_t i = 0; i < 91; ++i) s += y0[i];\n"
    "    y1[j] += s;\n"
    "  }\n"
    "  y1[5] += 1.0f;\n";

// A C program around a rewritten kCompiledBody: `runtime` (the C the form needs), the body as
// f(x0, y0, y1`params`), and a main that, for teams of 1-5 threads, runs `run` (which calls f
// twice on each of the lists x[l], y0[l], y1[l], l < 3) and checks that every element of y0 was
// written exactly once per call, that each y1[j] saw y0 complete and that the statement for
// one thread ran once per call. Prints "ok" and returns 0, or prints the first difference.
std::string compiled_program(const char* runtime, const std::string& params, const std::string& body, const std::string& run) {
  return std::string("#include <omp.h>\n#include <stdatomic.h>\n#include <stdint.h>\n#include <stdio.h>\n#include <string.h>\n"
                     "#define ONNXC_PRAGMA(x) _Pragma(#x)\n") +
         runtime + "static void f(const float* x0, float* y0, float* y1" + params + ") {\n" + body + "}\n" +
         "int main(void) {\n"
         "  static float x[3][91], y0[3][91], y1[3][6];\n"
         "  for (int l = 0; l < 3; ++l) for (int i = 0; i < 91; ++i) x[l][i] = (float)(i % 7);\n"
         "  for (int threads = 1; threads <= 5; ++threads) {\n"
         "    memset(y0, 0, sizeof y0);\n    memset(y1, 0, sizeof y1);\n" +
         run +
         "    for (int l = 0; l < 3; ++l) {\n"
         "      float s1 = 0, s2 = 0;\n"
         "      for (int i = 0; i < 91; ++i) {\n"
         "        if (y0[l][i] != 2 * (x[l][i] + 1)) { printf(\"threads %d list %d y0[%d] = %g\\n\", threads, l, i, y0[l][i]); return 1; }\n"
         "        s1 += x[l][i] + 1;\n        s2 += 2 * (x[l][i] + 1);\n      }\n"
         "      for (int j = 0; j < 5; ++j)\n"
         "        if (y1[l][j] != s1 + s2) { printf(\"threads %d list %d y1[%d] = %g, not %g\\n\", threads, l, j, y1[l][j], s1 + s2); return 1; }\n"
         "      if (y1[l][5] != 2) { printf(\"threads %d list %d: the statement for one thread ran %g times\\n\", threads, l, y1[l][5]); return 1; }\n"
         "    }\n"
         "  }\n"
         "  printf(\"ok\\n\");\n  return 0;\n}\n";
}

// Compiles `program` with gcc -fopenmp -Wall -Wextra -Werror and runs it: it must exit 0
// (`shown` goes with a failure).
void expect_program_runs(const std::string& program, const std::string& shown) {
  namespace fs = std::filesystem;
  std::string t = (fs::temp_directory_path() / "onnxc_region_XXXXXX").string();
  ASSERT_NE(mkdtemp(t.data()), nullptr);
  const std::string d = t + "/";
  std::ofstream(d + "p.c") << program;
  const std::string cmd = "gcc -std=c11 -O2 -fopenmp -Wall -Wextra -Werror " + d + "p.c -o " + d + "p > " + d + "log.txt 2>&1 && " + d + "p > " +
                          d + "out.txt 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd << "\n" << read_text(d + "log.txt") << read_text(d + "out.txt") << "\n" << shown;
  fs::remove_all(t);
}

// The group form, compiled with gcc -fopenmp and run with teams of 1-5 threads split into
// groups by onnxc_group_join: every element of every list's output is written exactly once and
// each loop sees the one before it complete (a sum over the previous loop's output).
TEST(Group, CompiledGroupsComputeEveryElementOnce) {
  const std::string g = grouped(kCompiledBody);
  ASSERT_FALSE(g.empty());
  expect_program_runs(compiled_program(group_runtime_c(), ", onnxc_group* onnxc_g", g,
                                       "    onnxc_group_sync sync[3];\n    onnxc_group_sync_init(sync, 3);\n"
                                       "    static const int64_t cost[3] = {3000, 1000, 1000};\n"
                                       "    ONNXC_PRAGMA(omp parallel num_threads(threads))\n    {\n"
                                       "      onnxc_group g;\n"
                                       "      for (int l = 0; l < 3; ++l) if (onnxc_group_join(&g, sync, 3, cost, l)) { f(x[l], y0[l], y1[l], &g); f(x[l], y0[l], y1[l], &g); }\n"
                                       "    }\n"),
                      g);
}

// The task form (--task-form omp-tasks) of a body that the one region shares.
std::string tasked(const std::string& body) {
  const RegionBody r = region_body(body);
  if (r.role != RegionRole::Shared) {
    ADD_FAILURE() << "not a shared body:\n" << body;
    return "";
  }
  return task_body(r.body);
}

// Each worksharing loop becomes a taskloop (simd and collapse kept, onnxc_taskloop_chunks() tasks), which
// waits for its tasks; the one task runs the serial statement itself and needs no barrier.
TEST(Task, LoopsBecomeTaskloopsAndSinglesTheTasksOwnStatements) {
  const std::string t = tasked(
      "  {\n"
      "    const int64_t n = 0;\n"
      "    ONNXC_PRAGMA(omp parallel for collapse(2) schedule(static))\n"
      "    for (int64_t a = 0; a < 4; ++a) {\n"
      "      for (int64_t b = 2; b < 18; b += 4) {\n"
      "        y0[a * 16 + b] = x0[n + a * 16 + b];\n"
      "      }\n"
      "    }\n"
      "    ONNXC_PRAGMA(omp parallel for simd)\n"
      "    for (int64_t a = 0; a < 64; ++a) y0[a] += 1.0f;\n"
      "  }\n"
      "  for (int64_t p = 0; p < 4; ++p) y0[64 + p] = 0.0f;\n");
  ASSERT_FALSE(t.empty());
  for (const char* gone : {"omp for", "omp single", "omp barrier", "schedule", "onnxc_g"}) EXPECT_EQ(count(t, gone), 0u) << gone << "\n" << t;
  EXPECT_EQ(count(t, "ONNXC_PRAGMA(omp taskloop collapse(2) num_tasks(onnxc_taskloop_chunks()))\n    for (int64_t a = 0; a < 4; ++a) {"), 1u) << t;
  EXPECT_EQ(count(t, "ONNXC_PRAGMA(omp taskloop simd num_tasks(onnxc_taskloop_chunks()))\n    for (int64_t a = 0; a < 64; ++a)"), 1u) << t;
  EXPECT_EQ(count(t, "\n  {\n    for (int64_t p = 0; p < 4; ++p) y0[64 + p] = 0.0f;\n  }\n"), 1u) << t;
}

TEST(Task, UnknownConstructsKeepTheFunctionAsWritten) {
  for (const char* b : {
           "  ONNXC_PRAGMA(omp for schedule(dynamic))\n  for (int64_t i = 0; i < 64; ++i) y0[i] = 0.0f;\n",
           "  ONNXC_PRAGMA(omp for)\n  for (int64_t i = 0; i < 64; ++i) y0[i] = (float)omp_get_thread_num();\n",
           "  ONNXC_PRAGMA(omp critical)\n  y0[0] += 1.0f;\n",
       })
    EXPECT_EQ(task_body(b), "") << b;
}

// The task form, compiled with gcc -fopenmp and run by teams of 1-5 threads: three chains of
// two tasks each (depend clauses, as the emitter writes them) whose taskloops any thread of the
// team helps with: every element is written exactly once, each loop sees the one before it
// complete, and the second task of a chain sees the first one's output.
TEST(Task, CompiledTasksComputeEveryElementOnce) {
  const std::string body = tasked(kCompiledBody);
  ASSERT_FALSE(body.empty());
  expect_program_runs(compiled_program(task_runtime_c(), "", body,
                                       "    ONNXC_PRAGMA(omp parallel num_threads(threads))\n    {\n"
                                       "      ONNXC_PRAGMA(omp single)\n      {\n"
                                       "        char dep[3];\n        (void)dep; /* gcc counts no use in a depend clause */\n"
                                       "        for (int l = 0; l < 3; ++l) {\n"
                                       "          ONNXC_PRAGMA(omp task depend(out: dep[l]))\n          { f(x[l], y0[l], y1[l]); }\n"
                                       "          ONNXC_PRAGMA(omp task depend(inout: dep[l]))\n          { f(x[l], y0[l], y1[l]); }\n"
                                       "        }\n"
                                       "        ONNXC_PRAGMA(omp taskwait)\n"
                                       "      }\n"
                                       "    }\n"),
                      body);
}

// The generated code's taskloops make as many chunks as the schedule pass predicts with
// (taskloop_chunks_per_thread), in teams of 1-16 threads.
TEST(Task, TaskloopChunksAreTheOnesThePredictionCounts) {
  std::string want = "static const int want[17] = {0";
  for (int t = 1; t <= 16; ++t) want += ", " + std::to_string(t * taskloop_chunks_per_thread(t));
  want += "};\n";
  expect_program_runs(std::string("#include <omp.h>\n#include <stdio.h>\n") + task_runtime_c() + want +
                          "int main(void) {\n"
                          "  omp_set_dynamic(0);\n"
                          "  for (int t = 1; t <= 16; ++t) {\n"
                          "    int got = -1, team = 0;\n"
                          "#pragma omp parallel num_threads(t)\n"
                          "#pragma omp single\n"
                          "    {\n      got = onnxc_taskloop_chunks();\n      team = omp_get_num_threads();\n    }\n"
                          "    if (team < 1 || team > 16 || got != want[team]) { printf(\"team of %d: %d chunks, not %d\\n\", team, got, team >= 1 && team <= 16 ? want[team] : -1); return 1; }\n"
                          "  }\n"
                          "  printf(\"ok\\n\");\n  return 0;\n}\n",
                      want);
}

}  // namespace
}  // namespace onnxc::test
