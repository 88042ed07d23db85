/* renewable-huber C ABI, MPI part: a model whose batches are spread over the processes of an MPI communicator
 * (docs/scale-out.md). Declared here, apart from rh/rh.h, which stays MPI-free; defined in the library
 * renewable_huber_mpi (built with RH_ENABLE_MPI=ON), which exports everything librenewable_huber does plus these.
 *
 * Every call below is collective over the model's communicator: each process makes it, in the same order, and gets
 * the same status (an error on any process is an error on all, and then every process's model is as it was). A
 * process whose handle is bad (NULL, destroyed, or not a spread model) while the others pass theirs fails with
 * them when it holds exactly one spread model; holding several, it cannot tell which call the others make, and it
 * fails alone while they wait (docs/scale-out.md, "Guarantees"). A spread model takes its batches only through
 * rh_mpi_model_partial_fit / rh_mpi_model_fit (rh_model_partial_fit and rh_model_fit answer RH_INVALID_STATE);
 * every other rh_model_* call works on the process's own copy of the state, the same on every process, without
 * communication. rh_model_destroy frees the model's duplicate of the
 * communicator (MPI_Comm_free): call it on every process, before MPI_Finalize.
 *
 * Threads: with Kokkos 3.4 (and CUDA) the library makes every call of a model on its own runtime thread, so MPI
 * must be initialized with MPI_Init_thread(..., MPI_THREAD_SERIALIZED or MPI_THREAD_MULTIPLE, ...); otherwise
 * rh_mpi_model_create answers RH_UNAVAILABLE. */
#ifndef RH_RH_MPI_H
#define RH_RH_MPI_H

#include <mpi.h>

#include "rh/rh.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Creates a model on every process of comm (MPI_Comm_c2f of the communicator; the model duplicates it). */
RH_API rh_status rh_mpi_model_create(uint32_t abi_version, const rh_config* config, MPI_Fint comm,
                                     rh_model** model) RH_NOEXCEPT;
/* One renewable update from this process's rows of the batch: batch->rows may be 0 (X, y and weights are then not
 * read); cols, dtype and whether there are weights must agree between the processes. Every process ends with the
 * state, to the bit, that one process of the same space computes from all the rows in rank order. */
RH_API rh_status rh_mpi_model_partial_fit(rh_model* model, const rh_batch* batch,
                                          rh_diagnostics* diagnostics) RH_NOEXCEPT;
RH_API rh_status rh_mpi_model_fit(rh_model* model, const rh_batch* batch, rh_diagnostics* diagnostics) RH_NOEXCEPT;
/* Process 0 writes the checkpoint file; every process gets its status. */
RH_API rh_status rh_mpi_model_save_checkpoint_file(const rh_model* model, const char* path) RH_NOEXCEPT;
/* Every process reads the file (written by any number of processes, or by a plain model); all load it or none. */
RH_API rh_status rh_mpi_model_load_checkpoint_file(rh_model* model, const char* path) RH_NOEXCEPT;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* RH_RH_MPI_H */
