// rh::mpi::Regressor (rh/mpi.hpp): the MPI side of a batch spread over processes. The engine computes this
// process's chunks of each pass and calls the exchange (rh/detail/chunk_exchange.hpp) after each; this file moves
// the rows of chunks that straddle two processes to the chunk's owner, shares the chunks' partial sums
// (MPI_Allgatherv: every process then sums all chunks in chunk order, as one process does) and makes every error
// collective.
#include "rh/mpi.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <vector>

#include "mpi_spread.hpp"
#include "rh/checkpoint.hpp"
#include "rh/detail/chunk_exchange.hpp"
#include "rh/detail/engine_base.hpp"
#include "rh/detail/passes.hpp"  // Chunks

namespace rh::detail {

// rh::mpi::Regressor's access to the Regressor it wraps: its engine, its checks, and the bookkeeping of a
// committed batch.
struct RegressorAccess {
  static EngineBase& engine(Regressor& r, const char* what) { return r.engine(what); }
  static void check_batch_shape(const Regressor& r, const Batch& b, bool first, const char* what) {
    r.check_batch_shape(b, first, what);
  }
  static const Diagnostics& committed(Regressor& r, std::int64_t p, const Diagnostics& d) {
    r.n_features_ = p;
    r.fit_intercept_ = r.config_.fit_intercept;
    r.diagnostics_ = d;
    return *r.diagnostics_;
  }
  static bool intercept_differs(const Regressor& r) {
    return r.n_features_ > 0 && r.fit_intercept_ != r.config_.fit_intercept;
  }
};

}  // namespace rh::detail

namespace rh::mpi {

namespace {

void check_mpi(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  throw Error(Errc::internal_error, fmt::format("{} failed: {}", call, std::string(text, static_cast<size_t>(length))));
}

// What each process says about its part of a batch, gathered before anything else moves.
struct Part {
  std::int64_t rows = 0, cols = 0;
  std::int32_t weights = 0;  // sample weights given
  std::int32_t dtype = 0;
};

// One process's error as it travels to the others (the message cut to fit).
struct Failure {
  std::int32_t code = 0;  // 0: none
  char message[1000] = {};
};

// Elements of a dtype.
std::size_t dtype_bytes(Dtype d) { return d == Dtype::f32 ? sizeof(float) : sizeof(double); }

}  // namespace

class Spread::Exchange final : public detail::ChunkExchange {
 public:
  explicit Exchange(MPI_Comm comm) : comm_(comm) {
    check_mpi(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
    check_mpi(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
  }
  int rank() const { return rank_; }
  int size() const { return size_; }

  // The parts of a batch (from Regressor's checks); offsets are in rank order.
  void begin(const std::vector<Part>& parts, bool weights, Dtype dtype) {
    rows_.assign(parts.size(), 0);
    offset_.assign(parts.size() + 1, 0);
    for (size_t r = 0; r < parts.size(); ++r) {
      rows_[r] = parts[r].rows;
      offset_[r + 1] = offset_[r] + parts[r].rows;
    }
    weights_ = weights;
    dtype_ = dtype;
    in_batch_ = true;
    held_ = false;
    waiting_.clear();
  }

  void end() { in_batch_ = false; }

  long long total_rows() const override {
    // The first call of an update: a model whose batches are spread takes them only through the spread calls
    // (on every process alike, so this refusal never leaves a process waiting for the others).
    if (!in_batch_)
      throw Error(Errc::invalid_state,
                  "this model's batches are spread over processes: pass each process's rows "
                  "to rh::mpi::Regressor::partial_fit / fit (rh_mpi_model_partial_fit / fit)");
    return offset_.back();
  }

  Batch own_rows(const Batch& local, detail::Chunks& chunks) override {
    const long long R = chunks.rows, N = total_rows();
    first_.assign(size_, 0);
    own_.assign(size_, 0);
    std::vector<long long> lo(size_), hi(size_);  // the rows of each process's chunks
    for (int r = 0; r < size_; ++r) {
      const long long begin = (offset_[r] + R - 1) / R, end = (offset_[r + 1] + R - 1) / R;
      first_[r] = begin;
      own_[r] = end - begin;
      lo[r] = std::min(begin * R, N);
      hi[r] = std::min(end * R, N);
    }
    chunks.first = first_[rank_];
    chunks.own = own_[rank_];
    // Which rows go where: from process s (rows [offset_s, offset_s+1)) to d (rows [lo_d, hi_d)). Every process
    // computes the whole table, so that every one takes the same path.
    const long long p = local.x.cols;
    const long long per_row = p + 1 + (weights_ ? 1 : 0);
    const std::size_t elem = dtype_bytes(dtype_);
    auto moved = [&](int s, int d) {
      const long long a = std::max(offset_[s], lo[d]), b = std::min(offset_[s + 1], hi[d]);
      return s == d ? 0 : std::max(0LL, b - a);
    };
    bool any = false;
    for (int s = 0; s < size_; ++s)
      for (int d = 0; d < size_; ++d) {
        const long long m = moved(s, d);
        any = any || m > 0;
        if (static_cast<double>(m) * static_cast<double>(per_row * elem) > INT_MAX)
          throw Error(Errc::invalid_argument,
                      fmt::format("{} rows would move from process {} to process {} to complete a chunk, more "
                                  "than one message holds; spread the rows more evenly",
                                  m, s, d));
      }
    const long long mine = hi[rank_] - lo[rank_];
    if (!any && mine > 0) return local;  // this process's rows are its chunks' rows
    // This process's chunks' rows, row-major, from its own rows and those received.
    std::vector<int> send_counts(size_), send_displs(size_), recv_counts(size_), recv_displs(size_);
    std::vector<char> send;
    for (int d = 0; d < size_; ++d) {
      send_displs[d] = static_cast<int>(send.size());
      const long long a = std::max(offset_[rank_], lo[d]), m = moved(rank_, d);
      for (long long g = a; g < a + m; ++g) pack_row(local, g - offset_[rank_], p, send);
      send_counts[d] = static_cast<int>(send.size()) - send_displs[d];
    }
    long long received = 0;
    for (int s = 0; s < size_; ++s) {
      recv_counts[s] = static_cast<int>(moved(s, rank_) * per_row * static_cast<long long>(elem));
      recv_displs[s] = static_cast<int>(received);
      received += recv_counts[s];
    }
    std::vector<char> recv(static_cast<size_t>(std::max(1LL, received)));
    if (any)
      check_mpi(MPI_Alltoallv(send.data(), send_counts.data(), send_displs.data(), MPI_BYTE, recv.data(),
                              recv_counts.data(), recv_displs.data(), MPI_BYTE, comm_),
                "MPI_Alltoallv");
    x_.assign(static_cast<size_t>(std::max(1LL, mine * p)) * elem, 0);
    y_.assign(static_cast<size_t>(std::max(1LL, mine)) * elem, 0);
    w_.assign(static_cast<size_t>(std::max(1LL, mine)) * elem, 0);
    std::vector<long long> next(size_, 0);  // rows taken from each sender so far
    for (long long g = lo[rank_]; g < hi[rank_]; ++g) {
      const long long i = g - lo[rank_];
      std::vector<char> row;
      if (g >= offset_[rank_] && g < offset_[rank_ + 1]) {
        pack_row(local, g - offset_[rank_], p, row);
      } else {
        const int s = static_cast<int>(std::upper_bound(offset_.begin(), offset_.end(), g) - offset_.begin()) - 1;
        const char* at = recv.data() + recv_displs[s] + next[s]++ * per_row * static_cast<long long>(elem);
        row.assign(at, at + per_row * static_cast<long long>(elem));
      }
      std::memcpy(x_.data() + i * p * elem, row.data(), static_cast<size_t>(p) * elem);
      std::memcpy(y_.data() + i * elem, row.data() + p * elem, elem);
      if (weights_) std::memcpy(w_.data() + i * elem, row.data() + (p + 1) * elem, elem);
    }
    Batch out;
    out.x = MatrixRef{x_.data(), mine, p, p, Layout::row_major};
    out.y = y_.data();
    out.weights = weights_ ? w_.data() : nullptr;
    out.dtype = dtype_;
    out.memory = Memory::host;
    return out;
  }

  void share(void* values, std::size_t per_chunk, std::size_t offset, std::size_t length,
             std::function<void()> then) override {
    if (held_) {
      waiting_.push_back(Waiting{static_cast<char*>(values), per_chunk, offset, length, std::move(then)});
      return;
    }
    share_now(values, per_chunk, offset, length);
    if (then) then();
  }

  void hold() override { held_ = true; }

  // Every waiting share in one MPI_Allgatherv: of each chunk, the parts of every share side by side.
  void flush() override {
    held_ = false;
    std::vector<Waiting> shares = std::move(waiting_);
    waiting_.clear();
    if (shares.size() == 1) {
      share_now(shares[0].values, shares[0].per_chunk, shares[0].offset, shares[0].length);
    } else if (size_ > 1 && !shares.empty()) {
      std::size_t element = 0;  // bytes of one chunk's parts
      for (const Waiting& w : shares) element += w.length;
      const long long chunks = first_.back() + own_.back();
      packed_.resize(static_cast<std::size_t>(chunks) * element);
      const auto each_part = [&](long long c, auto&& f) {
        char* at = packed_.data() + static_cast<std::size_t>(c) * element;
        for (const Waiting& w : shares) {
          f(at, w.values + static_cast<std::size_t>(c) * w.per_chunk + w.offset, w.length);
          at += w.length;
        }
      };
      for (long long c = first_[rank_]; c < first_[rank_] + own_[rank_]; ++c)
        each_part(c, [](char* to, const char* from, std::size_t n) { std::memcpy(to, from, n); });
      share_now(packed_.data(), element, 0, element);
      for (long long c = 0; c < chunks; ++c)
        if (c < first_[rank_] || c >= first_[rank_] + own_[rank_])
          each_part(c, [](const char* from, char* to, std::size_t n) { std::memcpy(to, from, n); });
    }
    for (const Waiting& w : shares)
      if (w.then) w.then();
  }

  void share_now(void* values, std::size_t per_chunk, std::size_t offset, std::size_t length) {
    if (size_ == 1) return;
    // One element per chunk: its `length` bytes, the next element per_chunk bytes on.
    MPI_Datatype part, chunk;
    check_mpi(MPI_Type_contiguous(static_cast<int>(length), MPI_BYTE, &part), "MPI_Type_contiguous");
    check_mpi(MPI_Type_create_resized(part, 0, static_cast<MPI_Aint>(per_chunk), &chunk), "MPI_Type_create_resized");
    MPI_Type_commit(&chunk);
    std::vector<int> counts(size_), displs(size_);
    for (int r = 0; r < size_; ++r) {
      counts[r] = static_cast<int>(own_[r]);
      displs[r] = static_cast<int>(first_[r]);
    }
    const int rc = MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, static_cast<char*>(values) + offset,
                                  counts.data(), displs.data(), chunk, comm_);
    MPI_Type_free(&chunk);
    MPI_Type_free(&part);
    check_mpi(rc, "MPI_Allgatherv");
  }

  void sum(double* values, int count) override {
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, values, count, MPI_DOUBLE, MPI_SUM, comm_), "MPI_Allreduce");
  }

  void agree(const Error* local) override {
    Failure mine;
    if (local) {
      mine.code = static_cast<std::int32_t>(local->code());
      std::strncpy(mine.message, local->what(), sizeof mine.message - 1);
    }
    std::vector<Failure> all(static_cast<size_t>(size_));
    check_mpi(MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, comm_), "MPI_Allgather");
    for (int r = 0; r < size_; ++r)
      if (all[r].code != 0)
        throw Error(static_cast<Errc>(all[r].code),
                    size_ == 1 ? std::string(all[r].message) : fmt::format("process {}: {}", r, all[r].message));
  }

  // Every process's part of a batch.
  std::vector<Part> gather(const Part& mine) {
    std::vector<Part> all(static_cast<size_t>(size_));
    check_mpi(MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, comm_), "MPI_Allgather");
    return all;
  }

 private:
  // Row i of the caller's batch (X's p values, y, and w when there are weights), appended as raw elements.
  void pack_row(const Batch& b, long long i, long long p, std::vector<char>& out) const {
    const std::size_t elem = dtype_bytes(dtype_);
    const long long ld = b.x.ld > 0 ? b.x.ld : (b.x.layout == Layout::row_major ? p : b.x.rows);
    const char* x = static_cast<const char*>(b.x.data);
    for (long long j = 0; j < p; ++j) {
      const long long at = b.x.layout == Layout::row_major ? i * ld + j : j * ld + i;
      out.insert(out.end(), x + at * static_cast<long long>(elem), x + (at + 1) * static_cast<long long>(elem));
    }
    const char* y = static_cast<const char*>(b.y);
    out.insert(out.end(), y + i * static_cast<long long>(elem), y + (i + 1) * static_cast<long long>(elem));
    if (weights_) {
      const char* w = static_cast<const char*>(b.weights);
      out.insert(out.end(), w + i * static_cast<long long>(elem), w + (i + 1) * static_cast<long long>(elem));
    }
  }

  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
  std::vector<long long> rows_, offset_;  // each process's rows of the batch, and where they start
  std::vector<long long> first_, own_;    // each process's chunks
  bool weights_ = false;
  bool in_batch_ = false;  // between begin() and end(): an update of the spread calls
  Dtype dtype_ = Dtype::f64;
  std::vector<char> x_, y_, w_;  // this process's chunks' rows, when they are not its own rows
  // Shares asked for between hold() and flush().
  struct Waiting {
    char* values;
    std::size_t per_chunk, offset, length;
    std::function<void()> then;
  };
  bool held_ = false;
  std::vector<Waiting> waiting_;
  std::vector<char> packed_;  // every chunk's parts of the waiting shares
};

Spread::Spread(MPI_Comm user) {
  check_mpi(MPI_Comm_dup(user, &comm), "MPI_Comm_dup");
  exchange = std::make_unique<Exchange>(comm);
}

void Spread::attach(rh::Regressor& m) {
  collectively([&] { detail::RegressorAccess::engine(m, "attaching the model").set_exchange(exchange.get()); });
  model = &m;
}

int Spread::rank() const { return exchange->rank(); }
int Spread::size() const { return exchange->size(); }

Spread::~Spread() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (comm != MPI_COMM_NULL && !finalized) MPI_Comm_free(&comm);
}

void Spread::collectively(const std::function<void()>& f) {
  std::optional<Error> failed;
  try {
    f();
  } catch (const Error& e) {
    failed = e;
  } catch (const std::bad_alloc&) {
    failed = Error(Errc::allocation_failed, "out of memory");
  } catch (const std::exception& e) {
    failed = Error(Errc::internal_error, e.what());
  }
  exchange->agree(failed ? &*failed : nullptr);
}

const Diagnostics& Spread::update(const Batch& b, bool from_empty, const char* what) {
  rh::Regressor& r = *model;
  // This process's checks (an empty part: only what it says about the batch), then every process's verdict.
  Part mine;
  collectively([&] {
    // (again: a checkpoint loaded into the model through another call gave it a new engine)
    detail::RegressorAccess::engine(r, what).set_exchange(exchange.get());
    if (b.x.rows < 0) throw Error(Errc::invalid_argument, fmt::format("{}: {} rows", what, b.x.rows));
    if (b.x.rows > 0) {
      detail::RegressorAccess::check_batch_shape(r, b, from_empty, what);
      if (!b.y) throw Error(Errc::invalid_argument, fmt::format("{}: y is a null pointer", what));
    } else {
      Batch shape = b;
      shape.x.rows = 1;
      shape.x.data = &shape;  // (never read: checks the rest of the shape)
      shape.x.ld = 0;
      detail::RegressorAccess::check_batch_shape(r, shape, from_empty, what);
    }
    if (b.memory != Memory::host)
      throw Error(Errc::unavailable, fmt::format("{}: a batch spread over processes is read from host memory", what));
    if (!from_empty && detail::RegressorAccess::intercept_differs(r))
      throw Error(Errc::invalid_state,
                  fmt::format("{}: the state's fit_intercept differs from the configuration", what));
    mine.rows = b.x.rows;
    mine.cols = b.x.cols;
    mine.weights = b.weights != nullptr;
    mine.dtype = static_cast<std::int32_t>(b.dtype);
  });
  const std::vector<Part> parts = exchange->gather(mine);
  long long total = 0;
  bool weights = false, unweighted = false;
  for (const Part& part : parts) {
    total += part.rows;
    if (part.rows > 0) (part.weights ? weights : unweighted) = true;
  }
  for (size_t s = 0; s < parts.size(); ++s) {
    if (parts[s].cols != parts[0].cols)
      throw Error(Errc::invalid_argument, fmt::format("{}: process {} passes {} features, process 0 passes {}", what, s,
                                                      parts[s].cols, parts[0].cols));
  }
  if (weights && unweighted)
    throw Error(Errc::invalid_argument, fmt::format("{}: some processes pass sample weights and others do not", what));
  if (total == 0)
    throw Error(Errc::invalid_argument,
                fmt::format("{}: found array with 0 sample(s) over all {} processes while a minimum of 1 is "
                            "required",
                            what, parts.size()));
  exchange->begin(parts, weights, r.dtype());
  struct End {
    Exchange& e;
    ~End() { e.end(); }
  } end{*exchange};
  std::optional<Diagnostics> d;
  try {
    d = detail::RegressorAccess::engine(r, what).update(b, r.config(), from_empty);
  } catch (const Error&) {
    throw;  // raised alike on every process: from shared values, or through Exchange::agree
  } catch (const std::bad_alloc&) {
    throw Error(Errc::allocation_failed, fmt::format("{}: out of memory", what));
  } catch (const std::exception& e) {
    throw Error(Errc::device_error, fmt::format("{}: {}", what, e.what()));
  }
  return detail::RegressorAccess::committed(r, parts[0].cols, *d);
}

void Spread::save_checkpoint_file(const std::string& path) const {
  const_cast<Spread*>(this)->collectively([&] {
    if (exchange->rank() == 0) rh::save_checkpoint_file(*model, path);
  });
}

void Spread::load_checkpoint_file(const std::string& path) {
  rh::Regressor& m = *model;
  // Every process reads and validates the file first; only then does any model change, and a model that changed
  // goes back when another process could not load it.
  collectively([&] {
    const Checkpoint c = rh::read_checkpoint_file(path);
    if (c.dtype != m.dtype())
      throw Error(Errc::invalid_argument,
                  fmt::format("the checkpoint is {} but the model is {}", dtype_name(c.dtype), dtype_name(m.dtype())));
  });
  const Config config = m.config();
  const std::optional<State> before = m.fitted() ? std::optional<State>(m.state()) : std::nullopt;
  bool loaded = false;
  try {
    collectively([&] {
      rh::load_checkpoint_file(m, path);  // a new engine, which takes the batches spread like the old one
      loaded = true;
      detail::RegressorAccess::engine(m, "load_checkpoint_file").set_exchange(exchange.get());
    });
  } catch (const Error&) {
    if (loaded) {  // another process failed: this one goes back to what it had
      m.set_config(config);
      if (before) m.set_state(*before);
    }
    throw;
  }
}

struct Regressor::Impl {
  Spread spread;
  std::optional<rh::Regressor> model;
  explicit Impl(MPI_Comm comm) : spread(comm) {}
};

Regressor::Regressor(MPI_Comm comm, Space space, Dtype dtype, const Config& config, int device_id)
    : impl_(std::make_unique<Impl>(comm)) {
  impl_->spread.collectively([&] { impl_->model.emplace(space, dtype, config, device_id); });
  impl_->spread.attach(*impl_->model);
}

Regressor::~Regressor() = default;
Regressor::Regressor(Regressor&&) noexcept = default;
Regressor& Regressor::operator=(Regressor&&) noexcept = default;

rh::Regressor& Regressor::local() {
  if (!impl_) throw Error(Errc::invalid_state, "this rh::mpi::Regressor was moved from");
  return *impl_->model;
}
const rh::Regressor& Regressor::local() const { return const_cast<Regressor*>(this)->local(); }
int Regressor::rank() const { return impl_ ? impl_->spread.rank() : -1; }
int Regressor::size() const { return impl_ ? impl_->spread.size() : 0; }

const Diagnostics& Regressor::partial_fit(const Batch& rows) {
  local();
  return impl_->spread.update(rows, false, "partial_fit");
}

const Diagnostics& Regressor::fit(const Batch& rows) {
  local();
  return impl_->spread.update(rows, true, "fit");
}

void Regressor::save_checkpoint_file(const std::string& path) const {
  local();
  impl_->spread.save_checkpoint_file(path);
}

void Regressor::load_checkpoint_file(const std::string& path) {
  local();
  impl_->spread.load_checkpoint_file(path);
}

}  // namespace rh::mpi
