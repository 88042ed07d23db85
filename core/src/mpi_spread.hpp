// The MPI side of a model whose batches are spread over processes, attached to a plain rh::Regressor: what
// rh::mpi::Regressor (rh/mpi.hpp) and the C ABI's rh_mpi_* calls (rh/rh_mpi.h) share. Internal.
#pragma once
#include <mpi.h>

#include <functional>
#include <memory>
#include <string>

#include "rh/regressor.hpp"

namespace rh::mpi {

class Spread {
 public:
  // Collective: duplicates the communicator (the model's traffic never meets the caller's).
  explicit Spread(MPI_Comm comm);
  ~Spread();  // frees the duplicate; leaves the model alone (it may be gone already)
  Spread(const Spread&) = delete;
  Spread& operator=(const Spread&) = delete;
  // Collective: the model's updates go through this exchange from now on; it must outlive the model's use of it.
  void attach(rh::Regressor& model);
  // Collective: f() on this process; when it throws on any process, every process throws the first failed one's
  // error (the same status).
  void collectively(const std::function<void()>& f);
  // Collective: one update from this process's rows (rh::mpi::Regressor::partial_fit / fit).
  const Diagnostics& update(const Batch& rows, bool from_empty, const char* what);
  void save_checkpoint_file(const std::string& path) const;  // collective: process 0 writes
  void load_checkpoint_file(const std::string& path);        // collective: every process reads, all or none load
  int rank() const;
  int size() const;

 private:
  class Exchange;
  MPI_Comm comm = MPI_COMM_NULL;
  std::unique_ptr<Exchange> exchange;
  rh::Regressor* model = nullptr;
};

}  // namespace rh::mpi
