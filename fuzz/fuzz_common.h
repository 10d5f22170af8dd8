// fuzz/fuzz_common.h — what both fuzz targets share: the outcome rules.
//
// A model the compiler rejects with a CompileError (invalid, unsupported, over a limit)
// is a correct outcome. Anything else is a finding and aborts, so libFuzzer records the
// input: an internal compiler error (ONNXC_ASSERT), std::bad_alloc or any other
// exception, and, through the sanitizers, every crash, leak, out-of-bounds access and
// undefined behaviour.
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>

#include "ir/error.h"

namespace onnxc::fuzz {

// --max-memory for fuzzed models: 256 MiB of weights, constants and arena, well under
// libFuzzer's 1 GiB allocation limit (tools/fuzz.sh), so any allocation past it is a
// size that escaped the checks.
constexpr uint64_t kMaxMemory = uint64_t{256} << 20;

template <class F>
void run_guarded(const char* target, F&& body) {
  try {
    body();
  } catch (const CompileError&) {
    // the expected way to refuse a model
  } catch (const InternalError& e) {
    std::fprintf(stderr, "%s: internal compiler error: %s\n", target, e.what());
    std::abort();
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "%s: std::bad_alloc (an allocation was not bounded before it was made)\n", target);
    std::abort();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: uncaught exception: %s\n", target, e.what());
    std::abort();
  }
}

}  // namespace onnxc::fuzz
