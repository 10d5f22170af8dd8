// driver/verify.h — compile-model --verify: the reference evaluator (ir/eval.h) on the
// imported graph against the built binary, on one random input.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "driver/options.h"
#include "ir/graph.h"
#include "ir/tensor.h"

namespace onnxc::driver {

// --verify: random inputs and the reference evaluator's outputs on the imported graph.
// `args` are the built binary's --input and --output options; a split model runs the head
// with `args` and the cut tensors as outputs (`cut_args`), then the tail reading them.
struct VerifyData {
  std::vector<std::string> input_names, output_names;
  std::vector<Tensor> refs;
  std::string args, input_args, output_args;
  double ref_s = 0;
};

// Writes the random inputs into OUTDIR/verify and evaluates the reference outputs.
VerifyData verify_prepare(const Options& o, const Graph& g);

// Runs the compiled binaries (name, arguments) one after the other on the inputs of
// verify_prepare and compares the outputs.
int verify(const Options& o, const Graph& g, const VerifyData& d, const std::vector<std::pair<std::string, std::string>>& runs);

}  // namespace onnxc::driver
