// passes/dynamic_dims.h — where a run-time dimension other than the batch goes through a model
// (compile-model --dynamic seq=MAX on a transformer's token axis), and whether the model can be
// computed for every size n from 1 to MAX by the code compiled for MAX.
//
// The symbol is followed through the graph by importing the model at several sizes (MAX and
// two below; each constant-folded and simplified, attention recognised), not by a symbolic
// interpreter of its own: the importer's shape inference and constant folding already evaluate
// every op, PyTorch's Shape -> Gather -> Concat -> Reshape chains included. The imports must
// have the same nodes, op for op; every dimension of every value is then either the same in
// all of them or a*n + b with integers a != 0 and b, checked at every size (a product of two
// sizes, a T*T, is refused).
//
// The code compiled for MAX computes a run of n in place, in the tensors of MAX ("padded"
// layout): along each dimension a*n + b a value's first a*n + b entries are the run's, the rest
// are not looked at. That is exact when every node computes each entry it keeps from entries its
// inputs keep; checked node by node here:
//  - per-position ops (elementwise with broadcasting, matrix products' rows and columns,
//    LayerNormalization, Softmax and reductions along other axes, Transpose, Split and Concat
//    along other axes, Expand): always; their operands must agree on the run-time dimensions;
//  - Reshape, Flatten, Squeeze, Unsqueeze: when the elements before the run-time dimension form
//    the same blocks and its entries stay a prefix of each block (merging it with the
//    dimensions after it is fine; merging it with a batch of 2 or more is not);
//  - Concat along it: only its last operand may vary; Slice along it: from a fixed start >= 0
//    in steps of 1; Gather along it: constant indices that exist at n = 1; CumSum along it
//    forwards; a Gather whose indices vary must take them from a graph input (the padded
//    positions of inputs are zeros) or a constant;
//  - Attention whose keys vary: exact only when the kernel stops at the run's keys, so it is
//    listed in DynamicDimsPlan::bounded (the code must pass n to it);
//  - everything else along it — a reduction, softmax or normalisation over it, a product that
//    contracts it, Pad or Split along it, a number computed from n (a constant whose values,
//    not only its shape, depend on n) — is refused, naming the node.
// Constants whose shape depends on n (a causal mask, position indices) must be "padded" too:
// the one at size n equals the first entries of the one at MAX.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace onnxc {

// A dimension's size at run-time size n: a*n + b (a == 0: the constant b).
struct Extent {
  int64_t a = 0, b = 0;
  int64_t at(int64_t n) const { return a * n + b; }
  bool varies() const { return a != 0; }
  bool operator==(const Extent& o) const { return a == o.a && b == o.b; }
};

// A node that takes n at run time and the count its kernel stops at (Node::run_a/run_b).
struct RunStop {
  const Node* node = nullptr;
  Extent extent;         // attention: its keys; a product or LayerNorm: its kernel's rows
  bool queries = false;  // attention: its queries are the run's as its keys are
};

struct DynamicDimsPlan {
  std::string symbol;  // as the user named it, for messages
  int64_t max = 0;
  // The values of the graph at MAX with a dimension that depends on n: one Extent per dimension.
  std::map<const Value*, std::vector<Extent>> varying;
  // Nodes that must be given n at run time (attention over keys that vary), in graph order.
  std::vector<RunStop> bounded;
  // Nodes that may stop at the run's rows for speed, not for the result: MatMuls whose rows are
  // the tokens (A [1, .., 1, rows, K]), LayerNorms over rows of tokens ([1, .., 1, rows, ..,
  // cols], without Mean/InvStdDev outputs) and Splits of rows of tokens (Q, K and V from one
  // product); the extent counts the kernel's rows.
  std::vector<RunStop> rows;
};

// gs[0] is the model at MAX = ns[0], gs[k] the same model at ns[k] (at least three distinct
// sizes, all >= 1). "" and *plan filled when a build for MAX computes every n in 1..MAX as
// described above; else why not, naming the node (or value) and what it does.
std::string dynamic_dims_check(const std::vector<const Graph*>& gs, const std::vector<int64_t>& ns, const std::string& symbol,
                               DynamicDimsPlan* plan);

// "seq", "2*seq+1", "seq-1", "64*seq".
std::string extent_text(const Extent& e, const std::string& symbol);

}  // namespace onnxc
