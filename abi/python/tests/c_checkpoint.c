/* The C side of the Python package's checkpoint round trip (test_checkpoint.py): C99 on rh.h only.
 *   c_checkpoint write DIR SPACE        writes DIR/x.f64, DIR/y.f64 (120 x 3 and 120 values, native doubles), fits
 *                                       them as 3 batches of 40 rows with inference, saves DIR/c.rhckpt and the
 *                                       predictions of X in DIR/c_pred.f64
 *   c_checkpoint resave IN OUT SPACE    loads the checkpoint IN into a float64 model and saves it to OUT */
#include <rh/rh.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ROWS = 120, COLS = 3, BATCH = 40 };

static int fail(const char* what) {
  fprintf(stderr, "c_checkpoint: %s: %s\n", what, rh_last_error());
  return 1;
}

/* splitmix64, uniform in [-0.5, 0.5): portable data with a few outliers */
static double next_uniform(unsigned long long* seed) {
  unsigned long long z = (*seed += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return (double)((z ^ (z >> 31)) >> 11) * (1.0 / 9007199254740992.0) - 0.5;
}

static int write_doubles(const char* dir, const char* name, const double* v, size_t n) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE* f = fopen(path, "wb");
  if (!f || fwrite(v, sizeof(double), n, f) != n) return 1;
  return fclose(f) != 0;
}

static rh_model* create(const char* space_name) {
  rh_config cfg;
  RH_STRUCT_INIT(&cfg);
  if (rh_config_init(&cfg) != RH_SUCCESS) return NULL;
  cfg.inference = 1;
  cfg.space = strcmp(space_name, "cuda") == 0 ? RH_SPACE_CUDA
              : strcmp(space_name, "openmp") == 0 ? RH_SPACE_OPENMP : RH_SPACE_SERIAL;
  rh_model* model = NULL;
  return rh_model_create(RH_ABI_VERSION, &cfg, &model) == RH_SUCCESS ? model : NULL;
}

int main(int argc, char** argv) {
  if (argc == 4 && strcmp(argv[1], "write") == 0) {
    static double x[ROWS * COLS], y[ROWS], pred[ROWS];
    unsigned long long seed = 2024;
    for (int i = 0; i < ROWS; ++i) {
      y[i] = 0.3;
      for (int j = 0; j < COLS; ++j) {
        x[i * COLS + j] = 2.0 * next_uniform(&seed);
        y[i] += x[i * COLS + j] * (j % 2 ? -0.75 : 1.25) / (j + 1);
      }
      y[i] += 0.1 * next_uniform(&seed) + (i % 11 == 5 ? 8.0 : 0.0);
    }
    rh_model* model = create(argv[3]);
    if (!model) return fail("create");
    for (int b = 0; b < ROWS / BATCH; ++b) {
      rh_batch batch;
      RH_STRUCT_INIT(&batch);
      batch.x = x + b * BATCH * COLS;
      batch.y = y + b * BATCH;
      batch.rows = BATCH;
      batch.cols = COLS;
      batch.layout = RH_LAYOUT_ROW_MAJOR;
      batch.dtype = RH_DTYPE_F64;
      batch.memory = RH_MEMORY_HOST;
      if (rh_model_partial_fit(model, &batch, NULL) != RH_SUCCESS) return fail("partial_fit");
    }
    rh_batch all;
    RH_STRUCT_INIT(&all);
    all.x = x;
    all.rows = ROWS;
    all.cols = COLS;
    all.layout = RH_LAYOUT_ROW_MAJOR;
    all.dtype = RH_DTYPE_F64;
    all.memory = RH_MEMORY_HOST;
    if (rh_model_predict(model, &all, pred, ROWS) != RH_SUCCESS) return fail("predict");
    char path[4096];
    snprintf(path, sizeof path, "%s/c.rhckpt", argv[2]);
    if (rh_model_save_checkpoint_file(model, path) != RH_SUCCESS) return fail("save");
    if (write_doubles(argv[2], "x.f64", x, ROWS * COLS) || write_doubles(argv[2], "y.f64", y, ROWS) ||
        write_doubles(argv[2], "c_pred.f64", pred, ROWS))
      return fail("writing the data");
    return rh_model_destroy(model) == RH_SUCCESS ? 0 : fail("destroy");
  }
  if (argc == 5 && strcmp(argv[1], "resave") == 0) {
    rh_model* model = create(argv[4]);
    if (!model) return fail("create");
    if (rh_model_load_checkpoint_file(model, argv[2]) != RH_SUCCESS) return fail("load");
    if (rh_model_save_checkpoint_file(model, argv[3]) != RH_SUCCESS) return fail("save");
    return rh_model_destroy(model) == RH_SUCCESS ? 0 : fail("destroy");
  }
  fprintf(stderr, "usage: c_checkpoint write DIR SPACE | c_checkpoint resave IN OUT SPACE\n");
  return 2;
}
