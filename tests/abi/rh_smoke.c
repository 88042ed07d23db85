/* rh_smoke: a quick end-to-end check of the C ABI, in C. Runs named cases and prints "rh_smoke passed" only when
 * every one of them passed; any failure prints the case, the check and the library's message, and exits 1.
 *
 * usage: rh_smoke [SPACE]      (a compiled space's name; default: the library's default space) */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rh/rh.h"

#define ROWS 64
#define COLS 3

static const char* current_case = "";
static int32_t space = 0;

#define EXPECT(cond)                                                                                         \
  do {                                                                                                       \
    if (!(cond)) {                                                                                           \
      fprintf(stderr, "rh_smoke: case '%s' failed: %s (line %d); last error: %s\n", current_case, #cond,     \
              __LINE__, rh_last_error());                                                                    \
      exit(1);                                                                                               \
    }                                                                                                        \
  } while (0)

static double x[ROWS * COLS], y[ROWS];

static void make_data(void) {
  int i, j;
  unsigned seed = 12345u;
  for (i = 0; i < ROWS; ++i) {
    y[i] = 0.5;
    for (j = 0; j < COLS; ++j) {
      seed = seed * 1103515245u + 12345u;
      x[i * COLS + j] = (double)((seed >> 8) % 2001u) / 1000.0 - 1.0;
      y[i] += (j + 1) * x[i * COLS + j];
    }
    if (i % 13 == 3) y[i] += 10.0; /* outliers */
  }
}

static rh_config config(void) {
  rh_config c;
  RH_STRUCT_INIT(&c);
  EXPECT(rh_config_init(&c) == RH_SUCCESS);
  if (space) c.space = space;
  return c;
}

static rh_batch batch(int64_t rows) {
  rh_batch b;
  RH_STRUCT_INIT(&b);
  b.x = x;
  b.y = y;
  b.rows = rows;
  b.cols = COLS;
  b.layout = RH_LAYOUT_ROW_MAJOR;
  b.dtype = RH_DTYPE_F64;
  b.memory = RH_MEMORY_HOST;
  return b;
}

static rh_model* create(void) {
  rh_config c = config();
  rh_model* m = NULL;
  EXPECT(rh_model_create(RH_ABI_VERSION, &c, &m) == RH_SUCCESS);
  EXPECT(m != NULL);
  return m;
}

static void case_create_destroy(void) {
  rh_model* m = create();
  rh_config got;
  RH_STRUCT_INIT(&got);
  EXPECT(rh_model_get_config(m, &got) == RH_SUCCESS);
  EXPECT(got.tau == 1.345 && got.dtype == RH_DTYPE_F64);
  EXPECT(rh_model_destroy(m) == RH_SUCCESS);
  EXPECT(rh_model_destroy(NULL) == RH_SUCCESS);
}

static void case_version_gate(void) {
  rh_config c = config();
  rh_model* m = NULL;
  EXPECT(rh_abi_version() == RH_ABI_VERSION);
  EXPECT(rh_model_create(RH_MAKE_ABI_VERSION(RH_ABI_VERSION_MAJOR + 1, 0), &c, &m) == RH_VERSION_MISMATCH);
  EXPECT(m == NULL);
  EXPECT(strstr(rh_last_error(), "ABI") != NULL);
  c.struct_size = (uint32_t)offsetof(rh_config, inference) - 4; /* below the first ABI's size */
  EXPECT(rh_model_create(RH_ABI_VERSION, &c, &m) == RH_VERSION_MISMATCH);
  EXPECT(m == NULL);
}

static void case_fit_predict(void) {
  rh_model* m = create();
  rh_batch b = batch(ROWS / 2);
  rh_diagnostics d;
  double pred[ROWS], r2 = 0;
  int i;
  RH_STRUCT_INIT(&d);
  EXPECT(rh_model_partial_fit(m, &b, &d) == RH_SUCCESS);
  b.x = x + (ROWS / 2) * COLS;
  b.y = y + ROWS / 2;
  EXPECT(rh_model_partial_fit(m, &b, &d) == RH_SUCCESS);
  EXPECT(d.iterations >= 1 && d.converged == 1);
  b = batch(ROWS);
  EXPECT(rh_model_predict(m, &b, pred, ROWS) == RH_SUCCESS);
  for (i = 0; i < ROWS; ++i)
    if (i % 13 != 3) /* Huber: the 5 outliers of +10 move the fit ~0.11; least squares would move it ~0.78 */
      EXPECT(fabs(pred[i] - y[i]) < 0.25);
  EXPECT(rh_model_score(m, &b, &r2) == RH_SUCCESS);
  EXPECT(r2 > 0.0 && r2 < 1.0);
  EXPECT(rh_model_destroy(m) == RH_SUCCESS);
}

static void case_checkpoint_round_trip(void) {
  rh_model *a = create(), *b = create();
  rh_batch first = batch(ROWS / 2), second = batch(ROWS / 2);
  unsigned char* bytes;
  int64_t size = 0, written = 0;
  double ca[COLS + 1], cb[COLS + 1], ia[(COLS + 1) * (COLS + 1)], ib[(COLS + 1) * (COLS + 1)];
  rh_state sa, sb;
  second.x = x + (ROWS / 2) * COLS;
  second.y = y + ROWS / 2;
  EXPECT(rh_model_partial_fit(a, &first, NULL) == RH_SUCCESS);
  EXPECT(rh_model_save_checkpoint(a, NULL, 0, &size) == RH_SUCCESS);
  bytes = (unsigned char*)malloc((size_t)size);
  EXPECT(bytes != NULL);
  EXPECT(rh_model_save_checkpoint(a, bytes, size, &written) == RH_SUCCESS && written == size);
  EXPECT(rh_model_load_checkpoint(b, bytes, size) == RH_SUCCESS);
  EXPECT(rh_model_partial_fit(a, &second, NULL) == RH_SUCCESS);
  EXPECT(rh_model_partial_fit(b, &second, NULL) == RH_SUCCESS);
  RH_STRUCT_INIT(&sa);
  RH_STRUCT_INIT(&sb);
  sa.coefficients = ca;
  sa.information = ia;
  sb.coefficients = cb;
  sb.information = ib;
  sa.coefficients_length = sb.coefficients_length = COLS + 1;
  sa.information_length = sb.information_length = (COLS + 1) * (COLS + 1);
  EXPECT(rh_model_get_state(a, &sa) == RH_SUCCESS && rh_model_get_state(b, &sb) == RH_SUCCESS);
  EXPECT(memcmp(ca, cb, sizeof ca) == 0 && memcmp(ia, ib, sizeof ia) == 0);
  EXPECT(sa.n_samples_seen == ROWS && sb.n_samples_seen == ROWS && sb.batch_count == 2);
  bytes[size / 2] ^= 0x01;
  EXPECT(rh_model_load_checkpoint(b, bytes, size) == RH_CORRUPT_DATA);
  free(bytes);
  EXPECT(rh_model_destroy(a) == RH_SUCCESS && rh_model_destroy(b) == RH_SUCCESS);
}

static void case_errors(void) {
  rh_model* m = create();
  rh_batch b = batch(ROWS);
  double pred[ROWS];
  rh_diagnostics d;
  EXPECT(rh_model_predict(m, &b, pred, ROWS) == RH_INVALID_STATE);
  EXPECT(strlen(rh_last_error()) > 0 && strcmp(rh_last_error(), rh_model_last_error(m)) == 0);
  b.cols = -1;
  EXPECT(rh_model_partial_fit(m, &b, NULL) == RH_INVALID_ARGUMENT);
  b = batch(ROWS);
  b.layout = 42;
  EXPECT(rh_model_partial_fit(m, &b, NULL) == RH_INVALID_ARGUMENT);
  b = batch(ROWS);
  x[5] = NAN;
  EXPECT(rh_model_partial_fit(m, &b, NULL) == RH_INVALID_ARGUMENT);
  make_data();
  RH_STRUCT_INIT(&d);
  EXPECT(rh_model_diagnostics(m, &d) == RH_INVALID_STATE);
  EXPECT(rh_model_partial_fit(m, &b, NULL) == RH_SUCCESS);
  EXPECT(rh_last_error()[0] == '\0');
  EXPECT(rh_model_destroy(m) == RH_SUCCESS);
  EXPECT(rh_model_partial_fit(m, &b, NULL) == RH_INVALID_ARGUMENT);
  EXPECT(strstr(rh_last_error(), "not a live model handle") != NULL);
  EXPECT(strcmp(rh_status_string(RH_CORRUPT_DATA), "corrupt data") == 0);
}

/* A group of 3 models: model 0 gets the first half of the rows, model 1 none, model 2 the second half with a NaN in
 * its y. Only model 0 commits; it equals a single model fed the same rows (the group's float64 floor, docs/api.md). */
static void case_group(void) {
  rh_config c = config();
  rh_group* g = NULL;
  rh_model* m = create();
  rh_batch b = batch(ROWS);
  int64_t offsets[4] = {0, ROWS / 2, ROWS / 2, ROWS}, committed = -1, n = 0;
  double cg[COLS + 1], cm[COLS + 1], ig[(COLS + 1) * (COLS + 1)], im[(COLS + 1) * (COLS + 1)];
  double pred[ROWS], saved = y[ROWS - 1];
  rh_state sg, sm;
  rh_status status = RH_SUCCESS;
  char message[256];
  int j;
  EXPECT(rh_group_create(RH_ABI_VERSION, &c, 3, COLS, &g) == RH_SUCCESS && g != NULL);
  EXPECT(rh_group_n_models(g, &n) == RH_SUCCESS && n == 3);
  y[ROWS - 1] = NAN;
  EXPECT(rh_group_partial_fit(g, &b, offsets, 4, &committed) == RH_SUCCESS);
  y[ROWS - 1] = saved;
  EXPECT(committed == 1);
  EXPECT(rh_group_model_status(g, 2, &status, message, sizeof message) == RH_SUCCESS);
  EXPECT(status == RH_INVALID_ARGUMENT && strstr(message, "model 2") != NULL);
  EXPECT(rh_group_model_status(g, 1, &status, message, sizeof message) == RH_SUCCESS);
  EXPECT(status == RH_SUCCESS && message[0] == '\0');
  b = batch(ROWS / 2);
  EXPECT(rh_model_partial_fit(m, &b, NULL) == RH_SUCCESS);
  RH_STRUCT_INIT(&sg);
  RH_STRUCT_INIT(&sm);
  sg.coefficients = cg;
  sm.coefficients = cm;
  sg.information = ig;
  sm.information = im;
  sg.coefficients_length = sm.coefficients_length = COLS + 1;
  sg.information_length = sm.information_length = (COLS + 1) * (COLS + 1);
  EXPECT(rh_group_get_state(g, 0, &sg) == RH_SUCCESS && rh_model_get_state(m, &sm) == RH_SUCCESS);
  EXPECT(sg.n_samples_seen == ROWS / 2 && sg.batch_count == 1);
  for (j = 0; j <= COLS; ++j) EXPECT(fabs(cg[j] - cm[j]) <= 2e-9 + 1e-8 * fabs(cm[j]));
  EXPECT(rh_group_get_state(g, 2, &sg) == RH_SUCCESS && sg.n_features == 0); /* left as it was: empty */
  offsets[1] = offsets[2] = offsets[3] = ROWS / 2;
  EXPECT(rh_group_predict(g, &b, offsets, 4, pred, ROWS) == RH_SUCCESS);
  offsets[3] = ROWS;
  b = batch(ROWS);
  EXPECT(rh_group_predict(g, &b, offsets, 4, pred, ROWS) == RH_INVALID_STATE); /* model 2 was never fitted */
  EXPECT(strcmp(rh_last_error(), rh_group_last_error(g)) == 0 && strstr(rh_last_error(), "model 2") != NULL);
  EXPECT(rh_model_destroy(m) == RH_SUCCESS);
  EXPECT(rh_finalize() == RH_INVALID_STATE); /* a group is alive */
  EXPECT(strstr(rh_last_error(), "group") != NULL);
  EXPECT(rh_group_destroy(g) == RH_SUCCESS);
  EXPECT(rh_group_n_models(g, &n) == RH_INVALID_ARGUMENT);
}

typedef struct {
  const char* name;
  void (*run)(void);
} smoke_case;

int main(int argc, char** argv) {
  static const smoke_case cases[] = {
      {"create/destroy", case_create_destroy},
      {"version gate", case_version_gate},
      {"fit/predict", case_fit_predict},
      {"checkpoint round trip", case_checkpoint_round_trip},
      {"errors", case_errors},
      {"model group", case_group},
  };
  size_t i;
  if (argc > 1) {
    int32_t count = 0, k;
    rh_space_info info;
    if (rh_space_count(&count) != RH_SUCCESS) return 1;
    for (k = 0; k < count; ++k) {  /* the compiled spaces, by name */
      RH_STRUCT_INIT(&info);
      if (rh_space_get(k, &info) == RH_SUCCESS && strcmp(info.name, argv[1]) == 0) space = info.space;
    }
    if (!space) {
      fprintf(stderr, "usage: rh_smoke [SPACE]: '%s' is not a compiled space\n", argv[1]);
      return 2;
    }
  }
  printf("renewable-huber %s, ABI %u.%u\n", rh_library_version(), (unsigned)RH_ABI_VERSION_MAJOR_OF(rh_abi_version()),
         (unsigned)RH_ABI_VERSION_MINOR_OF(rh_abi_version()));
  make_data();
  for (i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    current_case = cases[i].name;
    cases[i].run();
    printf("case %s: ok\n", cases[i].name);
  }
  current_case = "rh_finalize";
  EXPECT(rh_finalize() == RH_SUCCESS); /* on Windows the process ends cleanly only after it */
  printf("rh_smoke passed\n");
  return 0;
}
