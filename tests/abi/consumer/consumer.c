/* Uses the installed C ABI: version gate, fit, checkpoint, restore, predict. Built by CMake and by pkg-config. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rh/rh.h>

#define FAIL(what)                                                      \
  do {                                                                  \
    printf("consumer_c: %s failed: %s\n", what, rh_last_error());      \
    return 1;                                                           \
  } while (0)

int main(void) {
  double x[40], y[40], probe = 0.5, a = 0, b = 0;
  rh_config cfg;
  rh_batch batch;
  rh_model *model = NULL, *restored = NULL;
  unsigned char* bytes;
  int64_t size = 0;
  int i;
  if (RH_ABI_VERSION_MAJOR_OF(rh_abi_version()) != RH_ABI_VERSION_MAJOR) FAIL("ABI major check");
  for (i = 0; i < 40; ++i) {
    x[i] = i * 0.05;
    y[i] = 2.0 * x[i] + 1.0 + (i % 10 == 3 ? 6.0 : 0.0);
  }
  RH_STRUCT_INIT(&cfg);
  if (rh_config_init(&cfg) != RH_SUCCESS) FAIL("rh_config_init");
  if (rh_model_create(RH_ABI_VERSION, &cfg, &model) != RH_SUCCESS) FAIL("rh_model_create");
  if (rh_model_create(RH_ABI_VERSION, &cfg, &restored) != RH_SUCCESS) FAIL("rh_model_create");
  RH_STRUCT_INIT(&batch);
  batch.x = x;
  batch.y = y;
  batch.rows = 40;
  batch.cols = 1;
  batch.layout = RH_LAYOUT_ROW_MAJOR;
  batch.dtype = RH_DTYPE_F64;
  batch.memory = RH_MEMORY_HOST;
  if (rh_model_partial_fit(model, &batch, NULL) != RH_SUCCESS) FAIL("rh_model_partial_fit");
  if (rh_model_save_checkpoint(model, NULL, 0, &size) != RH_SUCCESS) FAIL("rh_model_save_checkpoint (size)");
  bytes = (unsigned char*)malloc((size_t)size);
  if (!bytes || rh_model_save_checkpoint(model, bytes, size, &size) != RH_SUCCESS) FAIL("rh_model_save_checkpoint");
  if (rh_model_load_checkpoint(restored, bytes, size) != RH_SUCCESS) FAIL("rh_model_load_checkpoint");
  free(bytes);
  batch.x = &probe;
  batch.rows = 1;
  if (rh_model_predict(model, &batch, &a, 1) != RH_SUCCESS) FAIL("rh_model_predict");
  if (rh_model_predict(restored, &batch, &b, 1) != RH_SUCCESS) FAIL("rh_model_predict");
  if (a != b || a < 1.8 || a > 2.4) FAIL("prediction check");
  rh_model_destroy(model);
  rh_model_destroy(restored);
  printf("consumer_c ok: renewable-huber %s, ABI %u.%u, prediction %.6f\n", rh_library_version(),
         (unsigned)RH_ABI_VERSION_MAJOR, (unsigned)RH_ABI_VERSION_MINOR, a);
  return 0;
}
