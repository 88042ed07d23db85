/* rh_mpi.h from C, under mpirun: a stream of three batches spread over the processes (uneven, process 1 empty in
 * the second batch) gives the checkpoint bytes, to the bit, of a plain model fed every row on this process; the plain
 * update call is refused on a spread model with the same status everywhere; a bad handle (NULL, or a plain model) on
 * the last process only is the same status on every process, without a deadlock, and no model changes; the
 * checkpoint file round trip.
 * Prints "rh_mpi_c_abi: N processes passed" on process 0; exits 1 on any failure.
 *
 * usage: rh_mpi_c_abi SPACE DIR */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rh/rh_mpi.h"

#define COLS 4
#define MAXROWS 700

static int rank = 0, size = 1;
static double x[MAXROWS * COLS], y[MAXROWS], w[MAXROWS];

#define EXPECT(cond)                                                                                        \
  do {                                                                                                      \
    if (!(cond)) {                                                                                          \
      fprintf(stderr, "rh_mpi_c_abi: process %d: %s failed (line %d); last error: %s\n", rank, #cond,       \
              __LINE__, rh_last_error());                                                                   \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                                         \
    }                                                                                                       \
  } while (0)

static void make_data(int64_t rows, unsigned seed) {
  int64_t i, j;
  for (i = 0; i < rows; ++i) {
    y[i] = 0.5;
    for (j = 0; j < COLS; ++j) {
      seed = seed * 1103515245u + 12345u;
      x[i * COLS + j] = (double)((seed >> 8) % 2001u) / 1000.0 - 1.0;
      y[i] += (double)(j + 1) * x[i * COLS + j];
    }
    w[i] = 0.5 + (double)(i % 7) / 7.0;
    if (i % 13 == 3) y[i] += 10.0;
  }
}

static rh_batch rows_of(int64_t first, int64_t rows) {
  rh_batch b;
  RH_STRUCT_INIT(&b);
  b.x = x + first * COLS;
  b.y = y + first;
  b.weights = w + first;
  b.rows = rows;
  b.cols = COLS;
  b.layout = RH_LAYOUT_ROW_MAJOR;
  b.dtype = RH_DTYPE_F64;
  b.memory = RH_MEMORY_HOST;
  return b;
}

static int64_t checkpoint(rh_model* m, unsigned char* out, int64_t capacity) {
  int64_t n = 0;
  EXPECT(rh_model_save_checkpoint(m, out, capacity, &n) == RH_SUCCESS);
  return n;
}

/* Every process got `want`. */
static void same_status_everywhere(rh_status got, rh_status want) {
  int mine = (int)got, lowest = 0, highest = 0;
  EXPECT(got == want);
  MPI_Allreduce(&mine, &lowest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&mine, &highest, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  EXPECT(lowest == highest);
}

int main(int argc, char** argv) {
  int provided = 0, k;
  static unsigned char a[1 << 16], b[1 << 16];
  char path[4096];
  rh_config c;
  rh_model *plain = NULL, *spread = NULL, *resumed = NULL;
  const int64_t rows[3] = {600, 150, 333};
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  EXPECT(argc == 3);
  RH_STRUCT_INIT(&c);
  EXPECT(rh_config_init(&c) == RH_SUCCESS);
  c.space = strcmp(argv[1], "openmp") == 0 ? RH_SPACE_OPENMP : RH_SPACE_SERIAL;
  c.inference = 1;
  EXPECT(rh_model_create(RH_ABI_VERSION, &c, &plain) == RH_SUCCESS);
  EXPECT(rh_mpi_model_create(RH_ABI_VERSION, &c, MPI_Comm_c2f(MPI_COMM_WORLD), &spread) == RH_SUCCESS);
  for (k = 0; k < 3; ++k) {
    const int64_t n = rows[k];
    /* process r takes rows [n·r²/size², n·(r+1)²/size²); in batch 2 process 1 gives its rows to process 0 */
    int64_t lo = n * rank * rank / (size * size), hi = n * (rank + 1) * (rank + 1) / (size * size);
    rh_diagnostics d;
    if (k == 1 && size > 1) {
      if (rank == 0) hi = n * 4 / (size * size);
      if (rank == 1) lo = hi;
    }
    make_data(n, 7u + (unsigned)k);
    RH_STRUCT_INIT(&d);
    {
      rh_batch all = rows_of(0, n), mine = rows_of(lo, hi - lo);
      EXPECT(rh_model_partial_fit(plain, &all, NULL) == RH_SUCCESS);
      EXPECT(rh_mpi_model_partial_fit(spread, &mine, &d) == RH_SUCCESS);
      EXPECT(rh_model_partial_fit(spread, &all, NULL) == RH_INVALID_STATE); /* only the spread call updates it */
    }
    {
      const int64_t na = checkpoint(plain, a, sizeof a), nb = checkpoint(spread, b, sizeof b);
      EXPECT(na == nb && memcmp(a, b, (size_t)na) == 0);
    }
  }
  snprintf(path, sizeof path, "%s/c_abi_%d_%s.rhc", argv[2], size, argv[1]);
  if (size > 1) {
    /* The last process passes a bad handle, the others the spread model (this process's only one). */
    rh_model* bad[2];
    int which;
    bad[0] = NULL;
    bad[1] = plain;
    for (which = 0; which < 2; ++which) {
      rh_model* mine_model = rank == size - 1 ? bad[which] : spread;
      rh_batch some = rows_of(0, 50);
      same_status_everywhere(rh_mpi_model_partial_fit(mine_model, &some, NULL), RH_INVALID_ARGUMENT);
      same_status_everywhere(rh_mpi_model_fit(mine_model, &some, NULL), RH_INVALID_ARGUMENT);
      same_status_everywhere(rh_mpi_model_save_checkpoint_file(mine_model, path), RH_INVALID_ARGUMENT);
      same_status_everywhere(rh_mpi_model_load_checkpoint_file(mine_model, path), RH_INVALID_ARGUMENT);
      if (rank != size - 1) EXPECT(strstr(rh_last_error(), which == 0 ? "handle is NULL" : "not created by") != NULL);
      {
        const int64_t na = checkpoint(plain, a, sizeof a), nb = checkpoint(spread, b, sizeof b);
        EXPECT(na == nb && memcmp(a, b, (size_t)na) == 0); /* unchanged */
      }
    }
  }
  EXPECT(rh_mpi_model_save_checkpoint_file(spread, path) == RH_SUCCESS);
  EXPECT(rh_mpi_model_create(RH_ABI_VERSION, &c, MPI_Comm_c2f(MPI_COMM_WORLD), &resumed) == RH_SUCCESS);
  EXPECT(rh_mpi_model_load_checkpoint_file(resumed, path) == RH_SUCCESS);
  {
    const int64_t na = checkpoint(plain, a, sizeof a), nb = checkpoint(resumed, b, sizeof b);
    EXPECT(na == nb && memcmp(a, b, (size_t)na) == 0);
  }
  EXPECT(rh_mpi_model_load_checkpoint_file(resumed, "/nonexistent/dir/x.rhc") != RH_SUCCESS);
  EXPECT(rh_mpi_model_partial_fit(plain, NULL, NULL) == RH_INVALID_ARGUMENT); /* not a spread model */
  EXPECT(rh_model_destroy(resumed) == RH_SUCCESS);
  EXPECT(rh_model_destroy(spread) == RH_SUCCESS);
  EXPECT(rh_model_destroy(plain) == RH_SUCCESS);
  if (rank == 0) printf("rh_mpi_c_abi: %d processes passed\n", size);
  MPI_Finalize();
  return 0;
}
