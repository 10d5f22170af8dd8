// codegen/c/py_module.h — writes NAME.py, a Python wrapper of the shared library libNAME.so that
// compile-model --emit python builds: ctypes for the C API of NAME.h (instances created,
// shared, run and destroyed) and numpy arrays for the tensors. No build step and no
// dependency beyond numpy: `import NAME; y = NAME.Model().run(x)` next to libNAME.so and
// NAME.weights.
//
// Conventions: the wrapper checks every input's dtype and shape exactly (no implicit casts or
// broadcasting) and raises TypeError/ValueError naming the input, the expected and the given
// type; C failures become NAME.Error carrying the status and the model's last_error() detail.
// Known gaps: no zero-copy outputs (each run returns fresh arrays); weights only from a file.
#pragma once
#include <map>
#include <string>

#include "codegen/c/module.h"
#include "ir/graph.h"

namespace onnxc {

// Writes opt.outdir/NAME.py for the module emit_c_module wrote; returns the file name.
std::string emit_python_module(const Graph& g, const CodegenOptions& opt);

// A Python string literal of s ("..." with quotes, backslashes and control bytes escaped).
std::string py_literal(const std::string& s);
// tmpl with each @KEY@ of values replaced, in one pass (replaced text is not scanned again).
std::string fill_template(const std::string& tmpl, const std::map<std::string, std::string>& values);

}  // namespace onnxc
