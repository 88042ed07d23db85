/* The C side of docs/python.md's per-call overhead: microseconds per rh_model_partial_fit and per rh_model_predict
 * on one small batch (ROWS x COLS, float64, Serial), median of 7 rounds of CALLS calls. overhead.py runs the same
 * through the Python estimator. Build and run: see the header of overhead.py. */
#include <rh/rh.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { ROWS = 64, COLS = 4, CALLS = 2000, ROUNDS = 7 };

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(void) {
  static double x[ROWS * COLS], y[ROWS], out[ROWS];
  unsigned s = 1;
  for (int i = 0; i < ROWS * COLS; ++i) x[i] = (double)((s = s * 1103515245u + 12345u) >> 16) / 65536.0 - 0.5;
  for (int i = 0; i < ROWS; ++i) y[i] = x[i * COLS] - 2.0 * x[i * COLS + 1] + 0.1 * x[i * COLS + 2];
  rh_config cfg;
  RH_STRUCT_INIT(&cfg);
  rh_config_init(&cfg);
  cfg.space = RH_SPACE_SERIAL;
  rh_model* m = NULL;
  if (rh_model_create(RH_ABI_VERSION, &cfg, &m) != RH_SUCCESS) return fprintf(stderr, "%s\n", rh_last_error()), 1;
  rh_batch b;
  RH_STRUCT_INIT(&b);
  b.x = x; b.y = y; b.rows = ROWS; b.cols = COLS;
  b.layout = RH_LAYOUT_ROW_MAJOR; b.dtype = RH_DTYPE_F64; b.memory = RH_MEMORY_HOST;
  double fit[ROUNDS], predict[ROUNDS];
  for (int r = 0; r < ROUNDS; ++r) {
    rh_diagnostics d;
    RH_STRUCT_INIT(&d);
    double t0 = now();
    for (int i = 0; i < CALLS; ++i)
      if (rh_model_partial_fit(m, &b, &d) != RH_SUCCESS) return 1;
    double t1 = now();
    for (int i = 0; i < CALLS; ++i)
      if (rh_model_predict(m, &b, out, ROWS) != RH_SUCCESS) return 1;
    double t2 = now();
    fit[r] = 1e6 * (t1 - t0) / CALLS;
    predict[r] = 1e6 * (t2 - t1) / CALLS;
  }
  qsort(fit, ROUNDS, sizeof(double), by_value);
  qsort(predict, ROUNDS, sizeof(double), by_value);
  printf("C       partial_fit %.2f us  predict %.2f us\n", fit[ROUNDS / 2], predict[ROUNDS / 2]);
  return rh_model_destroy(m) != RH_SUCCESS;
}
