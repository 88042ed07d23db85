/* Drives every case of a golden fixture (written by rh_golden_fixture from native_core_v1.json) through the C ABI
 * as a stream, on one execution space, and checks each batch's state and diagnostics and the probe predictions
 * against the corpus within the case's rtol/atol.
 *
 * Each case runs on two models: A gets tight row-major batches through rh_model_partial_fit; B gets the same data
 * column-major with a padded leading dimension (the padding is NaN, so reading it would poison the result) and its
 * first batch through rh_model_fit. A and B must agree bit for bit: layout and ld are addressing, not arithmetic.
 *
 * usage: rh_golden_stream FIXTURE SPACE      (SPACE: a compiled space's name, as rh_space_get gives it) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "golden_floors.h"
#include "rh/rh.h"

#define LD_PADDING 3

typedef struct {
  const char* case_id;
  const char* space;
  double rtol, atol;
  int failures;
  double worst;  /* largest |got - want| / (atol + rtol |want|) */
  char worst_at[96];
} checker;

static void die(const char* message) {
  fprintf(stderr, "rh_golden_stream: %s\n", message);
  exit(2);
}

static void* allocate(size_t n, size_t size) {
  void* p = calloc(n ? n : 1, size);
  if (!p) die("out of memory");
  return p;
}

static void expect_word(FILE* f, const char* word) {
  char buf[64];
  if (fscanf(f, "%63s", buf) != 1 || strcmp(buf, word) != 0) {
    fprintf(stderr, "rh_golden_stream: fixture: expected '%s'\n", word);
    exit(2);
  }
}

static double read_double(FILE* f) {
  double v;
  if (fscanf(f, "%lf", &v) != 1) die("fixture: expected a number");
  return v;
}

static long long read_int(FILE* f) {
  long long v;
  if (fscanf(f, "%lld", &v) != 1) die("fixture: expected an integer");
  return v;
}

static double* read_doubles(FILE* f, size_t n) {
  double* v = (double*)allocate(n, sizeof(double));
  size_t i;
  for (i = 0; i < n; ++i) v[i] = read_double(f);
  return v;
}

static void check(rh_status status, const char* what) {
  if (status != RH_SUCCESS) {
    fprintf(stderr, "rh_golden_stream: %s failed with %s: %s\n", what, rh_status_string(status), rh_last_error());
    exit(1);
  }
}

static void check_value(checker* c, double got, double want, const char* field, long index) {
  const double budget = c->atol + c->rtol * fabs(want);
  const double scaled = isfinite(got) ? fabs(got - want) / budget : INFINITY;
  if (scaled > c->worst) {
    c->worst = scaled;
    snprintf(c->worst_at, sizeof c->worst_at, "%s[%ld]", field, index);
  }
  if (!(scaled <= 1.0)) {
    ++c->failures;
    fprintf(stderr, "FAIL %s on %s: %s[%ld] = %.17g, want %.17g (|diff| %.3g > %.3g)\n", c->case_id, c->space, field,
            index, got, want, fabs(got - want), budget);
  }
}

static void check_exact(checker* c, long long got, long long want, const char* field) {
  if (got != want) {
    ++c->failures;
    fprintf(stderr, "FAIL %s on %s: %s = %lld, want %lld\n", c->case_id, c->space, field, got, want);
  }
}

static void check_same_bits(checker* c, const void* a, const void* b, size_t bytes, const char* field) {
  if (memcmp(a, b, bytes) != 0) {
    ++c->failures;
    fprintf(stderr, "FAIL %s on %s: %s differs between the row-major and the padded column-major model\n", c->case_id,
            c->space, field);
  }
}

/* The values of a row-major double matrix in the model dtype: tight row-major, or column-major with ld rows. */
static void* convert(const double* x, long long rows, long long cols, int dtype, int col_major, long long ld) {
  const size_t total = (size_t)(col_major ? ld * cols : rows * cols);
  const size_t elem = dtype == RH_DTYPE_F32 ? sizeof(float) : sizeof(double);
  char* out = (char*)allocate(total, elem);
  size_t k;
  long long i, j;
  for (k = 0; k < total; ++k) {
    if (dtype == RH_DTYPE_F32) ((float*)out)[k] = (float)NAN;
    else ((double*)out)[k] = NAN;
  }
  for (i = 0; i < rows; ++i)
    for (j = 0; j < cols; ++j) {
      const size_t at = (size_t)(col_major ? j * ld + i : i * cols + j);
      if (dtype == RH_DTYPE_F32) ((float*)out)[at] = (float)x[i * cols + j];
      else ((double*)out)[at] = x[i * cols + j];
    }
  return out;
}

static double element(const void* values, int dtype, long long i) {
  return dtype == RH_DTYPE_F32 ? (double)((const float*)values)[i] : ((const double*)values)[i];
}

typedef struct {
  double* coefficients;
  double* information;
  rh_state header;
} exported_state;

static void export_state(rh_model* model, exported_state* out) {
  RH_STRUCT_INIT(&out->header);
  check(rh_model_get_state(model, &out->header), "rh_model_get_state (lengths)");
  out->coefficients = (double*)allocate((size_t)out->header.coefficients_length, sizeof(double));
  out->information = (double*)allocate((size_t)out->header.information_length, sizeof(double));
  out->header.coefficients = out->coefficients;
  out->header.information = out->information;
  check(rh_model_get_state(model, &out->header), "rh_model_get_state");
}

static void free_state(exported_state* s) {
  free(s->coefficients);
  free(s->information);
}

static void make_batch(rh_batch* b, const void* x, const void* y, const void* w, long long rows, long long cols,
                       int dtype, int col_major, long long ld) {
  RH_STRUCT_INIT(b);
  b->x = x;
  b->y = y;
  b->weights = w;
  b->rows = rows;
  b->cols = cols;
  b->ld = col_major ? ld : 0;
  b->layout = col_major ? RH_LAYOUT_COL_MAJOR : RH_LAYOUT_ROW_MAJOR;
  b->dtype = dtype;
  b->memory = RH_MEMORY_HOST;
}

/* The RH_SPACE_* code of a compiled space, found by name in the library's own list. */
static int space_code(const char* name) {
  int32_t count = 0, i;
  rh_space_info info;
  check(rh_space_count(&count), "rh_space_count");
  for (i = 0; i < count; ++i) {
    RH_STRUCT_INIT(&info);
    check(rh_space_get(i, &info), "rh_space_get");
    if (strcmp(info.name, name) == 0) return info.space;
  }
  die("the space is not compiled into this library");
  return 0;
}

/* The RH_PENALTY_* code of a corpus penalty name, from the library's names (rh_penalty_name); any other name is an
 * error, never another penalty. */
static int32_t penalty_code(const char* name) {
  const char* known = NULL;
  int32_t code;
  for (code = 1; rh_penalty_name(code, &known) == RH_SUCCESS; ++code)
    if (strcmp(name, known) == 0) return code;
  die("fixture: a penalty the library does not know");
  return 0;
}

/* Runs one case; returns its number of failed checks. */
static int run_case(FILE* f, const char* space) {
  char id[128], dtype_name[8], penalty[8];
  checker c;
  rh_config cfg;
  rh_model *a = NULL, *b = NULL;
  long long batches, batch, rows, cols, m, i;
  int dtype;

  if (fscanf(f, " case %127s %7s", id, dtype_name) != 2) die("fixture: expected a case");
  memset(&c, 0, sizeof c);
  c.case_id = id;
  c.space = space;
  c.rtol = read_double(f);
  c.atol = read_double(f);
  dtype = strcmp(dtype_name, "f32") == 0 ? RH_DTYPE_F32 : RH_DTYPE_F64;
  if (strcmp(space, "cuda") == 0 && dtype == RH_DTYPE_F64) { /* the replay floors, see golden_floors.h */
    if (c.rtol < RH_GOLDEN_CUDA_F64_FLOOR_RTOL) c.rtol = RH_GOLDEN_CUDA_F64_FLOOR_RTOL;
    if (c.atol < RH_GOLDEN_CUDA_F64_FLOOR_ATOL) c.atol = RH_GOLDEN_CUDA_F64_FLOOR_ATOL;
  }

  RH_STRUCT_INIT(&cfg);
  check(rh_config_init(&cfg), "rh_config_init");
  expect_word(f, "config");
  cfg.tau = read_double(f);
  if (fscanf(f, "%7s", penalty) != 1) die("fixture: expected a penalty");
  cfg.penalty = penalty_code(penalty);
  cfg.lambda_scale = read_double(f);
  cfg.bandwidth_scale = read_double(f);
  cfg.fit_intercept = (int32_t)read_int(f);
  cfg.max_iter = (int32_t)read_int(f);
  cfg.tol = read_double(f);
  cfg.ridge = read_double(f);
  cfg.dtype = dtype;
  cfg.space = space_code(space);
  check(rh_model_create(RH_ABI_VERSION, &cfg, &a), "rh_model_create");
  check(rh_model_create(RH_ABI_VERSION, &cfg, &b), "rh_model_create");

  expect_word(f, "batches");
  batches = read_int(f);
  for (batch = 0; batch < batches; ++batch) {
    double *x, *y, *w = NULL, *coef, *info;
    void *xa, *xb, *yd, *wd = NULL;
    long long q, ld_b;
    rh_batch ba, bb;
    rh_diagnostics da, db;
    exported_state sa, sb;
    double want_lambda, want_weight_sum, want_objective, want_lambda_value, want_bandwidth;
    long long want_seen, want_count, want_converged;

    expect_word(f, "batch");
    rows = read_int(f);
    cols = read_int(f);
    {
      const int weighted = read_int(f) == 1;
      x = read_doubles(f, (size_t)(rows * cols));
      y = read_doubles(f, (size_t)rows);
      if (weighted) w = read_doubles(f, (size_t)rows);
    }
    ld_b = rows + LD_PADDING;
    xa = convert(x, rows, cols, dtype, 0, 0);
    xb = convert(x, rows, cols, dtype, 1, ld_b);
    yd = convert(y, rows, 1, dtype, 0, 0);
    if (w) wd = convert(w, rows, 1, dtype, 0, 0);
    make_batch(&ba, xa, yd, wd, rows, cols, dtype, 0, 0);
    make_batch(&bb, xb, yd, wd, rows, cols, dtype, 1, ld_b);
    RH_STRUCT_INIT(&da);
    RH_STRUCT_INIT(&db);
    check(rh_model_partial_fit(a, &ba, &da), "rh_model_partial_fit");
    check(batch == 0 ? rh_model_fit(b, &bb, &db) : rh_model_partial_fit(b, &bb, &db), "fit of the column-major model");

    expect_word(f, "expect");
    q = read_int(f);
    want_seen = read_int(f);
    want_count = read_int(f);
    want_lambda = read_double(f);
    want_weight_sum = read_double(f);
    want_converged = read_int(f);
    want_objective = read_double(f);
    want_lambda_value = read_double(f);
    want_bandwidth = read_double(f);
    coef = read_doubles(f, (size_t)q);
    info = read_doubles(f, (size_t)(q * q));

    export_state(a, &sa);
    export_state(b, &sb);
    check_exact(&c, sa.header.coefficients_length, q, "coefficient count");
    if (sa.header.coefficients_length == q) {
      for (i = 0; i < q; ++i) check_value(&c, sa.coefficients[i], coef[i], "coefficients", (long)i);
      for (i = 0; i < q * q; ++i) check_value(&c, sa.information[i], info[i], "information", (long)i);
      check_same_bits(&c, sa.coefficients, sb.coefficients, (size_t)q * sizeof(double), "coefficients");
      check_same_bits(&c, sa.information, sb.information, (size_t)(q * q) * sizeof(double), "information");
    }
    check_exact(&c, sa.header.n_features, cols, "n_features");
    check_exact(&c, sa.header.n_samples_seen, want_seen, "n_samples_seen");
    check_exact(&c, sa.header.batch_count, want_count, "batch_count");
    check_value(&c, sa.header.previous_lambda, want_lambda, "previous_lambda", 0);
    check_value(&c, sa.header.weight_sum, want_weight_sum, "weight_sum", 0);
    check_exact(&c, da.converged, want_converged, "converged");
    check_value(&c, da.objective, want_objective, "objective", 0);
    check_value(&c, da.lambda_value, want_lambda_value, "lambda_value", 0);
    check_value(&c, da.bandwidth, want_bandwidth, "bandwidth", 0);
    check_same_bits(&c, &da, &db, sizeof da, "diagnostics");
    printf("  %s batch %lld: %d iteration(s)\n", id, batch + 1, (int)da.iterations);

    free_state(&sa);
    free_state(&sb);
    free(x); free(y); free(w); free(coef); free(info);
    free(xa); free(xb); free(yd); free(wd);
  }

  expect_word(f, "probe");
  rows = read_int(f);
  cols = read_int(f);
  {
    double* x = read_doubles(f, (size_t)(rows * cols));
    void* xa = convert(x, rows, cols, dtype, 0, 0);
    void* xb = convert(x, rows, cols, dtype, 1, rows + LD_PADDING);
    const size_t elem = dtype == RH_DTYPE_F32 ? sizeof(float) : sizeof(double);
    void* pa = allocate((size_t)rows, elem);
    void* pb = allocate((size_t)rows, elem);
    double* want;
    rh_batch ba, bb;
    make_batch(&ba, xa, NULL, NULL, rows, cols, dtype, 0, 0);
    make_batch(&bb, xb, NULL, NULL, rows, cols, dtype, 1, rows + LD_PADDING);
    check(rh_model_predict(a, &ba, pa, rows), "rh_model_predict");
    check(rh_model_predict(b, &bb, pb, rows), "rh_model_predict (column-major)");
    expect_word(f, "predictions");
    m = read_int(f);
    want = read_doubles(f, (size_t)m);
    check_exact(&c, rows, m, "prediction count");
    for (i = 0; i < m && i < rows; ++i) check_value(&c, element(pa, dtype, i), want[i], "predictions", (long)i);
    check_same_bits(&c, pa, pb, (size_t)rows * elem, "predictions");
    free(x); free(xa); free(xb); free(pa); free(pb); free(want);
  }

  check(rh_model_destroy(a), "rh_model_destroy");
  check(rh_model_destroy(b), "rh_model_destroy");
  printf("case %s on %s: %s (worst %.3g of the tolerance, at %s)\n", id, space, c.failures ? "FAILED" : "ok",
         c.worst, c.worst_at);
  return c.failures;
}

int main(int argc, char** argv) {
  FILE* f;
  long long cases, k;
  int failed_cases = 0;
  if (argc != 3) {
    fprintf(stderr, "usage: rh_golden_stream FIXTURE SPACE\n");
    return 2;
  }
  f = fopen(argv[1], "r");
  if (!f) die("cannot open the fixture");
  expect_word(f, "rh-golden-fixture");
  if (read_int(f) != 1) die("fixture: unknown fixture version");
  expect_word(f, "cases");
  cases = read_int(f);
  if (cases <= 0) die("fixture: no cases");
  for (k = 0; k < cases; ++k)
    if (run_case(f, argv[2]) != 0) ++failed_cases;
  fclose(f);
  if (rh_finalize() != RH_SUCCESS) die("rh_finalize failed"); /* on Windows the process ends cleanly only after it */
  if (failed_cases) {
    printf("golden stream on %s: %d of %lld cases FAILED\n", argv[2], failed_cases, cases);
    return 1;
  }
  printf("golden stream on %s: all %lld cases passed\n", argv[2], cases);
  return 0;
}
