/* api_link.c — six different models linked statically into one program (tests/api/run_api_tests.py
 * builds it with conv.c, gemm.c, split.c, gather.c, land.c (bool in and out) and equal.c (int32
 * in, bool out), each compiled on its own, and compares
 * the outputs it writes with ONNX's reference outputs).
 *
 * Usage: api_link DIR — reads DIR/NAME.in<k>.bin, creates each model from DIR/NAME/NAME.weights,
 * runs it through its typed NAME_run, writes DIR/NAME.out<k>.bin. Also checks that each model
 * keeps its own error detail (its runtime is private), and that onnxc_options.num_threads is
 * set for a run and the caller's OpenMP setting restored after, by wrapping
 * omp_set_num_threads (-Wl,--wrap=omp_set_num_threads): a run with num_threads 3 calls it with 3
 * then with the caller's value, a run with num_threads 0 does not call it. A call made from
 * inside a run (the wrapper) on the same instance gets ONNXC_ERR_STATE.
 */
#include "api_check.h"
#include "conv.h"
#include "equal.h"
#include "gather.h"
#include "gemm.h"
#include "land.h"
#include "split.h"

#ifndef _OPENMP
#error "build with OpenMP: the num_threads checks need it"
#endif
#include <omp.h>

void __real_omp_set_num_threads(int n);
void __wrap_omp_set_num_threads(int n);

static int g_calls[8], g_ncalls;
static conv_ctx* g_reenter;    /* when set, the wrapper runs this instance once more */
static int g_reenter_rc = -1;
static char g_reenter_detail[1024];

void __wrap_omp_set_num_threads(int n) {
  if (g_ncalls < 8) g_calls[g_ncalls] = n;
  ++g_ncalls;
  if (g_reenter) {
    conv_ctx* c = g_reenter;
    g_reenter = NULL;
    static float x[conv_INPUT0_SIZE], y[conv_OUTPUT0_SIZE];
    g_reenter_rc = conv_run(c, x, y);
    snprintf(g_reenter_detail, sizeof g_reenter_detail, "%s", conv_last_error());
  }
  __real_omp_set_num_threads(n);
}

static char g_path[4096];
static const char* weights(const char* dir, const char* name) {
  snprintf(g_path, sizeof g_path, "%s/%s/%s.weights", dir, name, name);
  return g_path;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  const char* dir = argv[1];

  conv_ctx* conv = NULL;
  CHECK_RC(conv, conv_create(weights(dir, "conv"), NULL, &conv), ONNXC_OK, "");
  float* x = read_raw(dir, "conv.in0.bin", sizeof(float) * conv_INPUT0_SIZE);
  float y[conv_OUTPUT0_SIZE];
  CHECK_RC(conv, conv_run(conv, x, y), ONNXC_OK, "");
  write_raw(dir, "conv.out0.bin", y, sizeof y);

  gemm_ctx* gemm = NULL;
  CHECK_RC(gemm, gemm_create(weights(dir, "gemm"), NULL, &gemm), ONNXC_OK, "");
  float* a = read_raw(dir, "gemm.in0.bin", sizeof(float) * gemm_INPUT0_SIZE);
  float gy[gemm_OUTPUT0_SIZE];
  CHECK_RC(gemm, gemm_run(gemm, a, gy), ONNXC_OK, "");
  write_raw(dir, "gemm.out0.bin", gy, sizeof gy);

  split_ctx* split = NULL;
  CHECK_RC(split, split_create(weights(dir, "split"), NULL, &split), ONNXC_OK, "");
  float* s = read_raw(dir, "split.in0.bin", sizeof(float) * split_INPUT0_SIZE);
  float s0[split_OUTPUT0_SIZE], s1[split_OUTPUT1_SIZE], s2[split_OUTPUT2_SIZE];
  CHECK_RC(split, split_run(split, s, s0, s1, s2), ONNXC_OK, "");
  write_raw(dir, "split.out0.bin", s0, sizeof s0);
  write_raw(dir, "split.out1.bin", s1, sizeof s1);
  write_raw(dir, "split.out2.bin", s2, sizeof s2);

  gather_ctx* gather = NULL;
  CHECK_RC(gather, gather_create(weights(dir, "gather"), NULL, &gather), ONNXC_OK, "");
  float* data = read_raw(dir, "gather.in0.bin", sizeof(float) * gather_INPUT0_SIZE);
  int64_t* idx = read_raw(dir, "gather.in1.bin", sizeof(int64_t) * gather_INPUT1_SIZE);
  float* g = malloc(sizeof(float) * gather_OUTPUT0_SIZE);
  CHECK_RC(gather, gather_run(gather, data, idx, g), ONNXC_OK, "");
  write_raw(dir, "gather.out0.bin", g, sizeof(float) * gather_OUTPUT0_SIZE);

  /* bool tensors are uint8_t arrays of 0 and 1 (onnxc_types.h); int32 ones int32_t. */
  land_ctx* land = NULL;
  CHECK_RC(land, land_create(weights(dir, "land"), NULL, &land), ONNXC_OK, "");
  uint8_t* la = read_raw(dir, "land.in0.bin", land_INPUT0_SIZE);
  uint8_t* lb = read_raw(dir, "land.in1.bin", land_INPUT1_SIZE);
  uint8_t lz[land_OUTPUT0_SIZE];
  CHECK_RC(land, land_run(land, la, lb, lz), ONNXC_OK, "");
  write_raw(dir, "land.out0.bin", lz, sizeof lz);

  equal_ctx* equal = NULL;
  CHECK_RC(equal, equal_create(weights(dir, "equal"), NULL, &equal), ONNXC_OK, "");
  int32_t* ea = read_raw(dir, "equal.in0.bin", sizeof(int32_t) * equal_INPUT0_SIZE);
  int32_t* eb = read_raw(dir, "equal.in1.bin", sizeof(int32_t) * equal_INPUT1_SIZE);
  uint8_t ez[equal_OUTPUT0_SIZE];
  CHECK_RC(equal, equal_run(equal, ea, eb, ez), ONNXC_OK, "");
  write_raw(dir, "equal.out0.bin", ez, sizeof ez);

  /* Each model has its own error detail: a failure of conv's does not show in gemm's. */
  CHECK_RC(conv, conv_run(NULL, x, y), ONNXC_ERR_ARG, "conv_run: ctx is NULL");
  CHECK_RC(gemm, gemm_run(gemm, NULL, gy), ONNXC_ERR_ARG, "gemm_run: input 0 'a'");
  EXPECT_TRUE(strstr(conv_last_error(), "conv_run: ctx is NULL") != NULL);
  EXPECT_TRUE(strcmp(split_last_error(), "") == 0);
  EXPECT_TRUE(strcmp(gather_last_error(), "") == 0);

  /* num_threads: set for the run, the caller's setting restored after. */
  omp_set_num_threads(5);
  conv_ctx* three = NULL;
  onnxc_options options = {.num_threads = 3};
  CHECK_RC(conv, conv_create(weights(dir, "conv"), &options, &three), ONNXC_OK, "");
  float y3[conv_OUTPUT0_SIZE];
  g_ncalls = 0;
  CHECK_RC(conv, conv_run(three, x, y3), ONNXC_OK, "");
  EXPECT_TRUE(g_ncalls == 2 && g_calls[0] == 3 && g_calls[1] == 5);
  EXPECT_TRUE(omp_get_max_threads() == 5);
  EXPECT_TRUE(memcmp(y, y3, sizeof y) == 0);
  g_ncalls = 0;
  CHECK_RC(conv, conv_run(conv, x, y3), ONNXC_OK, ""); /* num_threads 0: the caller's setting */
  EXPECT_TRUE(g_ncalls == 0);
  /* A second run of an instance while it runs (here: from inside the run) is refused. */
  g_reenter = three;
  CHECK_RC(conv, conv_run(three, x, y3), ONNXC_OK, "");
  EXPECT_TRUE(g_reenter_rc == ONNXC_ERR_STATE);
  EXPECT_TRUE(strstr(g_reenter_detail, "conv_run: the instance is already running") != NULL);
  printf("     (run inside the run -> %d: %s)\n", g_reenter_rc, g_reenter_detail);
  CHECK_RC(conv, conv_run(three, x, y3), ONNXC_OK, ""); /* and it is free again afterwards */

  CHECK_RC(conv, conv_destroy(&three), ONNXC_OK, "");
  CHECK_RC(conv, conv_destroy(&conv), ONNXC_OK, "");
  CHECK_RC(gemm, gemm_destroy(&gemm), ONNXC_OK, "");
  CHECK_RC(split, split_destroy(&split), ONNXC_OK, "");
  CHECK_RC(gather, gather_destroy(&gather), ONNXC_OK, "");
  CHECK_RC(land, land_destroy(&land), ONNXC_OK, "");
  CHECK_RC(equal, equal_destroy(&equal), ONNXC_OK, "");
  free(x);
  free(a);
  free(s);
  free(data);
  free(idx);
  free(g);
  free(la);
  free(lb);
  free(ea);
  free(eb);
  return finish("api_link");
}
