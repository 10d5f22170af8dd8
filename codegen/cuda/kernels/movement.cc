// codegen/cuda/kernels/movement.cc — the data-movement ops in CUDA, one thread per output
// element, plain layout.
//  Flatten, Reshape, Squeeze, Unsqueeze  the data is unchanged: a copy (no aliasing yet).
//  Concat     the output as [outer, C, inner] (C the concatenated axis): element (o, a, r)
//             comes from the input whose slot of the axis holds a, at (o, a - its start, r).
//  Transpose  the output's coordinates read the input through permuted strides.
//  Pad        constant mode: output index o along each axis reads input o - pb (negative pads
//             crop) or gives the pad value; other modes are not supported by the CUDA backend.
#include "codegen/cuda/kernels/kernels.h"
#include "ir/ops/move_common.h"
#include "ir/ops/pad.h"

namespace onnxc {
namespace {

void emit_copy(CuEmit& e) {
  e.flat(numel(e.out_shape(0)));
  e("{}[i] = {}[i];", e.out(0), e.in(0));
}

void emit_concat(CuEmit& e) {
  const Node& n = e.node;
  const int64_t axis = concat_axis(n);
  const Shape& os = e.out_shape(0);
  int64_t inner = 1;
  for (size_t d = static_cast<size_t>(axis) + 1; d < os.size(); ++d) inner *= os[d];
  const int64_t C = os[static_cast<size_t>(axis)];
  e.flat(numel(os));
  e("const int64_t outer = i / {};", C * inner);
  e("const int64_t a = {};", cu_coord("i", inner, C));
  e("const int64_t r = i % {};", inner);
  int64_t start = 0;
  bool first = true;
  for (size_t k = 0; k < n.inputs.size(); ++k) {
    const int64_t ck = n.in(k)->shape[static_cast<size_t>(axis)];
    if (ck == 0) continue;
    e("{}if (a < {}) {}[i] = {}[(outer * {} + (a - {})) * {} + r];", first ? "" : "else ", start + ck, e.out(0), e.in(k), ck, start, inner);
    first = false;
    start += ck;
  }
}

void emit_transpose(CuEmit& e) {
  const std::vector<int64_t>& perm = transpose_perm(e.node);
  const Shape& is = e.in_shape(0);
  const Shape& os = e.out_shape(0);
  std::vector<int64_t> ist(is.size(), 1);
  for (size_t d = is.size(); d-- > 1;) ist[d - 1] = ist[d] * is[d];
  e.flat(numel(os));
  std::string off;
  int64_t stride = 1;
  for (size_t d = os.size(); d-- > 0;) {
    if (os[d] != 1)
      off += fmt::format("{}({}) * {}", off.empty() ? "" : " + ", cu_coord("i", stride, os[d]), ist[static_cast<size_t>(perm[d])]);
    stride *= os[d];
  }
  e("{}[i] = {}[{}];", e.out(0), e.in(0), off.empty() ? "0" : off);
}

bool pad_ok(const Node& n) { return pad_geom(n).mode == PadMode::Constant && !pad_geom(n).runtime_value; }

void emit_pad(CuEmit& e) {
  const PadGeom& g = pad_geom(e.node);
  const Shape& os = e.out_shape(0);
  e.flat(numel(os));
  std::string src, inside;
  int64_t stride = 1;
  std::vector<std::string> lines;
  for (size_t d = os.size(); d-- > 0;) {
    const PadAxis& a = g.axis[d];
    lines.insert(lines.begin(), fmt::format("const int64_t s{} = {} - {};", d, cu_coord("i", stride, a.out), a.pb));
    stride *= a.out;
  }
  for (auto& l : lines) e("{}", l);
  for (size_t d = 0; d < os.size(); ++d) {
    const std::string s = "s" + std::to_string(d);
    inside += fmt::format("{}{} >= 0 && {} < {}", inside.empty() ? "" : " && ", s, s, g.axis[d].in);
    src = d == 0 ? s : fmt::format("({}) * {} + {}", src, g.axis[d].in, s);
  }
  if (os.empty()) {
    e("{}[i] = {}[0];", e.out(0), e.in(0));
    return;
  }
  e("{}[i] = {} ? {}[{}] : {};", e.out(0), inside, e.in(0), src, c_float(g.value));
}

}  // namespace

void register_cuda_movement(CuKernelTable& t) {
  for (const char* k : {"Flatten", "Reshape", "Squeeze", "Unsqueeze"}) t[k] = {emit_copy, nullptr, nullptr, true};
  t["Concat"] = {emit_concat, nullptr, nullptr};
  t["Transpose"] = {emit_transpose, nullptr, nullptr};
  t["Pad"] = {emit_pad, pad_ok, nullptr, true};
}

}  // namespace onnxc
