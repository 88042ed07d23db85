// A model whose batches are spread over the processes of an MPI communicator (docs/scale-out.md). Built with
// RH_ENABLE_MPI=ON into the library RenewableHuber::rh_mpi; rh/regressor.hpp and the plain library know nothing
// of MPI.
//
//   rh::mpi::Regressor model(MPI_COMM_WORLD, rh::Space::openmp, rh::Dtype::f64, config);
//   model.partial_fit(rh::host_batch(x, y, my_rows, p));   // collective: each process passes its own rows
//   model.local().predict(...);                             // the same state on every process
//
// Every process ends each batch with the state, to the bit, that one process of the same space computes from
// all the rows in rank order, whatever the split (a process may pass no rows). The calls marked collective must
// be made by every process of the communicator, in the same order; an error in any of them is thrown, with the
// same status, on every process, and leaves every process's model as it was.
#pragma once
#include <mpi.h>

#include <memory>
#include <string>

#include "rh/regressor.hpp"

namespace rh::mpi {

class Regressor {
 public:
  // Collective. The communicator is duplicated: the model's traffic never meets the caller's.
  Regressor(MPI_Comm comm, Space space, Dtype dtype, const Config& config = Config(), int device_id = 0);
  ~Regressor();  // collective (frees the duplicated communicator)
  Regressor(Regressor&&) noexcept;
  Regressor& operator=(Regressor&&) noexcept;
  Regressor(const Regressor&) = delete;
  Regressor& operator=(const Regressor&) = delete;

  // Collective: one renewable update from this process's rows of the batch (rows may be 0; X's columns, the
  // dtype and whether there are weights must agree between the processes). fit: reset, then the same.
  const Diagnostics& partial_fit(const Batch& rows);
  const Diagnostics& fit(const Batch& rows);

  // Collective: process 0 writes the checkpoint file (rh::save_checkpoint_file); every process gets its status.
  void save_checkpoint_file(const std::string& path) const;
  // Collective: every process reads the file; either every model loads it or none changes. The checkpoint may
  // come from any number of processes (or from a plain rh::Regressor): the state is the same.
  void load_checkpoint_file(const std::string& path);

  // This process's copy of the model: predict, state, diagnostics, inference and set_config, without
  // communication. Its own partial_fit / fit see this process's rows only (not the spread batch).
  rh::Regressor& local();
  const rh::Regressor& local() const;
  int rank() const;
  int size() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rh::mpi
