// codegen/c/region.h — node functions inside the inference's one OpenMP parallel region.
//
// With compile-model --omp-region inference (the default), NAME_run opens one parallel region
// for all its node calls instead of a fork/join per parallel loop nest: the threads start
// once per inference, and between layers they meet at the barrier that ends each node. A
// kernel's body (codegen/c/kernels/, written for a fork/join of its own) becomes one of:
//
//   Shared  every statement at the top of the body (or in bare blocks `{ ... }` there, the
//           scopes of a kernel's constants) is a declaration, a parallel loop nest (`omp
//           parallel for`, or an `omp parallel` block of `omp for nowait` copies) or a serial
//           statement that changes no local of the function (zeroing the padding lanes after
//           a conv, an activation loop after a Gemm). The loops become orphaned worksharing
//           loops (`omp for`: same static split, an implied barrier at the end), the block a
//           plain block ending in `omp barrier`, each serial statement an `omp single`; every
//           thread of the region calls the function, each with its own copies of the locals,
//           which the declarations compute the same on every thread.
//           A body with no code at all (a Concat written in place by its inputs) is Shared too.
//   Serial  no parallel construct: one thread calls it (`omp single`, whose end is a barrier).
//   Alone   anything else (a serial statement that changes a local, a parallel loop inside
//           serial code, a declaration that calls a function): the body stays as written and the call runs between two regions,
//           with its own fork/join as before.
//
// The classification reads the lines the C emitter wrote (codegen/c/emit.h: one statement or
// brace per line) and says Alone whenever a line is not one of the shapes above, so a body
// it does not understand keeps its own regions.
#pragma once
#include <string>

namespace onnxc {

enum class RegionRole { Shared, Serial, Alone };

struct RegionBody {
  RegionRole role = RegionRole::Alone;
  std::string body;  // Shared: the worksharing form; otherwise the body unchanged
};

RegionBody region_body(const std::string& body);

}  // namespace onnxc
