// codegen/c/serve_module.h — writes NAME_serve.py, the Ray Serve application of a model that
// compile-model --emit ray builds (libNAME.so, NAME.py, NAME.weights): a deployment whose
// replicas each load the library once through the Python wrapper (one instance per replica),
// answer HTTP POST /NAME (an .npy body for a one-input model, an .npz of one array per input
// name otherwise; the first output as .npy, or every output as .npz with Accept:
// application/x-npz) and DeploymentHandle calls taking and returning numpy arrays.
//
// Conventions: requests are checked by the wrapper's own input checks before they join a batch
// (a bad request gets HTTP 400 with the wrapper's message and never fails another request);
// @serve.batch gathers requests, a --dynamic build runs them as one call per MAX_BATCH items, a
// build of one batch one by one; the native call runs in a thread (ctypes releases the GIL), so
// the replica's event loop keeps serving. A failure of the C library is HTTP 500 naming it.
// The file needs Ray Serve (ray[serve]) only where it runs; onnxc itself does not.
#pragma once
#include <string>

#include "codegen/c/module.h"
#include "ir/graph.h"

namespace onnxc {

// Writes opt.outdir/NAME_serve.py next to NAME.py (emit_python_module); returns the file name.
std::string emit_serve_module(const Graph& g, const CodegenOptions& opt);

}  // namespace onnxc
