/* api_bad.c — bad input to a model's C API (the conv node-test model, with its weight W baked
 * into conv.weights): every case must return its status with a detail saying what is wrong, and
 * nothing may crash (tests/api/run_api_tests.py also runs it under ASan+UBSan).
 *
 * Usage: api_bad DIR — DIR/conv/ holds the model; DIR holds conv.in0.bin (input x) and the bad
 * weights files the runner prepares: other_model.weights (another model's), other_build.weights
 * (same model and size, other weights values), version2.weights (format version 2),
 * truncated.weights (the last byte missing), header_only.weights (first 40 bytes).
 */
#include <pthread.h>

#include "api_check.h"
#include "conv.h"

#ifndef _OPENMP
#error "build with OpenMP, as the models are"
#endif

static char g_path[4096];
static const char* in_dir(const char* dir, const char* file) {
  snprintf(g_path, sizeof g_path, "%s/%s", dir, file);
  return g_path;
}

static size_t g_other_thread_detail = 99;
static void* other_thread_error(void* arg) {
  (void)arg;
  g_other_thread_detail = strlen(conv_last_error()); /* this thread's detail: nothing failed here */
  return NULL;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  const char* dir = argv[1];
  static int dummy;
  conv_ctx* ctx = (conv_ctx*)&dummy; /* a failed create must set it to NULL */
  onnxc_options options = {0};

  /* create: arguments and weights files */
  CHECK_RC(conv, conv_create(NULL, NULL, &ctx), ONNXC_ERR_ARG, "conv_create", "path is NULL");
  EXPECT_TRUE(ctx == NULL);
  CHECK_RC(conv, conv_create(in_dir(dir, "conv/conv.weights"), NULL, NULL), ONNXC_ERR_ARG, "conv_create: ctx is NULL");
  options.num_threads = -2;
  CHECK_RC(conv, conv_create(in_dir(dir, "conv/conv.weights"), &options, &ctx), ONNXC_ERR_ARG, "num_threads is -2");
  options.num_threads = 0;
  CHECK_RC(conv, conv_create(in_dir(dir, "missing.weights"), NULL, &ctx), ONNXC_ERR_IO, "conv_create", "missing.weights");
  CHECK_RC(conv, conv_create(in_dir(dir, "other_model.weights"), NULL, &ctx), ONNXC_ERR_SIZE, "other_model.weights",
           "weights of another model?");
  CHECK_RC(conv, conv_create(in_dir(dir, "other_build.weights"), NULL, &ctx), ONNXC_ERR_CHECKSUM, "other_build.weights",
           "checksum");
  CHECK_RC(conv, conv_create(in_dir(dir, "version2.weights"), NULL, &ctx), ONNXC_ERR_VERSION, "version2.weights",
           "format version 2");
  CHECK_RC(conv, conv_create(in_dir(dir, "truncated.weights"), NULL, &ctx), ONNXC_ERR_SIZE, "truncated.weights");
  CHECK_RC(conv, conv_create(in_dir(dir, "header_only.weights"), NULL, &ctx), ONNXC_ERR_FORMAT, "header_only.weights",
           "shorter than its 64-byte header");
  CHECK_RC(conv, conv_create(dir, NULL, &ctx), ONNXC_ERR_IO, "not a regular file");
  EXPECT_TRUE(ctx == NULL);
  CHECK_RC(conv, conv_create_from_memory(NULL, 100, NULL, &ctx), ONNXC_ERR_ARG, "conv_create_from_memory", "blob is NULL");
  static const unsigned char junk[100] = {1, 2, 3};
  CHECK_RC(conv, conv_create_from_memory(junk, sizeof junk, NULL, &ctx), ONNXC_ERR_FORMAT, "bad magic");
  CHECK_RC(conv, conv_create_sharing(NULL, NULL, &ctx), ONNXC_ERR_ARG, "conv_create_sharing: other is NULL");
  EXPECT_TRUE(ctx == NULL);

  /* a good instance, and its output as the comparison for the runs below */
  float* x = read_raw(dir, "conv.in0.bin", sizeof(float) * conv_INPUT0_SIZE);
  float y[conv_OUTPUT0_SIZE], y2[conv_OUTPUT0_SIZE];
  CHECK_RC(conv, conv_create(in_dir(dir, "conv/conv.weights"), NULL, &ctx), ONNXC_OK, "");
  CHECK_RC(conv, conv_run(ctx, x, y), ONNXC_OK, "");

  /* run: NULL context and buffers */
  CHECK_RC(conv, conv_run(NULL, x, y2), ONNXC_ERR_ARG, "conv_run: ctx is NULL");
  CHECK_RC(conv, conv_run(ctx, NULL, y2), ONNXC_ERR_ARG, "conv_run: input 0 'x' (float32[1,1,7,5]): the buffer is NULL");
  CHECK_RC(conv, conv_run(ctx, x, NULL), ONNXC_ERR_ARG, "conv_run: output 0 'y' (float32[1,1,4,3]): the buffer is NULL");

  /* run_v: NULL arrays, NULL buffers, wrong sizes */
  const void* ins[1] = {x};
  void* outs[1] = {y2};
  size_t in_bytes[1] = {sizeof(float) * conv_INPUT0_SIZE}, out_bytes[1] = {sizeof y2};
  CHECK_RC(conv, conv_run_v(NULL, ins, in_bytes, outs, out_bytes), ONNXC_ERR_ARG, "conv_run_v: ctx is NULL");
  CHECK_RC(conv, conv_run_v(ctx, NULL, in_bytes, outs, out_bytes), ONNXC_ERR_ARG, "conv_run_v: inputs or input_bytes is NULL");
  CHECK_RC(conv, conv_run_v(ctx, ins, NULL, outs, out_bytes), ONNXC_ERR_ARG, "conv_run_v: inputs or input_bytes is NULL");
  CHECK_RC(conv, conv_run_v(ctx, ins, in_bytes, NULL, out_bytes), ONNXC_ERR_ARG, "conv_run_v: outputs or output_bytes is NULL");
  CHECK_RC(conv, conv_run_v(ctx, ins, in_bytes, outs, NULL), ONNXC_ERR_ARG, "conv_run_v: outputs or output_bytes is NULL");
  const void* null_in[1] = {NULL};
  CHECK_RC(conv, conv_run_v(ctx, null_in, in_bytes, outs, out_bytes), ONNXC_ERR_ARG, "conv_run_v: input 0 'x'",
           "the buffer is NULL");
  size_t short_in[1] = {in_bytes[0] - 4}, long_out[1] = {out_bytes[0] + 1};
  CHECK_RC(conv, conv_run_v(ctx, ins, short_in, outs, out_bytes), ONNXC_ERR_SIZE,
           "conv_run_v: input 0 'x' (float32[1,1,7,5]): 136 bytes given, 140 expected");
  CHECK_RC(conv, conv_run_v(ctx, ins, in_bytes, outs, long_out), ONNXC_ERR_SIZE,
           "conv_run_v: output 0 'y' (float32[1,1,4,3]): 49 bytes given, 48 expected");
  /* after all that, the instance still runs, with the same result */
  memset(y2, 0, sizeof y2);
  CHECK_RC(conv, conv_run_v(ctx, ins, in_bytes, outs, out_bytes), ONNXC_OK, "");
  EXPECT_TRUE(memcmp(y, y2, sizeof y) == 0);

  /* shared weights outlive the instance they came from */
  conv_ctx* shared = NULL;
  CHECK_RC(conv, conv_create_sharing(ctx, NULL, NULL), ONNXC_ERR_ARG, "conv_create_sharing: ctx is NULL");
  CHECK_RC(conv, conv_create_sharing(ctx, NULL, &shared), ONNXC_OK, "");
  CHECK_RC(conv, conv_destroy(&ctx), ONNXC_OK, "");
  memset(y2, 0, sizeof y2);
  CHECK_RC(conv, conv_run(shared, x, y2), ONNXC_OK, "");
  EXPECT_TRUE(memcmp(y, y2, sizeof y) == 0);

  /* destroy twice, run after destroy, NULL handles */
  EXPECT_TRUE(ctx == NULL);
  CHECK_RC(conv, conv_destroy(&ctx), ONNXC_ERR_ARG, "conv_destroy: *ctx is NULL", "already destroyed");
  CHECK_RC(conv, conv_run(ctx, x, y2), ONNXC_ERR_ARG, "conv_run: ctx is NULL");
  CHECK_RC(conv, conv_run_v(ctx, ins, in_bytes, outs, out_bytes), ONNXC_ERR_ARG, "conv_run_v: ctx is NULL");
  conv_ctx* none = (conv_ctx*)&dummy;
  CHECK_RC(conv, conv_create_sharing(ctx, NULL, &none), ONNXC_ERR_ARG, "other is NULL");
  EXPECT_TRUE(none == NULL);
  CHECK_RC(conv, conv_destroy(NULL), ONNXC_ERR_ARG, "conv_destroy: ctx is NULL");
  CHECK_RC(conv, conv_destroy(&shared), ONNXC_OK, ""); /* the last instance: frees the weights */
  EXPECT_TRUE(shared == NULL);

  /* the error detail is per thread: a new thread sees none */
  pthread_t t;
  EXPECT_TRUE(pthread_create(&t, NULL, other_thread_error, NULL) == 0 && pthread_join(t, NULL) == 0);
  EXPECT_TRUE(g_other_thread_detail == 0);
  EXPECT_TRUE(conv_last_error()[0] != '\0');

  /* status strings */
  EXPECT_TRUE(strcmp(conv_status_string(ONNXC_OK), "ok") == 0);
  EXPECT_TRUE(strcmp(conv_status_string(ONNXC_ERR_SIZE), "size mismatch") == 0);
  EXPECT_TRUE(strcmp(conv_status_string(12345), "unknown error") == 0);
  for (int code = ONNXC_OK; code <= ONNXC_ERR_SHAPE; ++code) EXPECT_TRUE(strlen(conv_status_string(code)) > 0);

  free(x);
  return finish("api_bad");
}
