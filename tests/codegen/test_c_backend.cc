// tests/codegen/test_c_backend.cc — the C backend's own pieces: exact C literals, the kernel
// table against the op table (every op the importer accepts has a C kernel unless it is
// always folded; every index-aligned op can be a step of a fused loop), the answers the
// passes get (NCHWc support, in-place reuse), and the target's parallel decision.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "codegen/c/emit.h"
#include "codegen/c/kernels/kernels.h"
#include "codegen/c/module.h"
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

// Nodes whose functions would be identical but for the name (same kernel, shapes and
// parameters: the repeated blocks of a ResNet) share one function, whose comment names each
// of them; a node that differs in anything (here a bias, a shape) keeps its own. The module
// still computes what the reference computes.
TEST(CBackend, IdenticalNodeFunctionsAreShared) {
  namespace fs = std::filesystem;
  GraphBuilder b;
  Value* x = b.input("x", {1, 16, 10, 10});
  Value* y = x;
  for (int k = 0; k < 3; ++k)
    y = b.node("Relu", {b.node("Conv", {y, b.random_constant("w" + std::to_string(k), {16, 16, 3, 3})}, {{"pads", attr_ints({1, 1, 1, 1})}},
                               "same_" + std::to_string(k))});
  y = b.node("Conv", {y, b.random_constant("w3", {16, 16, 3, 3}), b.random_constant("b3", {16})}, {{"pads", attr_ints({1, 1, 1, 1})}},
             "with_bias");
  y = b.node("Conv", {y, b.random_constant("w4", {16, 16, 3, 3})}, {{"strides", attr_ints({2, 2})}}, "strided");
  b.output(y);
  auto in = random_inputs(*b.g);
  auto ref = reference_outputs(*b.g, in);
  run_pipeline(*b.g, test_pass_options());
  std::string tmpl = (fs::temp_directory_path() / "onnxc_shared_XXXXXX").string();
  ASSERT_TRUE(mkdtemp(tmpl.data()));
  CodegenResult r = test_backend().write_module(*b.g, {"m", tmpl, "m.onnx"});
  const std::string text = c_run_read_file(tmpl + "/m.c");
  fs::remove_all(tmpl);
  size_t fns = 0;
  for (size_t p = text.find("\nstatic void n"); p != std::string::npos; p = text.find("\nstatic void n", p + 1)) ++fns;
  // The five convs and the two layout transforms (in, out) of the NCHWc graph.
  EXPECT_EQ(r.functions, 7u);
  EXPECT_EQ(r.distinct_functions, 5u);
  EXPECT_EQ(fns, 5u) << text;
  EXPECT_NE(text.find("One function for the 3 nodes below"), std::string::npos);
  for (const char* n : {"same_0", "same_1", "same_2", "with_bias", "strided"}) EXPECT_NE(text.find(std::string("/* ") + n), std::string::npos) << n;
  expect_close(ref, run_c(*b.g, in), 1e-4);
}

// Transposes whose innermost output dim reads with a stride while an outer dim reads
// contiguously go in tiles of one cache line per side (codegen/c/loops.cc tiled_dim), with
// partial tiles at the edges; short dims keep the plain nest. Expected values come from the
// permutation itself, element by element.
TEST(CKernels, TransposeInCacheLineTiles) {
  struct Case {
    Shape shape;
    std::vector<int64_t> perm;
    DType t;
    bool tiled;
  };
  const std::vector<Case> cases = {
      {{197, 12, 64}, {1, 2, 0}, DType::F32, true},  // attention's K^T: 768 x 197, 197 = 12 * 16 + 5
      {{37, 45}, {1, 0}, DType::F32, true},          // partial tiles on both sides
      {{40, 3, 70}, {2, 1, 0}, DType::U8, true},     // 64 x 64 byte tiles, partial
      {{9, 10, 11}, {2, 0, 1}, DType::F64, true},    // 8 x 8 double tiles
      {{5, 6, 7}, {0, 2, 1}, DType::F32, false},     // dims under 8: plain loops
  };
  GraphBuilder b;
  std::vector<Value*> xs;
  for (size_t k = 0; k < cases.size(); ++k) {
    xs.push_back(b.input("x" + std::to_string(k), cases[k].shape, cases[k].t));
    b.output(b.node("Transpose", {xs.back()}, {{"perm", attr_ints(cases[k].perm)}}, "t" + std::to_string(k)));
  }
  std::map<const Value*, Tensor> in;
  for (size_t k = 0; k < cases.size(); ++k) {
    Tensor t(cases[k].t, cases[k].shape);
    for (int64_t i = 0; i < t.numel(); ++i) t.set(i, static_cast<double>((i * 7 + 3) % 251));
    in[xs[k]] = std::move(t);
  }
  run_pipeline(*b.g, test_pass_options());
  std::vector<Tensor> out = run_c(*b.g, in);
  ASSERT_EQ(out.size(), cases.size());
  for (size_t k = 0; k < cases.size(); ++k) {
    const Case& c = cases[k];
    const Node* n = b.g->outputs[k]->producer;
    ASSERT_TRUE(n && n->name == "t" + std::to_string(k));
    const std::string body = test_backend().emit_node(*n, NodeParams{{"x0"}, {"y0"}, {}}).body;
    EXPECT_EQ(body.find("i0b += ") != std::string::npos, c.tiled) << body;
    const Shape is = strides_of(c.shape);
    Shape os(c.perm.size());
    for (size_t d = 0; d < os.size(); ++d) os[d] = c.shape[static_cast<size_t>(c.perm[d])];
    const Shape ost = strides_of(os);
    ASSERT_EQ(out[k].shape, os);
    int64_t bad = 0;
    for (int64_t o = 0; o < numel(os); ++o) {
      int64_t src = 0;
      for (size_t d = 0; d < os.size(); ++d) src += (o / ost[d] % os[d]) * is[static_cast<size_t>(c.perm[d])];
      bad += out[k].get(o) != in[xs[k]].get(src);
    }
    EXPECT_EQ(bad, 0) << "case " << k;
  }
}

// Max reductions over rows long enough for the lane maxima (codegen/c/loops.cc
// emit_max_reduce): the row's maximum at every position in turn, in the lane loop and in the
// tail, which goes into the first lanes before the lanes fold in halves. Checked against the
// reference evaluator, and each row against its own known maximum.
TEST(CKernels, MaxReduceOverLanesAndTail) {
  GraphBuilder b;
  std::vector<Value*> xs;
  const std::vector<int64_t> lengths = {32, 45, 63};
  for (int64_t L : lengths) {
    xs.push_back(b.input("x" + std::to_string(L), {L, L}));
    b.output(b.node("ReduceMax", {xs.back()}, {{"axes", attr_ints({1})}, {"keepdims", attr_int(0)}}));
    b.output(b.node("Softmax", {xs.back()}, {{"axis", attr_int(1)}}));
  }
  std::map<const Value*, Tensor> in;
  for (size_t k = 0; k < xs.size(); ++k) {
    const int64_t L = lengths[k];
    Tensor t(DType::F32, {L, L});
    for (int64_t r = 0; r < L; ++r)
      for (int64_t c = 0; c < L; ++c) t.set(r * L + c, c == r ? 3.0 + 0.01 * static_cast<double>(r) : -2.0 + 0.001 * static_cast<double>((r * 31 + c * 17) % 997));
    in[xs[k]] = std::move(t);
  }
  auto ref = reference_outputs(*b.g, in);
  run_pipeline(*b.g, test_pass_options());
  std::vector<Tensor> out = run_c(*b.g, in);
  expect_close(ref, out, 1e-6);
  ASSERT_EQ(out.size(), 2 * lengths.size());
  for (size_t k = 0; k < lengths.size(); ++k)
    for (int64_t r = 0; r < lengths[k]; ++r) EXPECT_EQ(out[2 * k].get(r), static_cast<float>(3.0 + 0.01 * static_cast<double>(r))) << lengths[k] << " row " << r;
}

// compile-model names the node when the emitted C does not compile (an internal error):
// break one node function of a real module and let the C compiler say where.
TEST(CBackend, LocatesACompileErrorInANodeFunction) {
  namespace fs = std::filesystem;
  GraphBuilder b;
  Value* x = b.input("x", {1, 4, 8, 8});
  Value* r = b.node("Relu", {x});
  Value* c = b.node("Conv", {r, b.random_constant("w", {8, 4, 3, 3})}, {{"pads", attr_ints({1, 1, 1, 1})}});
  b.output(b.node("Sigmoid", {c}));
  PassOptions po = test_pass_options();
  po.disabled.insert("fuse");
  run_pipeline(*b.g, po);
  std::string tmpl = (fs::temp_directory_path() / "onnxc_locate_XXXXXX").string();
  ASSERT_TRUE(mkdtemp(tmpl.data()));
  const std::string d = tmpl + "/";
  test_backend().write_module(*b.g, {"m", tmpl, "m.onnx"});
  std::string text = c_run_read_file(d + "m.c");
  const Node* conv = nullptr;
  for (auto& n : b.g->nodes)
    if (n->op_type == "Conv") conv = n.get();
  ASSERT_NE(conv, nullptr);
  // The Conv function: its comment names the node; break the first statement of its body.
  const size_t head = text.find("/* " + conv->name + ": Conv(");
  ASSERT_NE(head, std::string::npos) << text;
  const size_t body = text.find("{\n", head) + 2;
  text.insert(body, "  int broken = ;\n");
  std::ofstream(d + "m.c") << text;
  const std::string cmd = "cc -std=c11 -fopenmp -fsyntax-only -I" + d + " " + d + "m.c > " + d + "cc.log 2>&1";
  ASSERT_NE(std::system(cmd.c_str()), 0) << "the broken module compiled";
  const std::string where = locate_c_error(d + "m.c", c_run_read_file(d + "cc.log"));
  EXPECT_EQ(where.rfind("node '" + conv->name + "' (Conv) at " + d + "m.c:", 0), 0u) << where;
  EXPECT_NE(where.find("expected expression"), std::string::npos) << where;
  // An error outside any node function (here, in the entry points) names no node.
  text.erase(body, 17);
  std::ofstream(d + "m.c") << text << "\nint trailing = ;\n";
  ASSERT_NE(std::system(cmd.c_str()), 0);
  EXPECT_EQ(locate_c_error(d + "m.c", c_run_read_file(d + "cc.log")), "");
  fs::remove_all(tmpl);
}

// The C float16 conversions generated code uses (onnxc_types.h) agree with the compiler's
// (ir/tensor.cc, checked exhaustively against binary16's definition in tests/unit): every half
// widened, and every half, midpoint and midpoint +-1 float ulp narrowed.
TEST(CRuntime, Float16ConversionsMatchTheCompilers) {
  namespace fs = std::filesystem;
  std::string tmpl = (fs::temp_directory_path() / "onnxc_f16_XXXXXX").string();
  ASSERT_TRUE(mkdtemp(tmpl.data()));
  const std::string d = tmpl + "/";
  std::ofstream(d + "onnxc_types.h") << kRuntimeTypes;
  std::ofstream(d + "f16.c") << R"(#include <stdio.h>
#include <stdlib.h>
#include "onnxc_types.h"
int main(int argc, char** argv) {
  FILE* in = fopen(argv[1], "rb");
  FILE* out = fopen(argv[2], "wb");
  if (!in || !out || argc != 3) return 2;
  for (unsigned h = 0; h < 65536; ++h) {
    float f = onnxc_f16_to_f32((uint16_t)h);
    fwrite(&f, sizeof f, 1, out);
  }
  float f;
  while (fread(&f, sizeof f, 1, in) == 1) {
    uint16_t h = onnxc_f32_to_f16(f);
    fwrite(&h, sizeof h, 1, out);
  }
  return fclose(out) != 0;
}
)";
  std::vector<float> probe;
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = half_to_float(static_cast<uint16_t>(h));
    probe.push_back(f);
    if ((h & 0x7fff) < 0x7c00) {
      const float up = half_to_float(static_cast<uint16_t>(h + 1 < 65536 ? h + 1 : h));
      const float mid = static_cast<float>((static_cast<double>(f) + up) / 2);
      for (float v : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY), std::nextafter(mid, -INFINITY)}) probe.push_back(v);
    }
  }
  for (float v : {65519.0f, 65520.0f, 1e30f, -1e30f, std::numeric_limits<float>::denorm_min(), 1e-8f, 0.1f}) probe.push_back(v);
  std::ofstream(d + "in.bin", std::ios::binary).write(reinterpret_cast<const char*>(probe.data()),
                                                       static_cast<std::streamsize>(probe.size() * sizeof(float)));
  for (const char* cc : {"gcc", "clang"}) {
    const std::string build = std::string(cc) + " -std=c11 -O2 -Wall -Wextra -Werror -I" + d + " " + d + "f16.c -o " + d + "f16 2>&1";
    ASSERT_EQ(std::system(build.c_str()), 0) << build;
    ASSERT_EQ(std::system((d + "f16 " + d + "in.bin " + d + "out.bin").c_str()), 0);
    const std::string out = c_run_read_file(d + "out.bin");
    ASSERT_EQ(out.size(), 65536 * sizeof(float) + probe.size() * sizeof(uint16_t)) << cc;
    for (uint32_t h = 0; h < 65536; ++h) {
      float f;
      std::memcpy(&f, out.data() + h * sizeof f, sizeof f);
      const float want = half_to_float(static_cast<uint16_t>(h));
      ASSERT_TRUE(std::memcmp(&f, &want, sizeof f) == 0 || (std::isnan(f) && std::isnan(want))) << cc << " widening " << h;
    }
    for (size_t i = 0; i < probe.size(); ++i) {
      uint16_t h;
      std::memcpy(&h, out.data() + 65536 * sizeof(float) + i * sizeof h, sizeof h);
      ASSERT_EQ(h, float_to_half(probe[i])) << cc << " narrowing " << probe[i];
    }
  }
  fs::remove_all(tmpl);
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
