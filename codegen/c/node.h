// codegen/c/node.h — one node's C function body as the C backend's kernels write it, with what
// the module writer reads besides its text: the parallel constructs as data (codegen/c/nest.h)
// and whether the kernel keeps its own fork/join inside the run's one parallel region.
#pragma once
#include <string>

#include "codegen/backend.h"
#include "codegen/c/nest.h"
#include "codegen/target.h"
#include "ir/graph.h"

namespace onnxc {

struct CNodeCode {
  KernelBody body;
  std::string kernel;       // "Conv nchw16c regular + epilogue", for comments and the profile
  std::string own_region;  // CEmit::own_region: why the kernel keeps its own fork/join ("" when it does not)
  std::string plan;        // CEmit::plan: the kernel's plan in one line ("" for a kernel without one)
};

// The function body computing n (a plain node or a fused group) for target t, through the
// kernel table (codegen/c/kernels/kernels.h) and the fused loops (codegen/c/fused.h).
CNodeCode emit_c_node(const Node& n, const NodeParams& p, const Target& t);

}  // namespace onnxc
