/* A C program using the installed kforge C API: open, select, explain,
 * launch, check against a reference computed here, close; then a fused gemm
 * (bias+relu) and a reduce with kind=max through kforge_problem_ext. Also
 * checks that errors come back as statuses with messages, a short buffer
 * among them. Exit 0 when all is well. */
#include <kforge/bindings/c/kforge.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

  /* The same gemm fused: C = relu(A B + bias). */
  float* bias = malloc(sizeof(float) * N);
  for (int j = 0; j < N; ++j) bias[j] = (float)(j % 5 - 2) / 2.0f;
  CHECK(kforge_buffer_write(lookup, dbias, bias, sizeof(float) * N));
  kforge_problem_ext fused;
  kforge_problem_ext_init(&fused);
  fused.problem = problem;
  fused.epilogue = "bias+relu";
  const kforge_selection* fused_sel = NULL;
  CHECK(kforge_select_ext(lookup, &fused, &fused_sel));
  CHECK(kforge_launch(lookup, fused_sel, args, 9, NULL));
  CHECK(kforge_buffer_read(lookup, dc, c, sizeof(float) * M * N));
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      double ref = bias[j];
      for (int k = 0; k < K; ++k) ref += (double)a[i * K + k] * b[k * N + j];
      if (ref < 0) ref = 0;
      if (!(fabs(c[i * N + j] - ref) <= 1e-4 * (1 + fabs(ref)))) ++bad;
    }
  }
  printf("c: fused %s %s, %d wrong so far\n", kforge_selection_template(fused_sel),
         kforge_selection_config(fused_sel), bad);

  /* A row-wise max: reduce with kind=max. Arguments: rows, cols, X, out,
   * partials (64 floats per output), counters (zero on entry). */
  enum { ROWS = 5, COLS = 77 };
  const kforge_dim rc[] = {{"rows", ROWS}, {"cols", COLS}};
  const kforge_attr max_kind[] = {{"kind", "max"}};
  kforge_problem_ext reduce;
  kforge_problem_ext_init(&reduce);
  reduce.problem.op = "reduce";
  reduce.problem.dims = rc;
  reduce.problem.num_dims = 2;
  reduce.attrs = max_kind;
  reduce.num_attrs = 1;
  const kforge_selection* max_sel = NULL;
  CHECK(kforge_select_ext(lookup, &reduce, &max_sel));
  float x[ROWS * COLS], out[ROWS], zeros[ROWS * 64] = {0};
  for (int i = 0; i < ROWS * COLS; ++i) x[i] = (float)((i * 37) % 101) - 60.0f;
  kforge_buffer *dx = NULL, *dout = NULL, *dpartials = NULL, *dcounters = NULL;
  CHECK(kforge_buffer_create(lookup, sizeof x, &dx));
  CHECK(kforge_buffer_create(lookup, sizeof out, &dout));
  CHECK(kforge_buffer_create(lookup, sizeof zeros, &dpartials));
  CHECK(kforge_buffer_create(lookup, sizeof(float) * ROWS, &dcounters));
  CHECK(kforge_buffer_write(lookup, dx, x, sizeof x));
  CHECK(kforge_buffer_write(lookup, dcounters, zeros, sizeof(float) * ROWS));
  kforge_arg rargs[6] = {{KFORGE_ARG_INT32, NULL, ROWS, 0},    {KFORGE_ARG_INT32, NULL, COLS, 0},
                         {KFORGE_ARG_BUFFER, dx, 0, 0},        {KFORGE_ARG_BUFFER, dout, 0, 0},
                         {KFORGE_ARG_BUFFER, dpartials, 0, 0}, {KFORGE_ARG_BUFFER, dcounters, 0, 0}};
  CHECK(kforge_launch(lookup, max_sel, rargs, 6, NULL));
  CHECK(kforge_buffer_read(lookup, dout, out, sizeof out));
  for (int r = 0; r < ROWS; ++r) {
    float m = x[r * COLS];
    for (int j = 1; j < COLS; ++j) m = x[r * COLS + j] > m ? x[r * COLS + j] : m;
    if (out[r] != m) ++bad;
  }
  printf("c: reduce kind=max %s, %d wrong so far\n", kforge_selection_template(max_sel), bad);

  /* A short buffer is refused, naming the argument, and nothing runs. */
  rargs[3].buffer = dcounters; /* fine: 5 floats */
  rargs[2].buffer = dout;      /* X needs ROWS * COLS floats */
  if (kforge_launch(lookup, max_sel, rargs, 6, NULL) != KFORGE_ERROR_BAD_INPUT ||
      strstr(kforge_last_error(), "argument 2 (X)") == NULL) {
    fprintf(stderr, "c: a short buffer was not refused: %s\n", kforge_last_error());
    return 1;
  }
  printf("c: refused as expected: %s\n", kforge_last_error());
  kforge_buffer_destroy(dx);
  kforge_buffer_destroy(dout);
  kforge_buffer_destroy(dpartials);
  kforge_buffer_destroy(dcounters);
  free(bias);

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
