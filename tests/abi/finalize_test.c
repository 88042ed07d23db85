/* rh_finalize (ABI 1.3): refused while a model lives, then ends the runtime; afterwards the library refuses what
 * needs the runtime, and a second rh_finalize does nothing. The process must then exit by itself: under wine this is
 * the check that a C program using the DLL ends (ctest's TIMEOUT fails a hang). Prints "rh_finalize passed".
 *
 * usage: rh_finalize_test SPACE */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rh/rh.h"

#define EXPECT(cond)                                                                                             \
  do {                                                                                                           \
    if (!(cond)) {                                                                                               \
      fprintf(stderr, "rh_finalize_test: failed: %s (line %d); last error: %s\n", #cond, __LINE__, rh_last_error()); \
      exit(1);                                                                                                   \
    }                                                                                                            \
  } while (0)

int main(int argc, char** argv) {
  static const double x[8] = {1, 2, 3, 4, 5, 6, 7, 9}, y[8] = {2.1, 3.9, 6.2, 8.1, 9.8, 12.2, 14.1, 30.0};
  rh_config c;
  rh_batch b;
  rh_model* model = NULL;
  rh_space_info info;
  int32_t count = 0, i;
  EXPECT(argc == 2);
  RH_STRUCT_INIT(&c);
  EXPECT(rh_config_init(&c) == RH_SUCCESS);
  EXPECT(rh_space_count(&count) == RH_SUCCESS);
  for (i = 0; i < count; ++i) {
    RH_STRUCT_INIT(&info);
    EXPECT(rh_space_get(i, &info) == RH_SUCCESS);
    if (strcmp(info.name, argv[1]) == 0) c.space = info.space;
  }
  EXPECT(rh_model_create(RH_ABI_VERSION, &c, &model) == RH_SUCCESS);
  RH_STRUCT_INIT(&b);
  b.x = x;
  b.y = y;
  b.rows = 8;
  b.cols = 1;
  b.layout = RH_LAYOUT_ROW_MAJOR;
  b.dtype = RH_DTYPE_F64;
  b.memory = RH_MEMORY_HOST;
  EXPECT(rh_model_partial_fit(model, &b, NULL) == RH_SUCCESS);

  EXPECT(rh_finalize() == RH_INVALID_STATE); /* a live model: nothing changes */
  EXPECT(strstr(rh_last_error(), "rh_finalize: 1 model is still alive: destroy every model first") != NULL);
  EXPECT(rh_model_partial_fit(model, &b, NULL) == RH_SUCCESS);
  EXPECT(rh_model_destroy(model) == RH_SUCCESS);

  EXPECT(rh_finalize() == RH_SUCCESS);
  EXPECT(rh_finalize() == RH_SUCCESS); /* once is enough; again does nothing */
  model = NULL;
  EXPECT(rh_model_create(RH_ABI_VERSION, &c, &model) == RH_INVALID_STATE && model == NULL);
  EXPECT(strstr(rh_last_error(), "finalized") != NULL);
  EXPECT(rh_init(RH_ABI_VERSION, 0, -1) == RH_INVALID_STATE);
  printf("rh_finalize passed\n");
  return 0;
}
