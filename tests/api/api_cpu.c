/* api_cpu.c — the CPU check of a model's C API: the conv node-test model built with flags that
 * let the compiler use AVX-512ER, an extension of the Xeon Phi (Knights Landing and Mill) that
 * no other CPU has, so that on any machine these tests run on every create function must
 * refuse with ONNXC_ERR_TARGET, leave *ctx NULL and name what the CPU lacks; with
 * options.unsafe_skip_cpu_check the check is skipped (run only where the CPU has AVX-512F, which
 * -mavx512er implies: argv[2] = "skip").
 *
 * Usage: api_cpu DIR [skip] — DIR/conv/ holds the model (conv.c built into this program).
 */
#include "api_check.h"
#include "conv.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s DIR [skip]\n", argv[0]);
    return 2;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/conv/conv.weights", argv[1]);
  static int dummy;
  conv_ctx* ctx = (conv_ctx*)&dummy; /* a refused create must set it to NULL */
  onnxc_options options = {0};
  CHECK_RC(conv, conv_create(path, &options, &ctx), ONNXC_ERR_TARGET, "conv: built for ", "this CPU lacks ", "AVX-512ER");
  EXPECT_TRUE(ctx == NULL);
  CHECK_RC(conv, conv_create(path, NULL, &ctx), ONNXC_ERR_TARGET, "lacks ", "AVX-512ER");
  static const unsigned char blob[64] = {0};
  CHECK_RC(conv, conv_create_from_memory(blob, sizeof blob, NULL, &ctx), ONNXC_ERR_TARGET, "lacks ", "AVX-512ER");
  EXPECT_TRUE(strcmp(conv_status_string(ONNXC_ERR_TARGET), "CPU not supported by this build") == 0);
  if (argc > 2 && strcmp(argv[2], "skip") == 0) {
    options.unsafe_skip_cpu_check = 1;
    CHECK_RC(conv, conv_create(path, &options, &ctx), ONNXC_OK, "");
    EXPECT_TRUE(ctx != NULL);
    conv_ctx* twin = NULL;
    CHECK_RC(conv, conv_create_sharing(ctx, &options, &twin), ONNXC_OK, "");
    options.unsafe_skip_cpu_check = 0;
    conv_ctx* third = NULL;
    CHECK_RC(conv, conv_create_sharing(ctx, &options, &third), ONNXC_ERR_TARGET, "lacks ", "AVX-512ER");
    EXPECT_TRUE(third == NULL);
    conv_destroy(&twin);
    conv_destroy(&ctx);
  }
  return finish("api_cpu");
}
