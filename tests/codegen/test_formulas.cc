// tests/codegen/test_formulas.cc — the elementwise formulas every backend shares
// (codegen/formulas.h). The C dialect runs in every C test of the ops (node tests, fused
// loops); the CUDA dialect spells its math with CUDA's float functions (expf, tanhf, erff,
// logf), which C's libm has too: here each CUDA-dialect formula is compiled as C with gcc and
// evaluated on the CPU against the reference evaluator (ir/eval.h) over values from -4 to 4,
// zero and the ends of the ops' domains, so the formulas the CUDA kernels use are checked on
// a machine without a GPU. Both dialects spell the same ops, and neither calls the other's
// functions.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/formulas.h"
#include "tests/codegen/c_run.h"
#include "tests/passes/pass_test_util.h"

namespace onnxc::test {
namespace {

constexpr int kValues = 67;

// -4 .. 4 in 64 steps, then 0, a tiny value and -0.5.
Tensor sample(float shift) {
  Tensor t(DType::F32, {kValues});
  for (int i = 0; i < 64; ++i) t.set(i, -4.0 + 8.0 * i / 63.0 + shift);
  t.set(64, 0.0);
  t.set(65, 1e-30);
  t.set(66, -0.5);
  return t;
}

// One op of the table: its node in a graph (inputs x, y, z: three samples) and the C function
// computing its formula at index i of the arrays x, y, z.
struct Case {
  std::string name, body;
  std::unique_ptr<Graph> g;
  std::vector<Value*> ins;
};

Case make_case(const std::string& op, size_t arity, const std::function<std::string(const Node&)>& formula) {
  Case c;
  GraphBuilder b;
  std::vector<Value*> ins;
  for (size_t k = 0; k < arity; ++k) ins.push_back(b.input(std::string(1, "xyz"[k]), {kValues}));
  b.output(b.node(op, ins));
  c.name = op;
  c.body = formula(*b.g->nodes.back());
  c.ins = ins;
  c.g = std::move(b.g);
  return c;
}


TEST(Formulas, CudaDialectMatchesTheReferenceOnTheCpu) {
  std::vector<Case> cases;
  for (const char* op : unary_formula_ops())
    cases.push_back(make_case(op, 1, [](const Node& n) {
      return "const float x = x_[i]; return " + unary_formula(n, MathDialect::Cuda) + ";";
    }));
  for (const char* op : {"Add", "Sub", "Mul", "Div", "PRelu", "Pow"})
    cases.push_back(make_case(op, 2, [](const Node& n) { return "return " + binary_formula(n.op_type, "x_[i]", "y_[i]") + ";"; }));
  for (const char* op : {"Sum", "Mean"})
    cases.push_back(make_case(op, 3, [](const Node& n) { return "return " + sum_formula(n, {"x_[i]", "y_[i]", "z_[i]"}) + ";"; }));
  for (const char* op : {"Max", "Min"})
    cases.push_back(make_case(op, 3, [](const Node& n) { return max_min_statements(n, {"x_[i]", "y_[i]", "z_[i]"}, "m") + " return m;"; }));
  std::map<std::string, std::pair<std::string, std::string>> clips = {{"ClipBoth", {"-1.0f", "2.5f"}}, {"ClipLow", {"0.0f", ""}}};
  // C program: every case's function over the three samples, one line of outputs per case.
  std::string prog = "#include <math.h>\n#include <stdio.h>\n";
  for (const Case& c : cases)
    prog += "static float f_" + c.name + "(const float* x_, const float* y_, const float* z_, int i) {\n  (void)x_; (void)y_; (void)z_;\n  " +
            c.body + "\n}\n";
  for (auto& [name, b] : clips)
    prog += "static float f_" + name + "(const float* x_, const float* y_, const float* z_, int i) {\n  (void)y_; (void)z_;\n  return " +
            clip_formula("x_[i]", b.first, b.second) + ";\n}\n";
  const Tensor xs = sample(0.0f), ys = sample(0.37f), zs = sample(-1.1f);
  auto array = [](const char* name, const Tensor& t) {
    std::string s = std::string("static const float ") + name + "[] = {";
    for (int i = 0; i < kValues; ++i) s += (i ? ", " : "") + fmt::format("(float){:.9g}", t.get(i));
    return s + "};\n";
  };
  prog += array("X", xs) + array("Y", ys) + array("Z", zs) + "int main(void) {\n";
  auto print_case = [&](const std::string& name) {
    prog += "  for (int i = 0; i < " + std::to_string(kValues) + "; ++i) printf(\"%.9g \", (double)f_" + name + "(X, Y, Z, i));\n  printf(\"\\n\");\n";
  };
  for (const Case& c : cases) print_case(c.name);
  for (auto& [name, b] : clips) print_case(name);
  prog += "  return 0;\n}\n";

  std::string printed;
  ASSERT_EQ(build_and_run_c(prog, "-O1 -lm", &printed), "") << prog;
  std::istringstream out(printed);

  auto expect_row = [&](const std::string& name, const Tensor& ref) {
    std::string line;
    ASSERT_TRUE(std::getline(out, line)) << name;
    std::istringstream row(line);
    for (int i = 0; i < kValues; ++i) {
      std::string tok;
      ASSERT_TRUE(row >> tok) << name;
      const double got = std::strtod(tok.c_str(), nullptr), want = ref.get(i);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got)) << name << " at x = " << xs.get(i) << ": " << got;
      } else if (std::isinf(want)) {
        EXPECT_EQ(got, want) << name << " at x = " << xs.get(i);
      } else {
        EXPECT_NEAR(got, want, 2e-6 * std::max(1.0, std::fabs(want))) << name << " at x = " << xs.get(i) << ", y = " << ys.get(i);
      }
    }
  };
  const Tensor* samples[] = {&xs, &ys, &zs};
  for (const Case& c : cases) {
    std::map<const Value*, Tensor> in;
    for (size_t k = 0; k < c.ins.size(); ++k) in[c.ins[k]] = *samples[k];
    expect_row(c.name, reference_outputs(*c.g, in).at(0));
  }
  for (auto& [name, b] : clips) {
    GraphBuilder gb;
    Value* x = gb.input("x", {kValues});
    auto scalar = [](double v) {
      Tensor t(DType::F32, {});
      t.set(0, v);
      return t;
    };
    Value* lo = gb.constant("lo", scalar(b.first == "-1.0f" ? -1.0 : 0.0));
    Value* hi = b.second.empty() ? nullptr : gb.constant("hi", scalar(2.5));
    gb.output(gb.node("Clip", {x, lo, hi}));
    expect_row(name, reference_outputs(*gb.g, {{x, xs}}).at(0));
  }
}

// Each dialect calls its own math: the C one the inline helpers of codegen/c/vmath.h (no
// libm in the hot loops), the CUDA one CUDA's float functions.
TEST(Formulas, EachDialectCallsItsOwnMath) {
  for (const char* op : unary_formula_ops()) {
    GraphBuilder b;
    b.output(b.node(op, {b.input("x", {4})}));
    const Node& n = *b.g->nodes.back();
    const std::string c = unary_formula(n, MathDialect::C), cuda = unary_formula(n, MathDialect::Cuda);
    EXPECT_EQ(cuda.find("onnxc_"), std::string::npos) << op << ": " << cuda;
    for (const char* libm : {"expf(", "logf(", "tanhf(", "erff("}) {
      for (size_t p = c.find(libm); p != std::string::npos; p = c.find(libm, p + 1))
        EXPECT_TRUE(p >= 6 && c.compare(p - 6, 6, "onnxc_") == 0) << op << " calls libm's " << libm << " in the C dialect: " << c;
    }
    if (std::string(op) == "Sigmoid" || std::string(op) == "Tanh" || std::string(op) == "Exp") EXPECT_NE(c, cuda) << op;
  }
}

}  // namespace
}  // namespace onnxc::test
