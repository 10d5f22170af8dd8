// tests/codegen/test_region.cc — node function bodies in the inference's one parallel region
// (codegen/c/region.h): which bodies every thread may call with their loops shared, which run
// on one thread, which keep their own fork/join, and the worksharing form of the shared ones;
// the group form of a fork-join region's lists (thread groups) and the task form (OpenMP tasks
// and taskloops), each compiled and run by gcc with OpenMP at 1-5 threads; the iterations of a
// body's parallel loops, which the schedule's cost model reads.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "codegen/c/region.h"
#include "passes/schedule.h"
#include "tests/codegen/c_run.h"

namespace onnxc::test {
namespace {

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

// Writes `text`'s lines through w as a kernel writes them (CWriter indents them again).
void lines(CWriter& w, const std::string& text) {
  for (size_t p = 0; p < text.size();) {
    size_t e = text.find('\n', p);
    if (e == std::string::npos) e = text.size();
    const std::string l = text.substr(p, e - p);
    const size_t first = l.find_first_not_of(' ');
    w.line(first == std::string::npos ? "" : l.substr(first));
    p = e + 1;
  }
}

// A body of text lines only (no parallel construct, or ones written as text).
KernelBody text_body(const std::string& text) {
  CWriter w;
  lines(w, text);
  return w.kernel_body();
}

const ParallelNest kNest2D = {.loops = {{"a", 4}, {"b", 16}}, .schedule_static = true};

TEST(Region, SerialBodyRunsOnOneThread) {
  const std::string body =
      "  for (int64_t i = 0; i < 8; ++i) y0[i] = x0[i] + 1.0f;\n"
      "  ONNXC_PRAGMA(omp simd)\n"
      "  for (int64_t i = 8; i < 16; ++i) y0[i] = 0.0f;\n";
  const RegionBody r = region_body(text_body(body));
  EXPECT_EQ(r.role, RegionRole::Serial);
  EXPECT_EQ(r.body.text, body);
}

TEST(Region, EmptyBodyNeedsNoThreadAndNoBarrier) {
  const RegionBody r = region_body(text_body("  /* written in place by its inputs */\n"));
  EXPECT_EQ(r.role, RegionRole::Shared);
}

TEST(Region, ParallelLoopsInBareBlocksBecomeWorksharingLoops) {
  CWriter w;
  w("/* tasks (image, chunks, output row) {{not a brace that counts}} */");
  w.open_scope("n", 0);
  w.local("float* const yn = y0 + n * 64;");
  w.open_nest(kNest2D);
  lines(w, "yn[a * 16 + b] = x0[a * 16 + b];\n}\n}");
  w.open_nest({.loops = {{"a", 64}}}, "yn[a] += 1.0f;");
  w("}}");
  const RegionBody r = region_body(w.kernel_body());
  ASSERT_EQ(r.role, RegionRole::Shared) << r.reason;
  EXPECT_EQ(r.body.text,
            "  /* tasks (image, chunks, output row) {not a brace that counts} */\n"
            "  {\n"
            "    const int64_t n = 0;\n"
            "    float* const yn = y0 + n * 64;\n"
            "    ONNXC_PRAGMA(omp for collapse(2) schedule(static))\n"
            "    for (int64_t a = 0; a < 4; ++a) {\n"
            "      for (int64_t b = 0; b < 16; ++b) {\n"
            "        yn[a * 16 + b] = x0[a * 16 + b];\n"
            "      }\n"
            "    }\n"
            "    ONNXC_PRAGMA(omp for)\n"
            "    for (int64_t a = 0; a < 64; ++a) yn[a] += 1.0f;\n"
            "  }\n");
  // The marks moved with their lines, now worksharing loops.
  ASSERT_EQ(r.body.marks.size(), 2u);
  EXPECT_EQ(r.body.marks[0].line, 4u);
  EXPECT_EQ(r.body.marks[1].line, 10u);
  for (const ParallelMark& m : r.body.marks) EXPECT_EQ(m.nest.form, NestForm::Shared);
}

TEST(Region, ParallelBlockOfCopiesEndsInABarrier) {
  CWriter w;
  w.open_parallel_block();
  w.open_nest({.loops = {{"i", 64}}, .form = NestForm::SharedNowait}, "y0[i] = x0[i];");
  w.single_nowait();
  w("memcpy(y0 + 64, x1, 256);");
  w("}}");
  const RegionBody r = region_body(w.kernel_body());
  ASSERT_EQ(r.role, RegionRole::Shared) << r.reason;
  EXPECT_EQ(r.body.text,
            "  {\n"
            "    ONNXC_PRAGMA(omp for nowait)\n"
            "    for (int64_t i = 0; i < 64; ++i) y0[i] = x0[i];\n"
            "    ONNXC_PRAGMA(omp single nowait)\n"
            "    memcpy(y0 + 64, x1, 256);\n"
            "    ONNXC_PRAGMA(omp barrier)\n"  // the barrier is the block's last statement
            "  }\n");
  ASSERT_EQ(r.body.marks.size(), 3u);
  EXPECT_EQ(r.body.marks[0].kind, MarkKind::Nest);
  EXPECT_EQ(r.body.marks[1].kind, MarkKind::SingleNowait);
  EXPECT_EQ(r.body.marks[2].kind, MarkKind::Barrier);
  EXPECT_EQ(r.body.marks[2].line, 5u);
}

TEST(Region, SerialStatementBesideParallelLoopsRunsInSingle) {
  CWriter w;
  w.open_nest({.loops = {{"i", 64}}}, "y0[i * 64] = x0[i];");
  w("/* lanes 32..63 are padding: zeros */");
  w.serial();
  lines(w,
        "for (int64_t p = 0; p < 64; ++p) {\n"
        "float* restrict yp = y0 + p * 64;\n"
        "ONNXC_PRAGMA(omp simd)\n"
        "for (int64_t l = 32; l < 64; ++l) yp[l] = 0.0f;\n"
        "}");
  w.serial();
  lines(w,
        "ONNXC_PRAGMA(omp simd)\n"
        "for (int64_t i = 0; i < 4096; ++i) y1[i] = y1[i] > 0.0f ? y1[i] : 0.0f;");
  const RegionBody r = region_body(w.kernel_body());
  ASSERT_EQ(r.role, RegionRole::Shared) << r.reason;
  EXPECT_EQ(count(r.body.text, "ONNXC_PRAGMA(omp single)\n  {\n"), 2u) << r.body.text;
  EXPECT_NE(r.body.text.find("  ONNXC_PRAGMA(omp single)\n  {\n    ONNXC_PRAGMA(omp simd)\n    for (int64_t i = 0; i < 4096; ++i)"),
            std::string::npos)
      << r.body.text;
  EXPECT_EQ(count(r.body.text, "omp parallel"), 0u) << r.body.text;
  size_t singles = 0;
  for (const ParallelMark& m : r.body.marks) singles += m.kind == MarkKind::Single;
  EXPECT_EQ(singles, 2u);
}

// What a statement at the top of a body is comes from its kernel (CWriter::local, serial),
// never from its text: declarations every thread makes (a recurrent kernel's weights as
// pointers to arrays, codegen/c/kernels/rnn.cc, which a statement for one thread would scope
// out of the loops), statements for one thread (a write through such a pointer reaches shared
// memory), and nothing else.
TEST(Region, StatementsAreWhatTheirKernelSays) {
  CWriter w;
  w.local("const float (*restrict Wm)[4][2] = (const float (*)[4][2])x1;");
  w.local("float (* const Rm)[4] = (float (*)[4])y1;");
  w.open_nest({.loops = {{"b", 3}}}, "y0[b] = Wm[0][b][0] + Rm[b][1];");
  const RegionBody r = region_body(w.kernel_body());
  ASSERT_EQ(r.role, RegionRole::Shared) << r.reason;
  EXPECT_EQ(count(r.body.text, "omp single"), 0u) << r.body.text;
  EXPECT_EQ(r.body.text,
            "  const float (*restrict Wm)[4][2] = (const float (*)[4][2])x1;\n"
            "  float (* const Rm)[4] = (float (*)[4])y1;\n"
            "  ONNXC_PRAGMA(omp for)\n"
            "  for (int64_t b = 0; b < 3; ++b) y0[b] = Wm[0][b][0] + Rm[b][1];\n");
  CWriter v;
  v.local("float (*restrict Ym)[4] = (float (*)[4])y1;");
  v.serial();
  v("Ym[0][1] = 0.0f;");
  v.open_nest({.loops = {{"b", 3}}}, "y0[b] = 1.0f;");
  const RegionBody s = region_body(v.kernel_body());
  ASSERT_EQ(s.role, RegionRole::Shared) << s.reason;
  EXPECT_EQ(count(s.body.text, "ONNXC_PRAGMA(omp single)\n  {\n    Ym[0][1] = 0.0f;\n  }\n"), 1u) << s.body.text;
  ASSERT_EQ(s.body.marks.size(), 2u);
  EXPECT_EQ(s.body.marks[0].kind, MarkKind::Single);
  EXPECT_EQ(s.body.marks[0].line, 1u);
  // The same lines, undescribed: whatever they are, the body keeps its fork/join, naming the line.
  const char* undescribed[] = {"float s = 0.0f;", "Ym[0][1] = 0.0f;", "s += x0[0];", "f(&s);", "float* t = malloc(256);"};
  for (const char* line : undescribed) {
    CWriter u;
    u.local("float (*restrict Ym)[4] = (float (*)[4])y1;");
    u("{}", line);
    u.open_nest({.loops = {{"b", 3}}}, "y0[b] = 1.0f;");
    const RegionBody a = region_body(u.kernel_body());
    EXPECT_EQ(a.role, RegionRole::Alone) << line;
    EXPECT_EQ(a.body.text, u.body()) << line;
    EXPECT_EQ(a.reason, std::string("a statement its kernel did not describe as a declaration or a serial statement: ") + line);
  }
  // A serial vector loop is a serial statement too, when its kernel says so.
  CWriter q;
  q.open_nest({.loops = {{"b", 3}}}, "y0[b] = 1.0f;");
  lines(q, "ONNXC_PRAGMA(omp simd)\nfor (int64_t i = 0; i < 64; ++i) y1[i] = 0.0f;");
  EXPECT_EQ(region_body(q.kernel_body()).role, RegionRole::Alone);
}

TEST(Region, BodiesItDoesNotUnderstandKeepTheirForkJoin) {
  struct Case {
    const char* what;
    void (*write)(CWriter&);
    const char* reason;
  };
  const Case cases[] = {
      {"a parallel loop inside a serial loop",
       [](CWriter& w) {
         w.serial();
         w("for (int64_t n = 0; n < 2; ++n) {{");
         w.open_nest({.loops = {{"i", 64}}}, "y0[n * 64 + i] = 0.0f;");
         w("}}");
       },
       "inside a serial statement"},
      {"a reduction into a local, written as text",
       [](CWriter& w) {
         lines(w,
               "float s = 0.0f;\n"
               "ONNXC_PRAGMA(omp parallel for reduction(+:s))\n"
               "for (int64_t i = 0; i < 64; ++i) s += x0[i];\n"
               "y0[0] = s;");
       },
       "written as text"},
      {"an else on its own line, after a serial statement",
       [](CWriter& w) {
         w.open_nest({.loops = {{"i", 64}}}, "y0[i] = 0.0f;");
         w.serial();
         lines(w, "if (x0[0] > 0.0f) { y0[0] = 1.0f; }\nelse { y0[0] = 2.0f; }");
       },
       "did not describe as a declaration or a serial statement: else"},
      {"a parallel construct inside a declaration",
       [](CWriter& w) {
         w.local("static const float t[2] = {{");
         w.open_nest({.loops = {{"i", 64}}}, "y0[i] = 0.0f;");
         w("}};");
       },
       "inside a serial statement"},
      {"a serial vector hint without its loop",
       [](CWriter& w) {
         w.open_nest({.loops = {{"i", 64}}}, "y0[i] = 0.0f;");
         w.serial();
         lines(w, "ONNXC_PRAGMA(omp simd)\ny0[0] = 1.0f;");
       },
       "without its loop"},
      {"other parallel constructs",
       [](CWriter& w) { lines(w, "ONNXC_PRAGMA(omp parallel sections)\n{\nONNXC_PRAGMA(omp section)\ny0[0] = 0.0f;\n}"); }, "written as text"},
      {"braces that do not balance",
       [](CWriter& w) {
         w.open_nest({.loops = {{"i", 64}}});
         w("y0[i] = 0.0f;");
       },
       "left open"},
  };
  for (const Case& c : cases) {
    CWriter w;
    c.write(w);
    const RegionBody r = region_body(w.kernel_body());
    EXPECT_EQ(r.role, RegionRole::Alone) << c.what;
    EXPECT_EQ(r.body.text, w.body()) << c.what;
    EXPECT_NE(r.reason.find(c.reason), std::string::npos) << c.what << ": " << r.reason;
  }
}

// A form (group_body, task_body) of a body that the one region shares ("" and a failure when
// it does not).
std::string formed(const KernelBody& body, std::string (*form)(const KernelBody&, std::string*)) {
  const RegionBody r = region_body(body);
  if (r.role != RegionRole::Shared) {
    ADD_FAILURE() << "not a shared body (" << r.reason << "):\n" << body.text;
    return "";
  }
  return form(r.body, nullptr);
}

// The group form of a body that the one region shares.
std::string grouped(const KernelBody& body) { return formed(body, group_body); }

// The pieces a kernel's work splits into, read from its parallel loop nests: the widest nest's
// iterations (a collapsed nest as one range, a step counted), 1 with no parallel loop (or an
// empty one).
TEST(Region, ParallelIterationsOfTheWidestNest) {
  EXPECT_EQ(parallel_iterations(text_body("  for (int64_t i = 0; i < 64; ++i) y0[i] = 0.0f;\n").marks), 1);
  CWriter w;
  w.open_nest({.loops = {{"i", 49}}}, "y0[i] = 0.0f;");
  EXPECT_EQ(parallel_iterations(w.kernel_body().marks), 49);
  w("{{");
  w.open_nest({.loops = {{"grp", 4}, {"seg", 9}}, .schedule_static = true});
  lines(w, "y0[grp * 9 + seg] = 0.0f;\n}\n}\n}");
  w.open_nest({.loops = {{.var = "i", .end = 16, .step = 3, .lo = 8}}}, "y0[i] = 1.0f;");
  EXPECT_EQ(parallel_iterations(w.kernel_body().marks), 49);
  CWriter v;
  v.open_nest({.loops = {{"grp", 4}, {"seg", 9}}, .schedule_static = true});
  lines(v, "y0[grp * 9 + seg] = 0.0f;\n}\n}");
  v.open_nest({.loops = {{.var = "i", .end = 16, .step = 3, .lo = 8}}}, "y0[i] = 1.0f;");
  EXPECT_EQ(parallel_iterations(v.kernel_body().marks), 36);
  EXPECT_EQ((ParallelNest{.loops = {{.var = "i", .end = 16, .step = 3, .lo = 8}}}.iterations()), 3);  // 8, 11, 14
  EXPECT_EQ((ParallelNest{.loops = {{"i", 0}}}.iterations()), 0);
  CWriter empty;
  empty.open_nest({.loops = {{"i", 0}}}, "y0[i] = 1.0f;");
  EXPECT_EQ(parallel_iterations(empty.kernel_body().marks), 1);
}

// A shared body's loops, in group form: each member takes its static share, then the group's
// barrier; a collapsed nest becomes one flattened range; a `single` runs on the first member.
TEST(Group, LoopsSplitAmongTheGroupAndEndAtItsBarrier) {
  CWriter w;
  w.open_scope("n", 0);
  w.open_nest({.loops = {{"a", 4}, {"b", 18, 4, 2}}, .schedule_static = true});
  lines(w, "y0[a * 16 + b] = x0[n + a * 16 + b];\n}\n}");
  w.open_nest({.loops = {{"a", 64}}, .simd = true}, "y0[a] += 1.0f;");
  w("}}");
  w.serial();
  w("for (int64_t p = 0; p < 4; ++p) y0[64 + p] = 0.0f;");
  const std::string g = grouped(w.kernel_body());
  ASSERT_FALSE(g.empty());
  EXPECT_EQ(count(g, "omp for"), 0u) << g;
  EXPECT_EQ(count(g, "omp single"), 0u) << g;
  EXPECT_EQ(count(g, "onnxc_group_lo(onnxc_g, 4 * 4)"), 1u) << g;
  EXPECT_EQ(count(g, "const int64_t a = onnxc_i / 4;"), 1u) << g;
  EXPECT_EQ(count(g, "const int64_t b = 2 + 4 * (onnxc_i % 4);"), 1u) << g;
  EXPECT_EQ(count(g, "for (int64_t a = onnxc_group_lo(onnxc_g, 64), onnxc_end = onnxc_group_hi(onnxc_g, 64); a < onnxc_end; ++a) y0[a] += 1.0f;"), 1u) << g;
  EXPECT_EQ(count(g, "ONNXC_PRAGMA(omp simd)"), 1u) << g;
  EXPECT_EQ(count(g, "if (onnxc_g->rank == 0)"), 1u) << g;
  EXPECT_EQ(count(g, "onnxc_group_barrier(onnxc_g);"), 3u) << g;  // two loops, the single
}

TEST(Group, NowaitCopiesAndTheBlockBarrier) {
  CWriter w;
  w.open_parallel_block();
  w.open_nest({.loops = {{"i", 64}}, .form = NestForm::SharedNowait}, "y0[i] = x0[i];");
  w.single_nowait();
  w("memcpy(y0 + 64, x1, 256);");
  w("}}");
  const std::string g = grouped(w.kernel_body());
  EXPECT_EQ(count(g, "onnxc_group_barrier(onnxc_g);"), 1u) << g;
  EXPECT_NE(g.find("if (onnxc_g->rank == 0)\n    memcpy(y0 + 64, x1, 256);\n    onnxc_group_barrier(onnxc_g);\n  }\n"), std::string::npos) << g;
}

TEST(Group, UnknownConstructsKeepTheFunctionAsWritten) {
  struct Case {
    void (*write)(CWriter&);
    const char* reason;
  };
  const Case cases[] = {
      // the team's thread number
      {[](CWriter& w) { w.open_nest({.loops = {{"i", 64}}}, "y0[i] = (float)omp_get_thread_num();"); }, "thread numbers"},
      // a collapsed nest whose innermost loop is one line
      {[](CWriter& w) { w.open_nest({.loops = {{"a", 4}, {"b", 4}}}, "y0[a * 4 + b] = 0.0f;"), w("}}"); }, "each open a block"},
      // a collapsed vector loop
      {[](CWriter& w) {
         w.open_nest({.loops = {{"a", 4}, {"b", 4}}, .simd = true});
         lines(w, "y0[a * 4 + b] = 0.0f;\n}\n}");
       },
       "also a vector loop"},
  };
  for (const Case& c : cases) {
    CWriter w;
    c.write(w);
    const RegionBody r = region_body(w.kernel_body());
    ASSERT_EQ(r.role, RegionRole::Shared) << r.reason << "\n" << w.body();
    std::string why;
    EXPECT_EQ(group_body(r.body, &why), "") << w.body();
    EXPECT_NE(why.find(c.reason), std::string::npos) << why;
  }
}

// The body the compiled tests rewrite: y0[i] += x0[i] + 1 over a 7 x 13 collapsed nest (the
// inner loop in steps of 2), then y1[j] += the sum of all of y0 (needs the loop before it
// complete), then one thread adds 1 to y1[5].
KernelBody compiled_body() {
  CWriter w;
  w.open_nest({.loops = {{"a", 7}, {"b", 27, 2, 1}}, .schedule_static = true});
  lines(w, "y0[a * 13 + (b - 1) / 2] += x0[a * 13 + (b - 1) / 2] + 1.0f;\n}\n}");
  w.open_nest({.loops = {{"j", 5}}});
  lines(w, "float s = 0.0f;\nfor (int64_t i = 0; i < 91; ++i) s += y0[i];\ny1[j] += s;\n}");
  w.serial();
  w("y1[5] += 1.0f;");
  return w.kernel_body();
}

// A C program around a rewritten compiled_body(): `runtime` (the C the form needs), the body as
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
  std::string out;
  EXPECT_EQ(build_and_run_c(program, "-O2 -fopenmp", &out), "") << shown;
}

// The group form, compiled with gcc -fopenmp and run with teams of 1-5 threads split into
// groups by onnxc_group_join: every element of every list's output is written exactly once and
// each loop sees the one before it complete (a sum over the previous loop's output).
TEST(Group, CompiledGroupsComputeEveryElementOnce) {
  const std::string g = grouped(compiled_body());
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
std::string tasked(const KernelBody& body) { return formed(body, task_body); }

// Each worksharing loop becomes a taskloop (simd and collapse kept, onnxc_taskloop_chunks() tasks), which
// waits for its tasks; the one task runs the serial statement itself and needs no barrier.
TEST(Task, LoopsBecomeTaskloopsAndSinglesTheTasksOwnStatements) {
  CWriter w;
  w.open_scope("n", 0);
  w.open_nest({.loops = {{"a", 4}, {"b", 18, 4, 2}}, .schedule_static = true});
  lines(w, "y0[a * 16 + b] = x0[n + a * 16 + b];\n}\n}");
  w.open_nest({.loops = {{"a", 64}}, .simd = true}, "y0[a] += 1.0f;");
  w("}}");
  w.serial();
  w("for (int64_t p = 0; p < 4; ++p) y0[64 + p] = 0.0f;");
  const std::string t = tasked(w.kernel_body());
  ASSERT_FALSE(t.empty());
  for (const char* gone : {"omp for", "omp single", "omp barrier", "schedule", "onnxc_g"}) EXPECT_EQ(count(t, gone), 0u) << gone << "\n" << t;
  EXPECT_EQ(count(t, "ONNXC_PRAGMA(omp taskloop collapse(2) num_tasks(onnxc_taskloop_chunks()))\n    for (int64_t a = 0; a < 4; ++a) {"), 1u) << t;
  EXPECT_EQ(count(t, "ONNXC_PRAGMA(omp taskloop simd num_tasks(onnxc_taskloop_chunks()))\n    for (int64_t a = 0; a < 64; ++a)"), 1u) << t;
  EXPECT_EQ(count(t, "\n  {\n    for (int64_t p = 0; p < 4; ++p) y0[64 + p] = 0.0f;\n  }\n"), 1u) << t;
}

TEST(Task, UnknownConstructsKeepTheFunctionAsWritten) {
  CWriter w;
  w.open_nest({.loops = {{"i", 64}}}, "y0[i] = (float)omp_get_thread_num();");
  const RegionBody r = region_body(w.kernel_body());
  ASSERT_EQ(r.role, RegionRole::Shared) << r.reason;
  std::string why;
  EXPECT_EQ(task_body(r.body, &why), "");
  EXPECT_NE(why.find("thread numbers"), std::string::npos) << why;
}

// The task form, compiled with gcc -fopenmp and run by teams of 1-5 threads: three chains of
// two tasks each (depend clauses, as the emitter writes them) whose taskloops any thread of the
// team helps with: every element is written exactly once, each loop sees the one before it
// complete, and the second task of a chain sees the first one's output.
TEST(Task, CompiledTasksComputeEveryElementOnce) {
  const std::string body = tasked(compiled_body());
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
