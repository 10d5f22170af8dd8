// passes/batch_items.h — running the items of a batch side by side (compile-model
// --parallel batch), and a batch given at run time (--dynamic: the same check, then a batch of
// 1 to N items as runs of the batch-1 model).
//
// A model whose every graph input has a batch dimension N >= 2 first, and whose nodes each act
// on every batch item apart, can be compiled as the same model at batch 1 and run once per
// item, one thread per item: no synchronisation between the layers at all, where loop
// parallelism splits every layer across the threads (a barrier per layer, small late layers
// split thin). The generated run function loops over the items in one parallel loop, each
// thread with its own arena of the batch-1 model's intermediates (codegen/c/module.cc).
//
// Whether the items are apart is decided from two imports of the model, both after constant
// folding and simplification: as given (batch N) and with every input's first dimension set to
// 1. They must have the same nodes, op for op, and every value computed from the inputs must
// have one dimension N times the batch-1 value's and the others the same (a reduction, a Gather
// or a Pad over the items fails this). That dimension holds the items as one digit of its index,
// o * N * s + item * s + i: followed from the inputs (first, s 1) through each node, so that a
// Transpose may move the items and a Reshape merge them with other dimensions (PyTorch's
// attention: [seq, batch, d], then [seq, batch * heads, d]) as long as they stay one digit;
// elementwise operands must hold them at the same place. The ops whose shapes cannot show that
// they mix the items are checked by their attributes against that dimension (Softmax, Concat,
// Split, Slice, LayerNormalization, CumSum, Tile, Resize along it); convolutions and the like
// need the items in their batch (the first) dimension, Attention in its batch or as the outer
// digit of its heads; only ops known to act per item are accepted. The outputs must hold the
// items first, one block per item. Anything else is reported, naming the node.
#pragma once
#include <cstdint>
#include <string>

#include "ir/graph.h"

namespace onnxc {

// The batch size N of a model whose inputs all have the same first dimension N >= 2; 0 when
// not (no inputs, a scalar input, different or unit first dimensions).
int64_t batch_items_of(const Graph& g);

// The bytes of the constant operands (weights) of g's nodes that use each of their elements at
// most twice, i.e. a multiply-add or two (a matrix-vector product: a classifier at batch 1;
// a convolution uses each weight at every output position). Run once per item, each item reads
// these again; compile-model --parallel auto runs the items side by side only when they stay
// within kBatchItemsMaxOnceBytes (this machine's class of last-level cache, 32 MB).
double weight_bytes_used_once(const Graph& g);
constexpr double kBatchItemsMaxOnceBytes = 32e6;

// Empty when the items of gN (batch N, as imported) can run apart as g1 (the same model
// imported at batch 1), else why not: the node, its op and what mixes the items.
std::string batch_items_check(const Graph& gN, const Graph& g1, int64_t N);

}  // namespace onnxc
