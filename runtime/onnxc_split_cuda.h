/* onnxc_split_cuda.h — the CUDA device of the split-model executor (onnxc_split.h): the head and
 * the tail's GPU version of compile-model --split --device cuda run on one GPU through their
 * stream-level entry points (NAME_cuda_info.run_device, onnxc_types.h), and the cut stays on
 * the device unless a batch's tail goes to the CPU stage.
 *
 * Per slot (one batch in flight): a non-blocking stream, its own instances of head and tail, two
 * events, pinned host staging buffers (cudaHostAlloc) for max_batch requests' inputs, cut
 * tensors and outputs, and device buffers for the same. The models are compiled for a fixed
 * batch size, so a batch of b requests is b runs enqueued one after another on the slot's stream.
 *   run_head   copies the requests' inputs into the pinned staging buffer, one cudaMemcpyAsync
 *              to the device, the head's b runs (or, with ONNXC_SPLIT_CUDA_GRAPHS, the replay of
 *              the CUDA graph captured from those runs the first time a batch of b ran on the
 *              slot: the buffers of a slot never move, so the graph stays valid), then waits on
 *              the stream. The cut stays in the slot's device buffers.
 *   run_tail   the tail's b runs on the device cut, one copy of the outputs to the pinned
 *              buffer, wait, then into the requests' output buffers.
 *   fetch_cut  one copy of the cut to the pinned buffer, wait, then into the executor's buffers.
 *   *exec_us is the time between two events recorded on the slot's stream around the work
 *   (cudaEventElapsedTime), without the wait behind other slots' work.
 * Every CUDA or model failure returns an onnxc_status (ONNXC_ERR_NOMEM, ONNXC_ERR_DEVICE, or the
 * model's code) with the call and CUDA's message in the device's detail; nothing prints or exits.
 * The device uses the creating thread's current CUDA device; the slots' threads must use the
 * same one (the executor's threads start on device 0: create on device 0, or call cudaSetDevice
 * in every thread).
 *
 * On a GPU machine (see also bench/README.md):
 *   compile-model model.onnx -o out --name m --split auto --device cuda --emit so
 *   loadgen --device cuda --head out/libm_head.so --tail out/libm_tail.so \
 *           --tail-device out/libm_tail_gpu.so --policy gpu-only|cpu-tail|eft
 * Build: compile onnxc_split_cuda.c with -I/usr/local/cuda/include and link -lcudart (it has no
 * kernels; nvcc or any C compiler). It also compiles as C++ (the CPU emulation of the tests).
 */
#ifndef ONNXC_SPLIT_CUDA_H
#define ONNXC_SPLIT_CUDA_H

#include "onnxc_split.h"

#ifdef __cplusplus
extern "C" {
#endif

/* flags */
#define ONNXC_SPLIT_CUDA_GRAPHS 1 /* capture the head's launches per (slot, batch size), replay */

/* head and tail: CUDA models' NAME_cuda_info (the tail is the GPU version, NAME_tail_gpu);
 * head's outputs must be tail's inputs. Weights paths may be NULL for the models' default
 * files (relative to the working directory). num_slots 1..ONNXC_SPLIT_MAX_SLOTS, max_batch
 * 1..ONNXC_SPLIT_MAX_BATCH (the executor's). */
int onnxc_split_cuda_device_create(const onnxc_cuda_info* head, const char* head_weights, const onnxc_cuda_info* tail,
                                   const char* tail_weights, int num_slots, int max_batch, int flags,
                                   onnxc_split_device* device);
/* The calling thread's last failure of create or destroy ("" if none); the device's detail()
 * gives the slots' failures to the executor. */
const char* onnxc_split_cuda_last_error(void);
/* Waits for the slots' streams, frees everything; device->ctx becomes NULL. */
int onnxc_split_cuda_device_destroy(onnxc_split_device* device);

#ifdef __cplusplus
}
#endif

#endif /* ONNXC_SPLIT_CUDA_H */
