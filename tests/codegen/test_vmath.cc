// tests/codegen/test_vmath.cc — the inline math of the generated C (codegen/c/vmath.h) and
// the absence of libm calls from the hot loops:
//   - a module gets the definitions of exactly the helpers its code calls, in a fixed order;
//   - accuracy against double-precision libm over every 97th float bit pattern and the
//     special inputs (tests/codegen/vmath_check.c), built as the module writer emits the
//     helpers with gcc -O3 -march=native (with and without -ffp-contract=fast, which the
//     targets' flags carry), gcc -O0 (every 997th: unoptimized code is slow) and
//     clang -O3 -march=native; all 2^32 inputs run in vmath_exhaustive.cc (label `long`);
//   - the helpers compile warning-free (gcc, clang; -O0, -O1, -O3) and every helper's omp simd
//     loop vectorizes (gcc -fopt-info-vec, clang -Rpass);
//   - googlenet- and efficientnet-shaped graphs and a graph of every op whose kernel changed
//     (NCHWc and plain) match the reference and their object code calls none of expf, exp,
//     logf, log, tanhf, erff, fmaxf, fmax, fminf, fmin (nm -u), with gcc and clang at -O3.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <set>

#include "codegen/c/vmath.h"
#include "tests/codegen/c_run.h"
#include "tests/codegen/vmath_check.h"
#include "tests/passes/pass_test_util.h"

namespace onnxc::test {
namespace {

std::vector<std::string> all_functions() {
  std::vector<std::string> r;
  for (auto& f : vmath_functions()) r.push_back(f.name);
  return r;
}

// The helper names whose definitions `defs` holds, in order.
std::vector<std::string> defined(const std::string& defs) {
  std::vector<std::string> r;
  std::regex def(R"(static inline \w+ (onnxc_\w+)\()");
  for (auto it = std::sregex_iterator(defs.begin(), defs.end(), def); it != std::sregex_iterator(); ++it) r.push_back((*it)[1]);
  return r;
}

TEST(VMath, DefinitionsOfTheHelpersCalledOnly) {
  EXPECT_EQ(vmath_definitions("y[i] = x[i] > 0.0f ? x[i] : 0.0f; z = expf(w); m = fmaxf(a, b);"), "");
  EXPECT_EQ(vmath_definitions("my_onnxc_expf(x) + onnxc_expf2(y)"), "");  // whole identifiers only
  const std::vector<std::string> sig = {"onnxc_bits", "onnxc_float", "onnxc_select", "onnxc_expf", "onnxc_sigmoidf"};
  EXPECT_EQ(defined(vmath_definitions("const float t1 = onnxc_sigmoidf((t0));")), sig);
  EXPECT_EQ(defined(vmath_definitions("onnxc_logf(s)")), (std::vector<std::string>{"onnxc_bits", "onnxc_float", "onnxc_select", "onnxc_logf"}));
  // Fixed order whatever the order of the calls, each definition once.
  std::string both = vmath_definitions("onnxc_erff(a) + onnxc_tanhf(b) + onnxc_expf(c) + onnxc_erff(d)");
  EXPECT_EQ(defined(both), (std::vector<std::string>{"onnxc_bits", "onnxc_float", "onnxc_select", "onnxc_expf", "onnxc_tanhf", "onnxc_erff"}));
  std::string all;
  for (auto& n : vmath_helper_names()) all += n + " ";
  EXPECT_EQ(defined(vmath_definitions(all)), vmath_helper_names());
}

TEST(VMath, AccuracyGccO3) { expect_vmath_accurate("gcc", "-O3 -march=native", {97}, all_functions()); }
// As models are built (the targets' flags): gcc contracting a * b + c into FMAs.
TEST(VMath, AccuracyGccO3Contract) { expect_vmath_accurate("gcc", "-O3 -march=native -ffp-contract=fast", {97}, all_functions()); }
TEST(VMath, AccuracyGccO0) { expect_vmath_accurate("gcc", "-O0", {997}, all_functions()); }
TEST(VMath, AccuracyClangO3) { expect_vmath_accurate("clang", "-O3 -march=native", {97}, all_functions()); }

// The driver would report a helper that is off by far more than its bound: a check of the check.
TEST(VMath, TheCheckSeesAnError) {
  namespace fs = std::filesystem;
  const fs::path dir = vmath_tmpdir();
  ASSERT_FALSE(dir.empty());
  const std::string d = dir.string() + "/";
  std::string tu = vmath_helpers_tu();
  // tanh's polynomial loses its x^3 term: about 1/3 x^3 wrong below |x| = 0.9.
  const std::string term = "p = p * s + -0x1.55554ep-2f;";
  ASSERT_NE(tu.find(term), std::string::npos);
  tu.replace(tu.find(term), term.size(), "p = p * s;");
  std::ofstream(d + "helpers.c") << tu;
  ASSERT_EQ(std::system(("gcc -std=c11 -O2 -fopenmp -c " + d + "helpers.c -o " + d + "helpers.o && cc -std=c11 -O2 -fopenmp " ONNXC_VMATH_DRIVER
                         " " + d + "helpers.o -o " + d + "check -lm && " + d + "check 997 0 4294967296 tanhf expf > " + d + "out.txt")
                            .c_str()),
            0);
  std::string out = vmath_read(d + "out.txt");
  double tanh_ulp = 0, exp_ulp = 1e9;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    std::sscanf(line.c_str(), "tanhf checked %*d max_ulp %lf", &tanh_ulp);
    std::sscanf(line.c_str(), "expf checked %*d max_ulp %lf", &exp_ulp);
  }
  EXPECT_GT(tanh_ulp, 1000.0) << out;
  EXPECT_LE(exp_ulp, vmath_functions()[0].max_ulp) << out;
  fs::remove_all(dir);
}

// The helpers compile without warnings under gcc and clang at -O0, -O1 and -O3 (as NAME.c).
TEST(VMath, WarningFree) {
  namespace fs = std::filesystem;
  const fs::path dir = vmath_tmpdir();
  ASSERT_FALSE(dir.empty());
  const std::string d = dir.string() + "/";
  std::ofstream(d + "helpers.c") << vmath_helpers_tu();
  for (const char* cc : {"gcc", "clang"})
    for (const char* o : {"-O0", "-O1", "-O3 -march=native"}) {
      std::string cmd = std::string(cc) + " -std=c11 " + o + " -fopenmp -Wall -Wextra -Werror -c " + d + "helpers.c -o " + d + "h.o > " +
                        d + "log.txt 2>&1";
      EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd << "\n" << vmath_read(d + "log.txt");
    }
  fs::remove_all(dir);
}

// Every helper's loop is vectorized by gcc and by clang at -O3 -march=native.
TEST(VMath, LoopsVectorize) {
  namespace fs = std::filesystem;
  const fs::path dir = vmath_tmpdir();
  ASSERT_FALSE(dir.empty());
  const std::string d = dir.string() + "/";
  std::map<std::string, int> lines;
  std::ofstream(d + "helpers.c") << vmath_helpers_tu(&lines);
  ASSERT_EQ(std::system(("gcc -std=c11 -O3 -march=native -fopenmp -c " + d + "helpers.c -o " + d + "gcc.o -fopt-info-vec-optimized=" + d +
                         "gcc.txt")
                            .c_str()),
            0);
  ASSERT_EQ(std::system(("clang -std=c11 -O3 -march=native -fopenmp -c " + d + "helpers.c -o " + d +
                         "clang.o -Rpass=loop-vectorize -Rpass-missed=loop-vectorize -Rpass-analysis=loop-vectorize > " + d +
                         "clang.txt 2>&1")
                            .c_str()),
            0);
  const std::string g = vmath_read(d + "gcc.txt"), c = vmath_read(d + "clang.txt");
  for (auto& [fn, line] : lines)
    EXPECT_NE(g.find("helpers.c:" + std::to_string(line) + ":"), std::string::npos) << fn << ": gcc did not vectorize its loop:\n" << g;
  size_t vectorized = 0;
  for (size_t p = 0; (p = c.find("remark: vectorized loop", p)) != std::string::npos; ++p) ++vectorized;
  EXPECT_EQ(vectorized, lines.size()) << c;
  EXPECT_EQ(c.find("not vectorized"), std::string::npos) << c;
  fs::remove_all(dir);
}

// ---- generated models call no libm function in their loops ----

const std::vector<std::string> kForbidden = {"expf", "exp", "logf", "log", "tanhf", "erff", "fmaxf", "fmax", "fminf", "fmin"};

Value* conv(GraphBuilder& b, Value* x, int64_t cout, int64_t k, int64_t stride = 1, int64_t group = 1) {
  const int64_t cin = x->shape[1];
  static int n = 0;
  std::string id = std::to_string(n++);
  return b.node("Conv", {x, b.random_constant("w" + id, {cout, cin / group, k, k}, -0.3f, 0.3f), b.random_constant("b" + id, {cout})},
                {{"pads", attr_ints({k / 2, k / 2, k / 2, k / 2})}, {"strides", attr_ints({stride, stride})}, {"group", attr_int(group)}});
}

Value* maxpool(GraphBuilder& b, Value* x, int64_t k, int64_t s, int64_t pad, int64_t ceil) {
  return b.node("MaxPool", {x},
                {{"kernel_shape", attr_ints({k, k})}, {"strides", attr_ints({s, s})}, {"pads", attr_ints({pad, pad, pad, pad})},
                 {"ceil_mode", attr_int(ceil)}});
}

Value* silu(GraphBuilder& b, Value* x) { return b.node("Mul", {x, b.node("Sigmoid", {x})}); }

Value* scalar(GraphBuilder& b, const std::string& name, float v, Shape shape = {}) {
  Tensor t(DType::F32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.set(i, v);
  return b.constant(name, std::move(t));
}

// Stem, an inception block (1x1, 1x1-3x3, pool-1x1 branches), pools, classifier, softmax.
void googlenet_like(GraphBuilder& b) {
  Value* x = b.input("x", {1, 3, 32, 32});
  Value* s = maxpool(b, b.node("Relu", {conv(b, x, 16, 3, 2)}), 3, 2, 0, 1);
  Value* b1 = b.node("Relu", {conv(b, s, 8, 1)});
  Value* b2 = b.node("Relu", {conv(b, b.node("Relu", {conv(b, s, 8, 1)}), 16, 3)});
  Value* b3 = b.node("Relu", {conv(b, maxpool(b, s, 3, 1, 1, 1), 8, 1)});
  Value* cat = b.node("Concat", {b1, b2, b3}, {{"axis", attr_int(1)}});
  Value* p = b.node("GlobalAveragePool", {maxpool(b, cat, 3, 2, 0, 1)});
  Value* fc = b.node("Gemm", {b.node("Flatten", {p}), b.random_constant("fc", {10, 32}), b.random_constant("fcb", {10})},
                     {{"transB", attr_int(1)}});
  b.output(b.node("Softmax", {fc}, {{"axis", attr_int(1)}}));
}

// Stem with SiLU, a depthwise conv, a squeeze-and-excitation block, a projection, the head.
void efficientnet_like(GraphBuilder& b) {
  Value* x = b.input("x", {1, 3, 32, 32});
  Value* s = silu(b, conv(b, x, 16, 3, 2));
  Value* dw = silu(b, conv(b, s, 16, 3, 1, 16));
  Value* se = b.node("Sigmoid", {conv(b, silu(b, conv(b, b.node("GlobalAveragePool", {dw}), 4, 1)), 16, 1)});
  Value* pr = conv(b, b.node("Mul", {dw, se}), 16, 1);
  Value* head = silu(b, conv(b, b.node("Add", {pr, s}), 32, 1));
  b.output(b.node("Flatten", {b.node("GlobalAveragePool", {head})}));
}

// Every op whose C changed: max/min, clamps, the transcendental unary ops, reductions.
void changed_ops(GraphBuilder& b) {
  b.g->opset = 14;  // HardSwish
  Value* x = b.input("x", {1, 20, 9, 9});
  Value* y = b.input("y", {1, 20, 9, 9});
  b.output(b.node("Tanh", {x}));
  b.output(b.node("Erf", {x}));
  b.output(b.node("Exp", {x}));
  b.output(b.node("Log", {b.node("Add", {b.node("Abs", {x}), scalar(b, "eps", 0.25f, {1})})}));
  b.output(b.node("Elu", {x}, {{"alpha", attr_float(0.7f)}}));
  b.output(b.node("HardSigmoid", {x}, {{"alpha", attr_float(0.4f)}, {"beta", attr_float(0.6f)}}));
  b.output(b.node("HardSwish", {b.node("Mul", {x, scalar(b, "four", 4.0f, {1})})}));
  b.output(b.node("Clip", {x, scalar(b, "lo", -0.5f), scalar(b, "hi", 0.5f)}));
  b.output(b.node("Max", {x, y}));
  b.output(b.node("Min", {x, y}));
  b.output(maxpool(b, x, 3, 2, 1, 0));
  for (Value* v : b.node_n("MaxPool", {y}, 2, {{"kernel_shape", attr_ints({2, 2})}, {"strides", attr_ints({2, 2})}})) b.output(v);
  b.output(b.node("GlobalMaxPool", {x}));
  b.output(b.node("ReduceMax", {x}, {{"axes", attr_ints({2, 3})}, {"keepdims", attr_int(0)}}));
  b.output(b.node("ReduceMax", {x}, {{"axes", attr_ints({1})}}));
  b.output(b.node("Softmax", {x}, {{"axis", attr_int(1)}}));
  b.output(b.node("LogSoftmax", {x}, {{"axis", attr_int(3)}}));
  b.output(b.node("Softmax", {b.node("Flatten", {x})}, {{"axis", attr_int(1)}}));
  b.output(b.node("Sigmoid", {x}));
  b.output(silu(b, y));
}

void expect_no_libm_calls(void (*build)(GraphBuilder&), bool nchwc) {
  GraphBuilder b;
  build(b);
  auto in = random_inputs(*b.g);
  auto ref = reference_outputs(*b.g, in);
  PassOptions o = test_pass_options();
  o.nchwc = nchwc;
  run_pipeline(*b.g, o);
  for (const char* cc : {"gcc", "clang"}) {
    SCOPED_TRACE(std::string(cc) + (nchwc ? ", NCHWc" : ", plain NCHW"));
    CRunOptions r;
    r.cc = cc;
    r.cflags = "-O3 -march=native";
    r.forbid_calls = kForbidden;
    r.sanitize = false;  // the object code as users build it (and clang warns on simd loops ASan instruments)
    expect_close(ref, run_c(*b.g, in, r), 1e-4);
  }
}

TEST(NoLibmCalls, GooglenetShaped) {
  expect_no_libm_calls(googlenet_like, true);
  expect_no_libm_calls(googlenet_like, false);
}
TEST(NoLibmCalls, EfficientnetShaped) {
  expect_no_libm_calls(efficientnet_like, true);
  expect_no_libm_calls(efficientnet_like, false);
}
TEST(NoLibmCalls, ChangedOps) {
  expect_no_libm_calls(changed_ops, true);
  expect_no_libm_calls(changed_ops, false);
}

// nm sees a libm call where there is one (the check above can fail).
TEST(NoLibmCalls, TheCheckSeesACall) {
  namespace fs = std::filesystem;
  const fs::path dir = vmath_tmpdir();
  ASSERT_FALSE(dir.empty());
  const std::string d = dir.string() + "/";
  std::ofstream(d + "m.c") << "#include <math.h>\nfloat f(float a, float b);\nfloat f(float a, float b) { return fmaxf(a, expf(b)); }\n";
  ASSERT_EQ(std::system(("gcc -std=c11 -O3 -march=native -c " + d + "m.c -o " + d + "m.o").c_str()), 0);
  std::vector<std::string> u = undefined_symbols(d + "m.o");
  EXPECT_NE(std::find(u.begin(), u.end(), "fmaxf"), u.end());
  EXPECT_NE(std::find(u.begin(), u.end(), "expf"), u.end());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace onnxc::test
