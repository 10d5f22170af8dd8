// codegen/c_fused.cc — fused group loops (see c_fused.h).
#include "codegen/c_fused.h"

#include <algorithm>

#include "ir/op.h"
#include "ir/ops/elementwise.h"

namespace onnxc {

namespace {

// Arguments of node m's c_expr: "" for absent/static inputs, `running` for the group's
// running value, reads of the anchor's inputs (when `anchor`) or of extra inputs.
std::vector<std::string> expr_args(const CEmit& e, const Node& m, bool anchor, const Value* running, const std::string& running_name,
                                   const std::vector<std::string>& idx) {
  const Node& n = e.node;
  std::vector<std::string> args;
  for (size_t i = 0; i < m.inputs.size(); ++i) {
    const Value* v = m.inputs[i];
    if (!v || m.op->static_input(i)) { args.emplace_back(); continue; }
    if (!anchor && v == running) { args.push_back(running_name); continue; }
    if (anchor) { args.push_back(fmt::format("{}[{}]", e.in(i), idx.at(i))); continue; }
    auto it = std::find(n.extra_inputs.begin(), n.extra_inputs.end(), v);
    ONNXC_ASSERT(it != n.extra_inputs.end(), m.where() + ": input '" + v->name + "' is not an extra input of its group");
    size_t k = static_cast<size_t>(it - n.extra_inputs.begin());
    args.push_back(fmt::format("{}[{}]", e.extra(k), idx.at(n.inputs.size() + k)));
  }
  return args;
}

}  // namespace

bool group_is_one_loop(const Node& n) {
  if (n.outputs.size() != 1 || !n.out(0) || n.out(0)->dtype != DType::F32) return false;
  std::vector<std::string> dummy(n.inputs.size(), "a");
  return !n.op->c_expr(n, dummy).empty();
}

void emit_group_loop(CEmit& e) {
  const Node& n = e.node;
  bool one = group_is_one_loop(n);
  // Loop operands: the anchor's inputs (one loop only), then the extra inputs.
  std::vector<Shape> shapes;
  for (size_t i = 0; i < n.inputs.size(); ++i)
    shapes.push_back(one && n.in(i) && !n.op->static_input(i) ? e.in_view(i) : e.out_view(0));  // unused slots: any shape
  for (const Value* v : n.extra_inputs) shapes.push_back(e.view_of(v));
  emit_broadcast(e, e.out_view(0), shapes, [&](const std::vector<std::string>& idx, const std::string& o) {
    std::string s = "{ ";
    if (one) {
      std::string ex = n.op->c_expr(n, expr_args(e, n, true, nullptr, "", idx));
      s += fmt::format("float t0 = {};", ex);
    } else {
      s += fmt::format("float t0 = {}[{}];", e.out(0), o);
    }
    const Value* running = n.anchor_out;
    size_t k = 0;
    for (auto& step : n.epilogue) {
      std::string ex = step->op->c_expr(*step, expr_args(e, *step, false, running, "t" + std::to_string(k), idx));
      ONNXC_ASSERT(!ex.empty(), step->where() + ": fused step has no C expression");
      s += fmt::format(" const float t{} = {};", k + 1, ex);
      running = step->out(0);
      ++k;
    }
    return s + fmt::format(" {}[{}] = t{}; }}", e.out(0), o, k);
  });
}

}  // namespace onnxc
