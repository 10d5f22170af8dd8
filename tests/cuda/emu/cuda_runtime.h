/* tests/cuda/emu/cuda_runtime.h — a CPU stand-in for the few CUDA runtime calls and device
 * built-ins that onnxc's generated NAME.cu uses, so the generated CUDA can be checked for
 * numbers on a machine without a GPU (tests/cuda/run_emulated.sh): the .cu is compiled as
 * plain C++ with this folder first on the include path, after its kernel launches
 * `fn<<<grid, block, 0, stream>>>(args)` are rewritten to `ONNXC_EMU_LAUNCH(fn, grid, block,
 * 0, stream)(args)`.
 *
 * Emulation: device memory is host memory, copies are memcpy, streams do nothing. A launch
 * runs the grid's blocks one after another; a block of one row of threads runs its threads one
 * after another (the generated one-thread-per-element kernels never synchronise); a 2-D or 3-D
 * block (the tiled products and convolutions, which use __shared__ memory and __syncthreads)
 * runs its threads as cooperative fibers on the launching thread (one 64 KiB stack per thread
 * of the block, allocated once and reused; the context switch is below): a fiber runs until its next
 * __syncthreads, which switches to the next unfinished fiber of the block, so the block
 * resumes round-robin once all have arrived (one switch per thread and barrier). __shared__
 * arrays are statics shared by the block (blocks run one at a time). Only for what the
 * generator emits.
 *
 * For the split runtime's CUDA device (runtime/onnxc_split_cuda.c), equally simple: launches run
 * one at a time process-wide (one mutex: the slots' threads share the static __shared__ arrays,
 * as a GPU's one engine would run them in turn), pinned memory is malloc, an event records the
 * host clock when recorded (everything before it on the stream has run), and stream capture
 * records the launches and asynchronous copies of the capturing thread (their arguments by
 * value) into a graph that cudaGraphLaunch replays in order.
 */
#ifndef ONNXC_CUDA_EMU_H
#define ONNXC_CUDA_EMU_H
/* C headers and few C++ ones (no <mutex>, <chrono>, <memory>): g++ spends most of a small
 * model's emulated build parsing headers, and cuda_emulate_ops builds ~36 of them. */
#include <pthread.h>
#include <time.h>
#include <ucontext.h>

#include <cstdint>
#include <cstdio>
#include <cmath>
#include <functional>
#include <tuple>
#include <cstdlib>
#include <cstring>
#include <vector>

#define __global__
#define __restrict__ __restrict
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))

struct __attribute__((aligned(16))) float4 {
  float x, y, z, w;
};

struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};
inline thread_local dim3 threadIdx, blockIdx, blockDim, gridDim;

/* A fiber's saved context, made once per fiber and block (onnxc_emu_make) and switched with
 * onnxc_emu_swap. On x86-64 and AArch64 it is the fiber's stack pointer: onnxc_emu_switch
 * pushes the callee-saved registers (x86-64: rbx, rbp, r12-r15; AArch64: x19-x30, d8-d15) on
 * the current stack, stores its pointer, loads the other's and pops them: a function call, so
 * the compiler has already saved everything else. It leaves the signal mask and the FP
 * control registers alone (the kernels change neither): swapcontext's rt_sigprocmask system
 * call on every switch was ~70% of an emulated resnet50. Elsewhere, under AddressSanitizer
 * (it intercepts swapcontext and learns of the new stack there, with a one-line warning that
 * its support is partial; the hand-written switch would need its fiber annotations), or with
 * -DONNXC_EMU_UCONTEXT: POSIX ucontext. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ONNXC_EMU_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define ONNXC_EMU_ASAN 1
#endif
#if (defined(__x86_64__) || defined(__aarch64__)) && !defined(ONNXC_EMU_ASAN) && !defined(ONNXC_EMU_UCONTEXT)
#define ONNXC_EMU_ASM_SWITCH 1
struct OnnxcEmuContext { void* sp = nullptr; };
/* Saves the callee-saved registers on this stack, *save_sp = sp, sp = to_sp, restores the
 * registers saved there and returns into that fiber. Weak: every translation unit that includes
 * this header defines it (a split model links several). */
extern "C" void onnxc_emu_switch(void** save_sp, void* to_sp);
#if defined(__x86_64__)
asm(R"(
  .pushsection .text
  .p2align 4
  .weak onnxc_emu_switch
  .type onnxc_emu_switch, @function
onnxc_emu_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size onnxc_emu_switch, .-onnxc_emu_switch
  .popsection
)");
constexpr size_t kOnnxcEmuFrame = 8 * 8; /* 6 registers, the return address, a null one past it */
constexpr size_t kOnnxcEmuEntry = 6;     /* slot of the return address */
#else
asm(R"(
  .pushsection .text
  .p2align 4
  .weak onnxc_emu_switch
  .type onnxc_emu_switch, %function
onnxc_emu_switch:
  sub sp, sp, #160
  stp x19, x20, [sp, #0]
  stp x21, x22, [sp, #16]
  stp x23, x24, [sp, #32]
  stp x25, x26, [sp, #48]
  stp x27, x28, [sp, #64]
  stp x29, x30, [sp, #80]
  stp d8, d9, [sp, #96]
  stp d10, d11, [sp, #112]
  stp d12, d13, [sp, #128]
  stp d14, d15, [sp, #144]
  mov x2, sp
  str x2, [x0]
  mov sp, x1
  ldp x19, x20, [sp, #0]
  ldp x21, x22, [sp, #16]
  ldp x23, x24, [sp, #32]
  ldp x25, x26, [sp, #48]
  ldp x27, x28, [sp, #64]
  ldp x29, x30, [sp, #80]
  ldp d8, d9, [sp, #96]
  ldp d10, d11, [sp, #112]
  ldp d12, d13, [sp, #128]
  ldp d14, d15, [sp, #144]
  add sp, sp, #160
  ret
  .size onnxc_emu_switch, .-onnxc_emu_switch
  .popsection
)");
constexpr size_t kOnnxcEmuFrame = 160; /* x19-x30 and d8-d15 */
constexpr size_t kOnnxcEmuEntry = 11;  /* slot of x30, where `ret` goes */
#endif
inline void onnxc_emu_swap(OnnxcEmuContext& from, const OnnxcEmuContext& to) { onnxc_emu_switch(&from.sp, to.sp); }
/* A context that starts entry() (which must never return) on the stack [stack, stack + size):
 * a frame as onnxc_emu_switch leaves it, registers zero, returning into entry with the stack
 * aligned as at a call. */
inline void onnxc_emu_make(OnnxcEmuContext& c, char* stack, size_t size, void (*entry)()) {
  const uintptr_t top = (reinterpret_cast<uintptr_t>(stack) + size) & ~uintptr_t{15};
  void** frame = reinterpret_cast<void**>(top - kOnnxcEmuFrame);
  std::memset(frame, 0, kOnnxcEmuFrame);
  frame[kOnnxcEmuEntry] = reinterpret_cast<void*>(entry);
  c.sp = frame;
}
#else
struct OnnxcEmuContext { ucontext_t uc; };
inline void onnxc_emu_swap(OnnxcEmuContext& from, const OnnxcEmuContext& to) { swapcontext(&from.uc, &to.uc); }
inline void onnxc_emu_make(OnnxcEmuContext& c, char* stack, size_t size, void (*entry)()) {
  getcontext(&c.uc);
  c.uc.uc_stack.ss_sp = stack;
  c.uc.uc_stack.ss_size = size;
  c.uc.uc_link = nullptr;
  makecontext(&c.uc, entry, 0);
}
#endif

/* The fibers of the block being run (one block at a time process-wide: the engine mutex). */
struct OnnxcEmuFibers {
  static constexpr size_t kStack = 64 * 1024;
  OnnxcEmuContext home;                   /* the launching thread */
  std::vector<OnnxcEmuContext> ctx;       /* one per thread of the block */
  std::vector<std::vector<char>> stacks;
  std::vector<dim3> tid;
  std::vector<char> done;
  unsigned n = 0, current = 0, left = 0;
  void (*body)(const void*) = nullptr;    /* runs the kernel for threadIdx */
  const void* arg = nullptr;
  bool active = false;
  /* The next unfinished fiber after `current`, cyclically (current itself if it is the last). */
  unsigned next() const {
    for (unsigned k = 1; k <= n; ++k)
      if (!done[(current + k) % n]) return (current + k) % n;
    return current;
  }
  void enter(unsigned f) { current = f, threadIdx = tid[f]; }
};
inline OnnxcEmuFibers onnxc_emu_fibers;
inline void onnxc_emu_fiber_main() {
  OnnxcEmuFibers& b = onnxc_emu_fibers;
  b.body(b.arg);
  b.done[b.current] = 1, --b.left;
  onnxc_emu_swap(b.ctx[b.current], b.home); /* `home` resumes the others; never comes back */
  std::abort();
}
/* A warp's lanes run one after another between __syncthreads (the tensor-core kernels' per-warp
 * staging, tests/cuda/emu/mma.h): nothing to wait for. */
inline void __syncwarp(unsigned = 0xffffffffu) {}
inline void __syncthreads() {
  OnnxcEmuFibers& b = onnxc_emu_fibers;
  if (!b.active) {
    std::fprintf(stderr, "cuda emulation: __syncthreads in a one-row block (run without fibers)\n");
    std::abort();
  }
  const unsigned me = b.current, to = b.next();
  if (to == me) return;
  b.enter(to);
  onnxc_emu_swap(b.ctx[me], b.ctx[to]);
}

typedef enum {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorStreamCaptureUnsupported = 900
} cudaError_t;
typedef enum { cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2, cudaMemcpyDeviceToDevice = 3 } cudaMemcpyKind;
typedef int* cudaStream_t;
#define cudaStreamNonBlocking 1u
#define cudaHostAllocDefault 0u
inline const char* cudaGetErrorName(cudaError_t e) {
  return e == cudaSuccess ? "cudaSuccess" : e == cudaErrorMemoryAllocation ? "cudaErrorMemoryAllocation"
         : e == cudaErrorInvalidValue ? "cudaErrorInvalidValue" : "cudaErrorStreamCaptureUnsupported";
}
inline const char* cudaGetErrorString(cudaError_t e) {
  return e == cudaSuccess ? "no error" : e == cudaErrorMemoryAllocation ? "out of memory"
         : e == cudaErrorInvalidValue ? "invalid argument" : "operation not permitted when stream is capturing";
}

inline pthread_mutex_t onnxc_emu_engine = PTHREAD_MUTEX_INITIALIZER; /* one launch at a time */
struct OnnxcEmuEngineLock {
  OnnxcEmuEngineLock() { pthread_mutex_lock(&onnxc_emu_engine); }
  ~OnnxcEmuEngineLock() { pthread_mutex_unlock(&onnxc_emu_engine); }
  OnnxcEmuEngineLock(const OnnxcEmuEngineLock&) = delete;
  OnnxcEmuEngineLock& operator=(const OnnxcEmuEngineLock&) = delete;
};
inline thread_local std::vector<std::function<void()>>* onnxc_emu_capture = nullptr; /* capturing */

inline cudaError_t cudaMalloc(void** p, size_t n) {
  *p = std::calloc(1, n);
  return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
inline cudaError_t cudaFree(void* p) { std::free(p); return cudaSuccess; }
inline cudaError_t cudaHostAlloc(void** p, size_t n, unsigned) { return cudaMalloc(p, n); }
inline cudaError_t cudaFreeHost(void* p) { return cudaFree(p); }
inline cudaError_t cudaMemcpy(void* d, const void* s, size_t n, cudaMemcpyKind) {
  if (onnxc_emu_capture) return cudaErrorStreamCaptureUnsupported;
  std::memcpy(d, s, n);
  return cudaSuccess;
}
inline cudaError_t cudaMemcpyAsync(void* d, const void* s, size_t n, cudaMemcpyKind, cudaStream_t) {
  if (onnxc_emu_capture) onnxc_emu_capture->push_back([=] { std::memcpy(d, s, n); });
  else std::memcpy(d, s, n);
  return cudaSuccess;
}
inline cudaError_t cudaMemset(void* d, int v, size_t n) { std::memset(d, v, n); return cudaSuccess; }
inline cudaError_t cudaMemsetAsync(void* d, int v, size_t n, cudaStream_t) {
  if (onnxc_emu_capture) onnxc_emu_capture->push_back([=] { std::memset(d, v, n); });
  else std::memset(d, v, n);
  return cudaSuccess;
}
/* Blocks run one at a time and their threads as fibers on one host thread: a plain update. */
inline unsigned atomicOr(unsigned* p, unsigned v) { const unsigned old = *p; *p |= v; return old; }

struct OnnxcEmuEvent { double ms = 0; }; /* CLOCK_MONOTONIC when recorded */
typedef OnnxcEmuEvent* cudaEvent_t;
inline cudaError_t cudaEventCreate(cudaEvent_t* e) { *e = new OnnxcEmuEvent(); return cudaSuccess; }
inline cudaError_t cudaEventDestroy(cudaEvent_t e) { delete e; return cudaSuccess; }
inline cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t) {
  if (onnxc_emu_capture) return cudaErrorStreamCaptureUnsupported;
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  e->ms = t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
  return cudaSuccess;
}
inline cudaError_t cudaEventSynchronize(cudaEvent_t) { return cudaSuccess; }
inline cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t a, cudaEvent_t b) {
  *ms = static_cast<float>(b->ms - a->ms);
  return cudaSuccess;
}

struct OnnxcEmuGraph { std::vector<std::function<void()>> ops; };
typedef OnnxcEmuGraph* cudaGraph_t;
typedef OnnxcEmuGraph* cudaGraphExec_t;
enum cudaStreamCaptureMode { cudaStreamCaptureModeGlobal = 0, cudaStreamCaptureModeThreadLocal = 1, cudaStreamCaptureModeRelaxed = 2 };
inline cudaError_t cudaStreamBeginCapture(cudaStream_t, cudaStreamCaptureMode) {
  if (onnxc_emu_capture) return cudaErrorStreamCaptureUnsupported;
  onnxc_emu_capture = new std::vector<std::function<void()>>();
  return cudaSuccess;
}
inline cudaError_t cudaStreamEndCapture(cudaStream_t, cudaGraph_t* g) {
  if (!onnxc_emu_capture) return cudaErrorInvalidValue;
  *g = new OnnxcEmuGraph{std::move(*onnxc_emu_capture)};
  delete onnxc_emu_capture;
  onnxc_emu_capture = nullptr;
  return cudaSuccess;
}
inline cudaError_t cudaGraphInstantiate(cudaGraphExec_t* e, cudaGraph_t g, unsigned long long) {
  *e = new OnnxcEmuGraph(*g);
  return cudaSuccess;
}
inline cudaError_t cudaGraphLaunch(cudaGraphExec_t e, cudaStream_t) {
  if (onnxc_emu_capture) return cudaErrorStreamCaptureUnsupported;
  for (auto& op : e->ops) op();
  return cudaSuccess;
}
inline cudaError_t cudaGraphDestroy(cudaGraph_t g) { delete g; return cudaSuccess; }
inline cudaError_t cudaGraphExecDestroy(cudaGraphExec_t e) { delete e; return cudaSuccess; }
inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned) { static int dummy; *s = &dummy; return cudaSuccess; }
inline cudaError_t cudaStreamDestroy(cudaStream_t) { return cudaSuccess; }
inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
inline cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }
inline cudaError_t cudaGetLastError(void) { return cudaSuccess; }

template <class... P>
struct OnnxcEmuLaunch {
  void (*f)(P...);
  dim3 grid, block;
  template <class... A>
  void operator()(A... a) const {
    if (onnxc_emu_capture) {
      const OnnxcEmuLaunch self = *this;
      onnxc_emu_capture->push_back([=] { self.run(a...); });
      return;
    }
    run(a...);
  }
  template <class... A>
  void run_fibers(A... a) const;
  template <class... A>
  void run(A... a) const {
    const OnnxcEmuEngineLock lock;
    for (unsigned bz = 0; bz < grid.z; ++bz)
      for (unsigned by = 0; by < grid.y; ++by)
        for (unsigned bx = 0; bx < grid.x; ++bx) {
          const dim3 b(bx, by, bz);
          auto set = [&](unsigned tx, unsigned ty, unsigned tz) {
            blockIdx = b, threadIdx = dim3(tx, ty, tz), blockDim = block, gridDim = grid;
          };
          if (block.y == 1 && block.z == 1) {
            for (unsigned tx = 0; tx < block.x; ++tx) set(tx, 0, 0), f(a...);
            continue;
          }
          set(0, 0, 0);
          run_fibers(a...);
        }
  }
};
template <class... P>
template <class... A>
void OnnxcEmuLaunch<P...>::run_fibers(A... a) const {
  OnnxcEmuFibers& b = onnxc_emu_fibers;
  const unsigned n = block.x * block.y * block.z;
  if (b.ctx.size() < n) { /* stacks and contexts for the largest block so far, kept */
    b.ctx.resize(n);
    while (b.stacks.size() < n) b.stacks.emplace_back(OnnxcEmuFibers::kStack);
  }
  b.n = b.left = n, b.current = n - 1, b.active = true;
  b.tid.resize(n), b.done.assign(n, 0);
  struct Call { const OnnxcEmuLaunch* self; void (*f)(P...); std::tuple<A...> args; } call{this, f, std::tuple<A...>(a...)};
  b.arg = &call;
  b.body = [](const void* p) { const Call& c = *static_cast<const Call*>(p); std::apply(c.f, c.args); };
  unsigned k = 0;
  for (unsigned tz = 0; tz < block.z; ++tz)
    for (unsigned ty = 0; ty < block.y; ++ty)
      for (unsigned tx = 0; tx < block.x; ++tx, ++k) {
        b.tid[k] = dim3(tx, ty, tz);
        onnxc_emu_make(b.ctx[k], b.stacks[k].data(), OnnxcEmuFibers::kStack, onnxc_emu_fiber_main);
      }
  while (b.left > 0) {
    b.enter(b.next());
    onnxc_emu_swap(b.home, b.ctx[b.current]);
  }
  b.active = false;
}
template <class... P>
OnnxcEmuLaunch<P...> onnxc_emu_launch(void (*f)(P...), dim3 grid, dim3 block) {
  return {f, grid, block};
}
#define ONNXC_EMU_LAUNCH(f, grid, block, shmem, stream) onnxc_emu_launch(f, grid, block)
#endif
