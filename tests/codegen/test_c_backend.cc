// tests/codegen/test_c_backend.cc — the C backend's own pieces: exact C literals, the kernel
// table against the op table (every op the importer accepts has a C kernel unless it is
// always folded; every index-aligned op can be a step of a fused loop), the answers the
// passes get (NCHWc support, in-place reuse), and the target's parallel decision.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "codegen/c/emit.h"
#include "codegen/c/kernels/kernels.h"
#include "codegen/target.h"
#include "ir/op.h"
#include "tests/codegen/c_run.h"
#include "tests/passes/pass_test_util.h"

namespace onnxc::test {
namespace {

TEST(CLiteral, FloatsRoundTripExactly) {
  for (float v : {0.1f, 1.0f / 3.0f, 1e-38f, 3.4028235e38f, -2.5f, 1e-45f}) {
    std::string s = c_float(v);
    ASSERT_EQ(s.back() == ')' ? s[s.size() - 2] : s.back(), 'f') << s;
    std::string digits = s;
    for (char c : {'(', ')', 'f'}) digits.erase(std::remove(digits.begin(), digits.end(), c), digits.end());
    EXPECT_EQ(std::strtof(digits.c_str(), nullptr), v) << s;
  }
  EXPECT_EQ(c_float(INFINITY), "INFINITY");
  EXPECT_EQ(c_float(-INFINITY), "(-INFINITY)");
  EXPECT_EQ(c_float(NAN), "NAN");
  EXPECT_EQ(c_int(std::numeric_limits<int64_t>::min()), "(-9223372036854775807LL - 1)");
  EXPECT_EQ(c_int(5000000000LL), "5000000000LL");
  EXPECT_EQ(c_int(-3), "(-3)");
}

TEST(CKernels, EveryOpHasAKernel) {
  for (const std::string& t : supported_ops()) {
    if (t == "Constant" || t == "Shape" || t == "Size") continue;  // always folded into the weights
    const CKernel* k = find_c_kernel(t);
    ASSERT_NE(k, nullptr) << t;
    EXPECT_NE(k->emit, nullptr) << t;
  }
  EXPECT_NE(find_c_kernel("onnxc.layout_transform"), nullptr);
}

TEST(CKernels, EveryIndexAlignedOpHasAnElement) {
  int aligned = 0;
  for (const std::string& t : supported_ops()) {
    std::unique_ptr<Op> op = find_op(t)();
    if (!op->index_aligned()) continue;
    ++aligned;
    const CKernel* k = find_c_kernel(t);
    ASSERT_NE(k, nullptr) << t;
    EXPECT_TRUE(k->expr || k->stmts) << t << " is index-aligned but the C backend cannot fuse it";
  }
  EXPECT_GE(aligned, 20);  // unary, binary, variadic, Clip, Cast, Identity/Dropout
}

// A fused loop computing Max/Min/Pow/Clip with a runtime bound matches the reference.
TEST(CKernels, FusedStepsOfEveryShape) {
  GraphBuilder b;
  Value* x = b.input("x", {2, 3, 4, 5});
  Value* y = b.input("y", {2, 3, 4, 5});
  Value* lo = b.input("lo", {});
  Value* m = b.node("Max", {b.node("Relu", {x}), y, b.random_constant("c", {5})});
  Value* n = b.node("Min", {m, b.node("Abs", {y})});
  Value* p = b.node("Pow", {b.node("Abs", {n}), b.random_constant("e", {4, 1}, 0.5f, 2.0f)});
  Value* q = b.node("Clip", {p, lo, nullptr});
  b.output(q);
  auto in = random_inputs(*b.g);
  in[lo].set(0, 0.25);
  auto ref = reference_outputs(*b.g, in);
  PassOptions o = test_pass_options();
  o.nchwc = false;
  run_pipeline(*b.g, o);
  size_t groups = 0;
  for (auto& node : b.g->nodes) groups += !node->epilogue.empty();
  EXPECT_EQ(groups, 1u) << dump_ir(*b.g);
  expect_close(ref, run_c(*b.g, in), 1e-5);
}

// A conv whose fused tail reads scalar constants (hard-swish, then a learnable scale and
// offset, as in third-party models): the group loop is one merged loop that is both
// parallel and innermost, and must carry one combined pragma (the C compiler rejects
// `omp parallel for` followed by `omp simd` on the same loop).
TEST(CKernels, FusedTailWithScalarConstants) {
  for (bool blocked : {false, true}) {
    GraphBuilder b;
    Value* x = b.input("x", {1, 8, 64, 64});
    Value* c = b.node("Conv", {x, b.random_constant("w", {16, 8, 3, 3}), b.random_constant("bias", {16})},
                      {{"pads", attr_ints({1, 1, 1, 1})}});
    Value* h = b.node("HardSwish", {c});
    Value* m = b.node("Mul", {h, b.random_constant("scale", {1})});
    Value* y = b.node("Add", {m, b.random_constant("offset", {})});
    b.output(y);
    auto in = random_inputs(*b.g);
    auto ref = reference_outputs(*b.g, in);
    PassOptions o = test_pass_options();
    o.nchwc = blocked;
    run_pipeline(*b.g, o);
    size_t groups = 0;
    for (auto& node : b.g->nodes) groups += node->epilogue.size() == 3;
    EXPECT_EQ(groups, 1u) << dump_ir(*b.g);
    expect_close(ref, run_c(*b.g, in), 1e-4);
  }
}

TEST(CBackend, InPlaceOnlyForIndexAlignedNodesOfTheSameShape) {
  GraphBuilder b;
  Value* x = b.input("x", {1, 4, 8, 8});
  Value* r = b.node("Relu", {x});
  Value* s = b.node("Add", {r, b.input("bias", {1, 4, 1, 1})});
  Value* c = b.node("Concat", {s, s}, {{"axis", attr_int(1)}});
  b.output(c);
  const Backend& be = test_backend();
  EXPECT_TRUE(be.may_inplace(*r->producer, *r, *x));
  EXPECT_TRUE(be.may_inplace(*s->producer, *s, *r));
  EXPECT_FALSE(be.may_inplace(*s->producer, *s, *s->producer->in(1)));  // broadcast: read at another index
  EXPECT_FALSE(be.may_inplace(*c->producer, *c, *s));                    // not elementwise
}

TEST(Target, ParallelDecision) {
  Target t = parse_target("generic-vector:16");
  EXPECT_EQ(t.vector_floats(), 16);
  EXPECT_FALSE(t.parallel(static_cast<double>(t.parallel_min_work - 1)));
  EXPECT_TRUE(t.parallel(static_cast<double>(t.parallel_min_work)));
  t.threads = 1;
  EXPECT_FALSE(t.parallel(1e12));  // one thread: never
}

TEST(Target, NamedTargets) {
  EXPECT_EQ(parse_target("x86-64-avx512").vector_bits, 512);
  EXPECT_EQ(parse_target("x86-64-avx2").vector_bits, 256);
  EXPECT_EQ(parse_target("aarch64-sve:2048").vector_floats(), 64);
  EXPECT_EQ(parse_target("generic-vector:256").vector_floats(), 256);
  EXPECT_GE(host_target().threads, 1);
  for (const char* bad : {"avx9", "generic-vector:3", "generic-vector:", "aarch64-sve:100", "generic-vector:99999999"})
    EXPECT_THROW(parse_target(bad), CompileError) << bad;
}

}  // namespace
}  // namespace onnxc::test
