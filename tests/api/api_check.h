/* api_check.h — what the C programs of the API tests share: CHECK_RC(expression, status,
 * "text"...) runs one call of a model's API and checks its status and that the model's
 * last_error() contains each text (none for ONNXC_OK); failures are counted and printed,
 * never fatal, so one run reports every broken case. File helpers read and write raw tensors. */
#ifndef API_CHECK_H
#define API_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#define API_UNUSED __attribute__((unused))
#else
#define API_UNUSED
#endif

static int g_failures, g_checks;

/* Checks status `rc` (of `what`) against `want`, and that `detail` contains the n texts. */
API_UNUSED static void check_rc(const char* what, int rc, int want, const char* detail, const char* const* texts, int n) {
  ++g_checks;
  int ok = rc == want;
  for (int i = 0; i < n && ok; ++i) ok = strstr(detail, texts[i]) != NULL;
  if (ok) {
    if (want) printf("ok   %s -> %d: %s\n", what, rc, detail);
    else printf("ok   %s\n", what);
    return;
  }
  ++g_failures;
  printf("FAIL %s -> %d, detail: %s\n     expected status %d and a detail containing:", what, rc, detail, want);
  for (int i = 0; i < n; ++i) printf(" \"%s\"", texts[i]);
  printf("\n");
}

/* CHECK_RC(model, expression, status, text...): at least one text ("" for none). */
#define CHECK_RC(model, expr, want, ...)                                                          \
  do {                                                                                            \
    static const char* const texts_[] = {__VA_ARGS__};                                            \
    int rc_ = (expr);                                                                             \
    check_rc(#expr, rc_, (want), model##_last_error(), texts_, (int)(sizeof texts_ / sizeof *texts_)); \
  } while (0)

#define EXPECT_TRUE(cond)                                     \
  do {                                                        \
    ++g_checks;                                               \
    if (cond) {                                               \
      printf("ok   %s\n", #cond);                             \
    } else {                                                  \
      ++g_failures;                                           \
      printf("FAIL %s (%s:%d)\n", #cond, __FILE__, __LINE__); \
    }                                                         \
  } while (0)

/* The whole file, which must be `bytes` long; exits on any other size (a broken test setup). */
API_UNUSED static void* read_raw(const char* dir, const char* file, size_t bytes) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  FILE* f = fopen(path, "rb");
  void* p = malloc(bytes ? bytes : 1);
  if (!f || !p || fread(p, 1, bytes, f) != bytes || fgetc(f) != EOF) {
    fprintf(stderr, "test setup: cannot read %zu bytes from %s\n", bytes, path);
    exit(2);
  }
  fclose(f);
  return p;
}

API_UNUSED static void write_raw(const char* dir, const char* file, const void* data, size_t bytes) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  FILE* f = fopen(path, "wb");
  if (!f || fwrite(data, 1, bytes, f) != bytes || fclose(f) != 0) {
    fprintf(stderr, "test setup: cannot write %s\n", path);
    exit(2);
  }
}

API_UNUSED static int finish(const char* program) {
  printf("%s: %d checks, %d failed\n", program, g_checks, g_failures);
  return g_failures ? 1 : 0;
}

#endif
