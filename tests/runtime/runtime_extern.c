/* runtime_extern.c — the runtime as the unit tests call it: one copy with external linkage
 * (ONNXC_RT_FN defined empty, see tests/runtime/CMakeLists.txt), where generated models and the
 * driver each include it with static functions. */
#include "onnxc_runtime.c"
