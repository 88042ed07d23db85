// A batch whose rows are spread over processes (docs/scale-out.md): the passes' per-chunk partial sums are the
// same wherever a chunk is computed, so each process computes the chunks whose rows it holds and the others' come
// to it after each pass; every process then combines all chunks in chunk order, as one process would. The
// interface is MPI-free: the MPI library (rh/mpi.hpp) implements it; the engine and the passes only call it.
#pragma once
#include <cstddef>
#include <functional>

#include "rh/error.hpp"
#include "rh/types.hpp"

namespace rh::detail {

struct Chunks;

class ChunkExchange {
 public:
  virtual ~ChunkExchange() = default;
  // The batch's rows over every process (known to the exchange before the engine's update starts).
  virtual long long total_rows() const = 0;
  // Collective: gives each chunk of `chunks` (cut from total_rows()) to the process that holds its first row,
  // sets chunks.first / chunks.own to this process's, and returns the rows of those chunks (its own rows, less
  // those at its start that belong to an earlier process's chunk, plus those of later processes that its last
  // chunk reaches into). The returned batch's arrays live until the next call.
  virtual Batch own_rows(const Batch& local, Chunks& chunks) = 0;
  // Collective: every process's chunks [first, first + own) of the array `values` (per_chunk bytes each, chunk c
  // at values + c·per_chunk) into every process's array: of each chunk, the `length` bytes from byte `offset`;
  // then `then` (when given) runs. Between hold() and flush() a share waits: flush() makes every waiting share in
  // one exchange, then runs their `then`s in the order the shares were asked for. So the passes of one step of the
  // solver that need nothing from each other (docs/scale-out.md) cross processes once.
  virtual void share(void* values, std::size_t per_chunk, std::size_t offset, std::size_t length,
                     std::function<void()> then) = 0;
  virtual void hold() = 0;
  virtual void flush() = 0;  // collective
  // Collective: values[i] ← the sum of every process's values[i] (counts: exact in double below 2^53).
  virtual void sum(double* values, int count) = 0;
  // Collective: when any process passes an error, every process throws the first (lowest rank) failed process's
  // error; otherwise returns.
  virtual void agree(const Error* local) = 0;
};

}  // namespace rh::detail
