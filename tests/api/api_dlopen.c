/* api_dlopen.c — several models' shared libraries loaded into one process with dlopen
 * (RTLD_NOW | RTLD_GLOBAL, so an exported runtime symbol of one library would interpose the
 * others'), each driven through its NAME_info only (tests/api/run_api_tests.py compares the
 * outputs with ONNX's reference outputs).
 *
 * Usage: api_dlopen DIR NAME... — loads DIR/NAME/libNAME.so, creates an instance from
 * DIR/NAME/NAME.weights, reads DIR/NAME.in<k>.bin, runs, writes DIR/NAME.dl.out<k>.bin; all
 * libraries stay loaded and every instance alive until the end. Then a failure in the first
 * model must leave the others' last_error() empty: their runtimes are their own.
 */
#include "onnxc_runtime.c" /* the dtype sizes; private to this file like any model's copy */

#include <dlfcn.h>

#include "api_check.h"

#define MAX_MODELS 8

int main(int argc, char** argv) {
  if (argc < 3 || argc - 2 > MAX_MODELS) {
    fprintf(stderr, "usage: %s DIR NAME... (at most %d)\n", argv[0], MAX_MODELS);
    return 2;
  }
  const char* dir = argv[1];
  int n = argc - 2;
  void* libs[MAX_MODELS] = {0};
  const onnxc_model_info* infos[MAX_MODELS] = {0};
  void* ctxs[MAX_MODELS] = {0};
  char path[4096], file[512];
  for (int m = 0; m < n; ++m) {
    const char* name = argv[2 + m];
    snprintf(path, sizeof path, "%s/%s/lib%s.so", dir, name, name);
    libs[m] = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!libs[m]) {
      printf("FAIL dlopen %s: %s\n", path, dlerror());
      return 1;
    }
    snprintf(file, sizeof file, "%s_info", name);
    infos[m] = (const onnxc_model_info*)dlsym(libs[m], file);
    if (!infos[m]) {
      printf("FAIL dlsym %s: %s\n", file, dlerror());
      return 1;
    }
    const onnxc_model_info* info = infos[m];
    snprintf(path, sizeof path, "%s/%s/%s.weights", dir, name, name);
    int rc = info->create(path, NULL, &ctxs[m]);
    check_rc("create", rc, ONNXC_OK, info->last_error(), NULL, 0);
    if (rc) return finish("api_dlopen");
    const void* ins[MAX_MODELS];
    void* outs[MAX_MODELS];
    size_t in_bytes[MAX_MODELS], out_bytes[MAX_MODELS];
    if (info->num_inputs > MAX_MODELS || info->num_outputs > MAX_MODELS) return 2;
    for (int k = 0; k < info->num_inputs; ++k) {
      in_bytes[k] = info->inputs[k].numel * onnxc_dtype_size(info->inputs[k].dtype);
      snprintf(file, sizeof file, "%s.in%d.bin", name, k);
      ins[k] = read_raw(dir, file, in_bytes[k]);
    }
    for (int k = 0; k < info->num_outputs; ++k) {
      out_bytes[k] = info->outputs[k].numel * onnxc_dtype_size(info->outputs[k].dtype);
      outs[k] = malloc(out_bytes[k] ? out_bytes[k] : 1);
    }
    snprintf(file, sizeof file, "%s run_v", name);
    check_rc(file, info->run_v(ctxs[m], ins, in_bytes, outs, out_bytes), ONNXC_OK, info->last_error(), NULL, 0);
    for (int k = 0; k < info->num_outputs; ++k) {
      snprintf(file, sizeof file, "%s.dl.out%d.bin", name, k);
      write_raw(dir, file, outs[k], out_bytes[k]);
      free(outs[k]);
    }
    for (int k = 0; k < info->num_inputs; ++k) free((void*)ins[k]);
  }
  /* A failure in the first model: its detail, nobody else's. */
  size_t one = 1;
  const void* null_in[MAX_MODELS] = {0};
  void* null_out[MAX_MODELS] = {0};
  int rc = infos[0]->run_v(ctxs[0], null_in, &one, null_out, &one);
  check_rc("run_v with NULL buffers", rc, ONNXC_ERR_ARG, infos[0]->last_error(), (const char* const[]){"_run_v: input 0"}, 1);
  for (int m = 1; m < n; ++m) {
    ++g_checks;
    if (infos[m]->last_error()[0] != '\0' || infos[m]->last_error == infos[0]->last_error) {
      ++g_failures;
      printf("FAIL %s's last_error is '%s' after a failure of %s\n", argv[2 + m], infos[m]->last_error(), argv[2]);
    } else {
      printf("ok   %s's last_error is empty after a failure of %s\n", argv[2 + m], argv[2]);
    }
  }
  for (int m = 0; m < n; ++m) {
    check_rc("destroy", infos[m]->destroy(&ctxs[m]), ONNXC_OK, infos[m]->last_error(), NULL, 0);
    EXPECT_TRUE(ctxs[m] == NULL);
  }
  /* The libraries stay loaded: unloading the last one would also unload the OpenMP runtime that
   * only they brought in, while its idle pool threads still run its code. */
  (void)libs;
  return finish("api_dlopen");
}
