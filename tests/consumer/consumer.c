/* A C program using the installed kforge C API: open, select, explain,
 * launch, check against a reference computed here, close. Also checks that
 * errors come back as statuses with messages. Exit 0 when all is well. */
#include <kforge/kforge.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                                   \
  do {                                                                                \
    kforge_status s_ = (call);                                                        \
    if (s_ != KFORGE_OK) {                                                            \
      fprintf(stderr, "%s: %s: %s\n", #call, kforge_status_string(s_), kforge_last_error()); \
      return 1;                                                                       \
    }                                                                                 \
  } while (0)

int main(int argc, char** argv) {
  enum { M = 37, N = 21, K = 13 };
  kforge_options options;
  kforge_options_init(&options);
  options.user_db = argc > 1 ? argv[1] : NULL;
  kforge_lookup* lookup = NULL;
  CHECK(kforge_open(&options, &lookup));

  const kforge_dim dims[] = {{"K", K}, {"M", M}, {"N", N}};
  const kforge_problem problem = {"gemm", dims, 3, "f32", "NN"};
  const kforge_selection* sel = NULL;
  CHECK(kforge_select(lookup, &problem, &sel));
  printf("c: %s %s %s on %s\n%s", kforge_selection_rule(sel), kforge_selection_template(sel),
         kforge_selection_config(sel), kforge_device_name(lookup), kforge_selection_explain(sel));

  float* a = malloc(sizeof(float) * M * K);
  float* b = malloc(sizeof(float) * K * N);
  float* c = malloc(sizeof(float) * M * N);
  for (int i = 0; i < M * K; ++i) a[i] = (float)((i * 7) % 11 - 5) / 4.0f;
  for (int i = 0; i < K * N; ++i) b[i] = (float)((i * 5) % 13 - 6) / 8.0f;
  kforge_buffer *da = NULL, *db = NULL, *dc = NULL, *dbias = NULL;
  CHECK(kforge_buffer_create(lookup, sizeof(float) * M * K, &da));
  CHECK(kforge_buffer_create(lookup, sizeof(float) * K * N, &db));
  CHECK(kforge_buffer_create(lookup, sizeof(float) * M * N, &dc));
  CHECK(kforge_buffer_create(lookup, sizeof(float) * N, &dbias));
  CHECK(kforge_buffer_write(lookup, da, a, sizeof(float) * M * K));
  CHECK(kforge_buffer_write(lookup, db, b, sizeof(float) * K * N));
  /* gemm's arguments: M, N, K, alpha, A, B, beta, C, bias (docs/runtime.md). */
  kforge_arg args[9] = {{KFORGE_ARG_INT32, NULL, M, 0}, {KFORGE_ARG_INT32, NULL, N, 0},
                        {KFORGE_ARG_INT32, NULL, K, 0}, {KFORGE_ARG_FLOAT32, NULL, 0, 1.0f},
                        {KFORGE_ARG_BUFFER, da, 0, 0},  {KFORGE_ARG_BUFFER, db, 0, 0},
                        {KFORGE_ARG_FLOAT32, NULL, 0, 0.0f}, {KFORGE_ARG_BUFFER, dc, 0, 0},
                        {KFORGE_ARG_BUFFER, dbias, 0, 0}};
  double ms = 0;
  CHECK(kforge_launch(lookup, sel, args, 9, &ms));
  CHECK(kforge_buffer_read(lookup, dc, c, sizeof(float) * M * N));
  int bad = 0;
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      double ref = 0;
      for (int k = 0; k < K; ++k) ref += (double)a[i * K + k] * b[k * N + j];
      if (!(fabs(c[i * N + j] - ref) <= 1e-4 * (1 + fabs(ref)))) ++bad;
    }
  }
  printf("c: %d of %d elements wrong, %.4f ms\n", bad, M * N, ms);

  /* Errors are statuses with messages, never crashes. */
  const kforge_problem wrong = {"gemm", dims, 3, "f64", "NN"};
  const kforge_selection* none = NULL;
  if (kforge_select(lookup, &wrong, &none) != KFORGE_ERROR_BAD_INPUT || kforge_last_error()[0] == 0) {
    fprintf(stderr, "c: an unknown dtype was not refused\n");
    return 1;
  }
  if (kforge_set_override(lookup, "gemm", "gemm_simt_tiled", "BM7") != KFORGE_ERROR_BAD_INPUT) {
    fprintf(stderr, "c: an undeclared override was not refused\n");
    return 1;
  }
  printf("c: refused as expected: %s\n", kforge_last_error());

  kforge_buffer_destroy(da);
  kforge_buffer_destroy(db);
  kforge_buffer_destroy(dc);
  kforge_buffer_destroy(dbias);
  kforge_close(lookup);
  free(a);
  free(b);
  free(c);
  return bad == 0 && kforge_api_version() == KFORGE_C_API_VERSION ? 0 : 1;
}
