// Checkpoint encoding and decoding. The layout is fixed little-endian whatever the host (docs/abi.md, "Checkpoint
// format"); doubles are stored as their IEEE-754 bit patterns so a load restores them exactly.
#include "rh/checkpoint.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <fmt/format.h>
#include <limits>

#include "platform.hpp"
#include "rh/error.hpp"

namespace rh {

namespace {

constexpr std::array<std::uint8_t, 8> kMagic = {0x89, 'R', 'H', 'C', 'K', 'P', '\r', '\n'};
// Offsets of docs/abi.md's table; the fixed part ends where the coefficients start.
constexpr std::size_t kVersionOffset = 8;
constexpr std::size_t kTotalSizeOffset = 16;
constexpr std::size_t kPreambleSize = 24;  // magic, version, flags, total size: enough to locate everything else
// The configuration and the dtype, from offset 24: 56 bytes in format 1; format 2 adds inference and a reserved u32.
constexpr std::size_t config_size(std::uint32_t version) { return version >= 2 ? 64 : 56; }
constexpr std::size_t kChecksumSize = 4;
// n_features is the first state field of every format version, right after the configuration.
constexpr std::size_t features_offset(std::uint32_t version) { return kPreambleSize + config_size(version); }
// q² must not overflow: 2^30 coefficients would already make an 8-EiB checkpoint.
constexpr std::uint64_t kMaxCoefficients = std::uint64_t{1} << 30;
// Format codes (0 is never valid, like the C ABI's enums): a penalty is stored as its enum value + 1, the C ABI's
// RH_PENALTY_* code, whose numbers rh.h freezes (checked against the list in abi/src/structs.cpp).
constexpr std::uint32_t kDtypeF32 = 1, kDtypeF64 = 2;
std::uint32_t penalty_code(Penalty p) { return static_cast<std::uint32_t>(p) + 1; }

// CRC-32 as in zlib/PNG/Ethernet: reflected polynomial 0xEDB88320, initial value and final XOR 0xFFFFFFFF.
constexpr std::array<std::uint32_t, 256> make_crc_table() {
  std::array<std::uint32_t, 256> table{};
  for (std::uint32_t n = 0; n < 256; ++n) {
    std::uint32_t c = n;
    for (int k = 0; k < 8; ++k) c = (c & 1u) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    table[n] = c;
  }
  return table;
}
constexpr auto kCrcTable = make_crc_table();

std::uint32_t crc32(const std::uint8_t* data, std::size_t size) {
  std::uint32_t c = 0xFFFFFFFFu;
  for (std::size_t i = 0; i < size; ++i) c = kCrcTable[(c ^ data[i]) & 0xFFu] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

[[noreturn]] void corrupt(const std::string& message) {
  throw Error(Errc::corrupt_data, "checkpoint: " + message);
}

class Writer {
 public:
  explicit Writer(std::size_t size) { bytes_.reserve(size); }
  void u32(std::uint32_t v) {
    for (int i = 0; i < 4; ++i) bytes_.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  void u64(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) bytes_.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  void i32(std::int32_t v) { u32(static_cast<std::uint32_t>(v)); }
  void i64(std::int64_t v) { u64(static_cast<std::uint64_t>(v)); }
  void f64(double v) {
    std::uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    u64(bits);
  }
  void raw(const std::uint8_t* p, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) bytes_.push_back(p[i]);
  }
  std::vector<std::uint8_t>& bytes() { return bytes_; }

 private:
  std::vector<std::uint8_t> bytes_;
};

// Reads fields of a buffer whose length has already been checked against the layout.
class Reader {
 public:
  Reader(const std::uint8_t* data, std::size_t offset) : p_(data + offset) {}
  std::uint32_t u32() {
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<std::uint32_t>(p_[i]) << (8 * i);
    p_ += 4;
    return v;
  }
  std::uint64_t u64() {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<std::uint64_t>(p_[i]) << (8 * i);
    p_ += 8;
    return v;
  }
  std::int32_t i32() { return static_cast<std::int32_t>(u32()); }
  std::int64_t i64() { return static_cast<std::int64_t>(u64()); }
  double f64() {
    const std::uint64_t bits = u64();
    double v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
  }

 private:
  const std::uint8_t* p_;
};

bool read_bool(Reader& r, const char* field) {
  const std::uint32_t v = r.u32();
  if (v > 1) corrupt(fmt::format("{} must be 0 or 1 (found {})", field, v));
  return v == 1;
}

// The same validation as everywhere else, reported as corrupt data: the bytes, not the caller, are wrong.
template <class F>
void validated_as_data(F&& check) {
  try {
    check();
  } catch (const Error& e) {
    corrupt(e.what());
  }
}

void check_consistent(const Checkpoint& cp) {
  validate(cp.config);
  if (cp.dtype != Dtype::f32 && cp.dtype != Dtype::f64)
    throw Error(Errc::invalid_argument, fmt::format("unknown dtype enum value {}", static_cast<int>(cp.dtype)));
  validate_state(cp.state, cp.dtype);  // for float32 also: every value is a float
  if (cp.state.n_features > 0 && cp.state.fit_intercept != cp.config.fit_intercept)
    throw Error(Errc::invalid_state, fmt::format("the state has fit_intercept={} but the configuration has "
                                                 "fit_intercept={}",
                                                 cp.state.fit_intercept, cp.config.fit_intercept));
}

// The state's part of a checkpoint, from the field list RH_STATE_SCALARS / RH_STATE_ARRAYS (rh/types.hpp). Format
// `version` stores the fields whose `since` is at most `version`: the scalars in list order (std::int64_t and
// double in 8 bytes, bool in 4), zero-padded to a multiple of 8 bytes; one u64 length per array; the arrays' values.
constexpr std::size_t encoded_size(std::int64_t) { return 8; }
constexpr std::size_t encoded_size(double) { return 8; }
constexpr std::size_t encoded_size(bool) { return 4; }

void put(Writer& w, std::int64_t v) { w.i64(v); }
void put(Writer& w, double v) { w.f64(v); }
void put(Writer& w, bool v) { w.u32(v ? 1 : 0); }
void get(Reader& r, std::int64_t& v, const char*) { v = r.i64(); }
void get(Reader& r, double& v, const char*) { v = r.f64(); }
void get(Reader& r, bool& v, const char* field) { v = read_bool(r, field); }

std::size_t state_scalar_bytes(std::uint32_t version) {
  std::size_t bytes = 0;
#define RH_SCALAR_BYTES(type, name, init, since) \
  if ((since) <= version) bytes += encoded_size(type{});
  RH_STATE_SCALARS(RH_SCALAR_BYTES)
#undef RH_SCALAR_BYTES
  return (bytes + 7) / 8 * 8;
}

// One stored array: its name and rank (q or q×q values).
struct ArrayField {
  const char* name;
  int rank;
};
std::vector<ArrayField> stored_arrays(std::uint32_t version) {
  std::vector<ArrayField> out;
#define RH_STORED_ARRAY(name, rank, since) \
  if ((since) <= version) out.push_back({#name, rank});
  RH_STATE_ARRAYS(RH_STORED_ARRAY)
#undef RH_STORED_ARRAY
  return out;
}

std::uint64_t values_of(const ArrayField& a, std::uint64_t q) { return a.rank == 1 ? q : q * q; }

// Bytes of a checkpoint of format `version` with q coefficients.
std::size_t size_for(std::uint32_t version, std::uint64_t q) {
  std::size_t size = kPreambleSize + config_size(version) + state_scalar_bytes(version) + kChecksumSize;
  for (const ArrayField& a : stored_arrays(version)) size += 8 + 8 * values_of(a, q);
  return size;
}

void encode_state(Writer& w, const State& st) {
  std::size_t scalar_bytes = 0;
#define RH_PUT_SCALAR(type, name, init, since) \
  put(w, st.name);                             \
  scalar_bytes += encoded_size(type{});
  RH_STATE_SCALARS(RH_PUT_SCALAR)
#undef RH_PUT_SCALAR
  for (; scalar_bytes % 8 != 0; scalar_bytes += 4) w.u32(0);  // reserved
#define RH_PUT_LENGTH(name, rank, since) w.u64(st.name.size());
  RH_STATE_ARRAYS(RH_PUT_LENGTH)
#undef RH_PUT_LENGTH
#define RH_PUT_VALUES(name, rank, since) \
  for (double v : st.name) w.f64(v);
  RH_STATE_ARRAYS(RH_PUT_VALUES)
#undef RH_PUT_VALUES
}

// Reads the state of format `version` from r (positioned after the configuration); the buffer is `total` bytes,
// already checked against its declared size and checksum.
void decode_state(Reader& r, std::uint32_t version, std::uint64_t total, State& st) {
  std::size_t scalar_bytes = 0;
#define RH_GET_SCALAR(type, name, init, since) \
  if ((since) <= version) {                    \
    get(r, st.name, "state " #name);           \
    scalar_bytes += encoded_size(type{});      \
  }
  RH_STATE_SCALARS(RH_GET_SCALAR)
#undef RH_GET_SCALAR
  for (; scalar_bytes % 8 != 0; scalar_bytes += 4)
    if (r.u32() != 0) corrupt("a reserved field is not 0");
  const std::vector<ArrayField> arrays = stored_arrays(version);
  std::vector<std::uint64_t> lengths;
  for (std::size_t a = 0; a < arrays.size(); ++a) lengths.push_back(r.u64());
  // q is the first array's length; total == size bounds it by the real buffer length, so q² cannot overflow.
  const std::uint64_t q = lengths.at(0);
  if (q > total / 8 || q >= kMaxCoefficients) corrupt(fmt::format("{} coefficients cannot fit in {} bytes", q, total));
  for (std::size_t a = 1; a < arrays.size(); ++a)
    if (lengths[a] != values_of(arrays[a], q))
      corrupt(fmt::format("{} {} values for {} coefficients", lengths[a], arrays[a].name, q));
  if (total != size_for(version, q))
    corrupt(fmt::format("{} bytes for {} coefficients (expected {})", total, q, size_for(version, q)));
  // Arrays of this version are read; newer arrays start as zeros of their shape.
#define RH_GET_ARRAY(name, rank, since)                                          \
  st.name.assign(values_of(ArrayField{#name, rank}, q), 0.0);                   \
  if ((since) <= version)                                                         \
    for (auto& v : st.name) v = r.f64();
  RH_STATE_ARRAYS(RH_GET_ARRAY)
#undef RH_GET_ARRAY
}

// The magic and the format version: what must hold before any other field can be interpreted. Returns the version.
std::uint32_t check_preamble(const std::uint8_t* data, std::size_t size) {
  if (size < kMagic.size()) corrupt(fmt::format("truncated: {} bytes", size));
  if (std::memcmp(data, kMagic.data(), kMagic.size()) != 0) corrupt("not a renewable-huber checkpoint (bad magic)");
  if (size < kPreambleSize) corrupt(fmt::format("truncated: {} bytes", size));
  const std::uint32_t version = Reader(data, kVersionOffset).u32();
  if (version < oldest_checkpoint_format_version || version > checkpoint_format_version)
    throw Error(Errc::version_mismatch, fmt::format("checkpoint: format version {}, but this library reads versions "
                                                    "{} to {}",
                                                    version, oldest_checkpoint_format_version,
                                                    checkpoint_format_version));
  return version;
}

// Bytes before the first array value in format `version`: preamble, configuration, scalars and array lengths.
std::size_t fixed_size(std::uint32_t version) {
  return kPreambleSize + config_size(version) + state_scalar_bytes(version) + 8 * stored_arrays(version).size();
}

// The size the header declares, after checking it against the largest checkpoint of the declared p (p features and
// an intercept): a file reader never reads more than that, whatever the header claims. `fixed` holds
// fixed_size(version) bytes.
std::uint64_t declared_size(const std::uint8_t* fixed, std::uint32_t version) {
  const std::uint64_t total = Reader(fixed, kTotalSizeOffset).u64();
  const std::int64_t p = Reader(fixed, features_offset(version)).i64();
  if (p < 0) corrupt(fmt::format("n_features is negative ({})", p));
  if (static_cast<std::uint64_t>(p) >= kMaxCoefficients)
    corrupt(fmt::format("n_features {} is too large for a checkpoint", p));
  const std::uint64_t largest = size_for(version, p == 0 ? 0 : static_cast<std::uint64_t>(p) + 1);
  if (total > largest)
    corrupt(fmt::format("declares {} bytes, more than the {} bytes a checkpoint with {} features can have", total,
                        largest, p));
  return total;
}

}  // namespace

std::vector<std::uint8_t> encode_checkpoint(const Checkpoint& cp) {
  check_consistent(cp);
  const State st = complete_state(cp.state);
  const std::size_t total = size_for(checkpoint_format_version, st.coefficients.size());
  Writer w(total);
  w.raw(kMagic.data(), kMagic.size());
  w.u32(checkpoint_format_version);
  w.u32(0);  // flags: none defined
  w.u64(total);
  w.f64(cp.config.tau);
  w.f64(cp.config.lambda_scale);
  w.f64(cp.config.bandwidth_scale);
  w.f64(cp.config.tol);
  w.f64(cp.config.ridge);
  w.i32(cp.config.max_iter);
  w.u32(penalty_code(cp.config.penalty));
  w.u32(cp.config.fit_intercept ? 1 : 0);
  w.u32(cp.dtype == Dtype::f32 ? kDtypeF32 : kDtypeF64);
  w.u32(cp.config.inference ? 1 : 0);
  w.u32(0);  // reserved
  encode_state(w, st);
  w.u32(crc32(w.bytes().data(), w.bytes().size()));
  return std::move(w.bytes());
}

Checkpoint decode_checkpoint(const std::uint8_t* data, std::size_t size) {
  if (!data && size > 0) throw Error(Errc::invalid_argument, "checkpoint: the data is a null pointer");
  const std::uint32_t version = check_preamble(data, size);
  const std::uint64_t total = Reader(data, kTotalSizeOffset).u64();
  if (total < size_for(version, 0)) corrupt(fmt::format("declares {} bytes, less than the smallest checkpoint", total));
  if (size < total) corrupt(fmt::format("truncated: {} bytes of the declared {}", size, total));
  if (size > total) corrupt(fmt::format("{} bytes follow the declared end at {}", size - total, total));
  const std::uint32_t stored = Reader(data, total - kChecksumSize).u32();
  const std::uint32_t computed = crc32(data, total - kChecksumSize);
  if (stored != computed) corrupt(fmt::format("checksum mismatch (stored {:08x}, computed {:08x})", stored, computed));

  Reader r(data, kVersionOffset + 4);
  if (const std::uint32_t flags = r.u32(); flags != 0) corrupt(fmt::format("unknown flags {:#x}", flags));
  r.u64();  // total size, checked above
  Checkpoint cp;
  cp.format_version = version;
  cp.config.tau = r.f64();
  cp.config.lambda_scale = r.f64();
  cp.config.bandwidth_scale = r.f64();
  cp.config.tol = r.f64();
  cp.config.ridge = r.f64();
  cp.config.max_iter = r.i32();
  const std::uint32_t penalty = r.u32();
  const std::int64_t penalty_value = static_cast<std::int64_t>(penalty) - 1;
  if (penalty_value < 0 || penalty_value > INT32_MAX || !penalty_known(static_cast<Penalty>(penalty_value)))
    corrupt(fmt::format("unknown penalty code {}", penalty));
  cp.config.penalty = static_cast<Penalty>(penalty_value);
  cp.config.fit_intercept = read_bool(r, "config fit_intercept");
  const std::uint32_t dtype = r.u32();
  if (dtype != kDtypeF32 && dtype != kDtypeF64) corrupt(fmt::format("unknown dtype code {}", dtype));
  cp.dtype = dtype == kDtypeF32 ? Dtype::f32 : Dtype::f64;
  if (version >= 2) {  // format 1 has no inference: its models load with inference off
    cp.config.inference = read_bool(r, "config inference");
    if (r.u32() != 0) corrupt("a reserved field is not 0");
  }
  decode_state(r, version, total, cp.state);
  validated_as_data([&] { check_consistent(cp); });
  return cp;
}

// ---- Group checkpoints ------------------------------------------------------------------------------------------

namespace {

constexpr std::array<std::uint8_t, 8> kGroupMagic = {0x89, 'R', 'H', 'G', 'R', 'P', '\r', '\n'};
constexpr std::size_t kGroupHeaderSize = 40;  // magic, version, flags, total size, n_models, n_features

[[noreturn]] void corrupt_group(const std::string& message) {
  throw Error(Errc::corrupt_data, "group checkpoint: " + message);
}

// The magic and the format version of a group checkpoint (`size` bytes are there). Returns the version.
std::uint32_t check_group_preamble(const std::uint8_t* data, std::size_t size) {
  if (size < kGroupMagic.size()) corrupt_group(fmt::format("truncated: {} bytes", size));
  if (std::memcmp(data, kGroupMagic.data(), kGroupMagic.size()) != 0)
    corrupt_group("not a renewable-huber group checkpoint (bad magic)");
  if (size < kGroupHeaderSize) corrupt_group(fmt::format("truncated: {} bytes", size));
  const std::uint32_t version = Reader(data, kVersionOffset).u32();
  if (version < oldest_group_checkpoint_format_version || version > group_checkpoint_format_version)
    throw Error(Errc::version_mismatch,
                fmt::format("group checkpoint: format version {}, but this library reads versions {} to {}", version,
                            oldest_group_checkpoint_format_version, group_checkpoint_format_version));
  return version;
}

// The shape the header declares, checked: n_models >= 1 and 1 <= p <= group_max_coefficients. Returns the largest
// size a group checkpoint of that shape can have (each model's record at most a single-model checkpoint of q = p + 1
// in the newest format), so that a reader never reads past it; beyond what a size can express is corrupt too.
std::uint64_t largest_group_checkpoint(const std::uint8_t* header) {
  Reader r(header, 24);
  const std::uint64_t n_models = r.u64(), p = r.u64();
  if (n_models < 1) corrupt_group("it holds no model");
  if (p < 1 || p > static_cast<std::uint64_t>(group_max_coefficients))
    corrupt_group(fmt::format("n_features {} is outside a group's 1 to {}", p, group_max_coefficients));
  const std::uint64_t record = 8 + size_for(checkpoint_format_version, p + 1);
  if (n_models > (std::numeric_limits<std::uint64_t>::max() - kGroupHeaderSize - kChecksumSize) / record)
    corrupt_group(fmt::format("{} models cannot fit in a file", n_models));
  return kGroupHeaderSize + n_models * record + kChecksumSize;
}

}  // namespace

std::vector<std::uint8_t> encode_group_checkpoint(const GroupCheckpoint& g) {
  if (g.n_models < 1 || g.n_features < 1 || g.n_features > group_max_coefficients ||
      g.states.size() != static_cast<std::uint64_t>(g.n_models))
    throw Error(Errc::invalid_argument, fmt::format("group checkpoint: {} states of a group of {} models of {} "
                                                    "features",
                                                    g.states.size(), g.n_models, g.n_features));
  std::vector<std::vector<std::uint8_t>> records;
  std::size_t total = kGroupHeaderSize + kChecksumSize;
  for (std::size_t m = 0; m < g.states.size(); ++m) {
    const State& st = g.states[m];
    if (st.n_features != 0 && st.n_features != g.n_features)
      throw Error(Errc::invalid_state, fmt::format("group checkpoint: model {} has {} features, the group {}", m,
                                                   st.n_features, g.n_features));
    records.push_back(encode_checkpoint(Checkpoint{g.config, g.dtype, st}));
    total += 8 + records.back().size();
  }
  Writer w(total);
  w.raw(kGroupMagic.data(), kGroupMagic.size());
  w.u32(group_checkpoint_format_version);
  w.u32(0);  // flags: none defined
  w.u64(total);
  w.u64(static_cast<std::uint64_t>(g.n_models));
  w.u64(static_cast<std::uint64_t>(g.n_features));
  for (const std::vector<std::uint8_t>& record : records) {
    w.u64(record.size());
    w.raw(record.data(), record.size());
  }
  w.u32(crc32(w.bytes().data(), w.bytes().size()));
  return std::move(w.bytes());
}

GroupCheckpoint decode_group_checkpoint(const std::uint8_t* data, std::size_t size) {
  if (!data && size > 0) throw Error(Errc::invalid_argument, "group checkpoint: the data is a null pointer");
  check_group_preamble(data, size);
  const std::uint64_t total = Reader(data, kTotalSizeOffset).u64();
  if (total < kGroupHeaderSize + kChecksumSize)
    corrupt_group(fmt::format("declares {} bytes, less than the smallest group checkpoint", total));
  if (size < total) corrupt_group(fmt::format("truncated: {} bytes of the declared {}", size, total));
  if (size > total) corrupt_group(fmt::format("{} bytes follow the declared end at {}", size - total, total));
  const std::uint32_t stored = Reader(data, total - kChecksumSize).u32();
  const std::uint32_t computed = crc32(data, total - kChecksumSize);
  if (stored != computed)
    corrupt_group(fmt::format("checksum mismatch (stored {:08x}, computed {:08x})", stored, computed));
  Reader r(data, kVersionOffset + 4);
  if (const std::uint32_t flags = r.u32(); flags != 0) corrupt_group(fmt::format("unknown flags {:#x}", flags));
  if (total > largest_group_checkpoint(data))
    corrupt_group(fmt::format("declares {} bytes, more than its models can have", total));
  r.u64();  // total size, checked above
  GroupCheckpoint g;
  g.n_models = static_cast<std::int64_t>(r.u64());
  g.n_features = static_cast<std::int64_t>(r.u64());
  // Each record: its size, then a whole single-model checkpoint, decoded and validated by decode_checkpoint. Every
  // record must hold the same configuration and dtype (the bytes of the first record's, compared).
  std::size_t at = kGroupHeaderSize;
  const std::size_t end = total - kChecksumSize;
  const std::uint8_t* first = nullptr;
  std::uint64_t first_size = 0;
  for (std::int64_t m = 0; m < g.n_models; ++m) {
    if (end - at < 8) corrupt_group(fmt::format("model {} of {} is missing", m, g.n_models));
    const std::uint64_t length = Reader(data, at).u64();
    at += 8;
    if (length > end - at) corrupt_group(fmt::format("model {} declares {} bytes, past the end", m, length));
    const std::uint8_t* record = data + at;
    Checkpoint cp;
    try {
      cp = decode_checkpoint(record, static_cast<std::size_t>(length));
    } catch (const Error& e) {
      throw Error(e.code(), fmt::format("group checkpoint: model {}: {}", m, e.what()));
    }
    if (!first) {
      first = record;
      first_size = length;
      g.config = cp.config;
      g.dtype = cp.dtype;
      if (g.n_features + (g.config.fit_intercept ? 1 : 0) > group_max_coefficients)
        corrupt_group(fmt::format("{} features and an intercept are more than a group's {} coefficients",
                                  g.n_features, group_max_coefficients));
    } else {
      const std::uint32_t version = Reader(first, kVersionOffset).u32();
      const std::size_t settings = config_size(version);  // the configuration and dtype, from kPreambleSize
      if (cp.format_version != version || first_size < kPreambleSize + settings ||
          std::memcmp(first + kPreambleSize, record + kPreambleSize, settings) != 0)
        corrupt_group(fmt::format("model {} has another configuration or dtype than model 0", m));
    }
    if (cp.state.n_features != 0 && cp.state.n_features != g.n_features)
      corrupt_group(fmt::format("model {} has {} features, the group {}", m, cp.state.n_features, g.n_features));
    g.states.push_back(std::move(cp.state));
    at += static_cast<std::size_t>(length);
  }
  if (at != end) corrupt_group(fmt::format("{} bytes follow the last model", end - at));
  return g;
}

std::vector<std::uint8_t> save_checkpoint(const RegressorGroup& group) {
  GroupCheckpoint g{group.config(), group.dtype(), group.n_models(), group.n_features(), {}};
  for (std::int64_t m = 0; m < group.n_models(); ++m) g.states.push_back(group.state(m));
  return encode_group_checkpoint(g);
}

void save_checkpoint_file(const RegressorGroup& group, const std::string& path) {
  const std::vector<std::uint8_t> bytes = save_checkpoint(group);
  platform::replace_file(path, bytes.data(), bytes.size());
}

namespace {

void install(RegressorGroup& group, const GroupCheckpoint& g) {
  if (g.dtype != group.dtype())
    throw Error(Errc::invalid_argument, fmt::format("group checkpoint: it holds {} models, but this group is {}",
                                                    dtype_name(g.dtype), dtype_name(group.dtype())));
  // Build the replacement completely; the caller's group changes only by the final, non-throwing move.
  RegressorGroup loaded(group.space(), group.dtype(), g.config, g.n_models, g.n_features, group.device_id());
  for (std::int64_t m = 0; m < g.n_models; ++m) loaded.set_state(m, g.states[static_cast<std::size_t>(m)]);
  group = std::move(loaded);
}

}  // namespace

void load_checkpoint(RegressorGroup& group, const std::uint8_t* data, std::size_t size) {
  install(group, decode_group_checkpoint(data, size));
}

void load_checkpoint_file(RegressorGroup& group, const std::string& path) {
  install(group, read_group_checkpoint_file(path));
}

std::vector<std::uint8_t> save_checkpoint(const Regressor& model) {
  return encode_checkpoint(Checkpoint{model.config(), model.dtype(), model.state()});
}

void save_checkpoint_file(const Regressor& model, const std::string& path) {
  const std::vector<std::uint8_t> bytes = save_checkpoint(model);
  platform::replace_file(path, bytes.data(), bytes.size());
}

namespace {

// Appends to `bytes` what `file` holds next, up to `total` + 1 bytes in all (one more than declared, to detect
// trailing data), in chunks: memory grows with what the file really holds, not with what its header claims.
void read_declared(platform::InputFile& file, std::vector<std::uint8_t>& bytes, std::uint64_t total) {
  std::array<std::uint8_t, 65536> chunk;
  while (bytes.size() <= total) {
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(chunk.size(), total + 1 - bytes.size()));
    const std::size_t got = file.read(chunk.data(), want);
    bytes.insert(bytes.end(), chunk.data(), chunk.data() + got);
    if (got < want) break;  // end of file
  }
}

}  // namespace

GroupCheckpoint read_group_checkpoint_file(const std::string& path) {
  platform::InputFile file(path);
  // The header, then no more than the declared size, itself no more than the largest of the declared shape.
  std::vector<std::uint8_t> bytes(kGroupHeaderSize);
  bytes.resize(file.read(bytes.data(), bytes.size()));
  if (bytes.size() == kGroupHeaderSize) {
    check_group_preamble(bytes.data(), bytes.size());
    const std::uint64_t total = Reader(bytes.data(), kTotalSizeOffset).u64();
    const std::uint64_t largest = largest_group_checkpoint(bytes.data());
    if (total > largest)
      corrupt_group(fmt::format("declares {} bytes, more than the {} bytes a group of its shape can have", total,
                                largest));
    read_declared(file, bytes, total);
  }
  return decode_group_checkpoint(bytes.data(), bytes.size());
}

Checkpoint read_checkpoint_file(const std::string& path) {
  platform::InputFile file(path);
  // The preamble, then the rest of the fixed part of its version; then no more than the declared size (bounded by
  // the declared p) and one byte to detect trailing data. A lying header, a huge or a growing file is never read
  // whole.
  std::vector<std::uint8_t> bytes(kPreambleSize);
  bytes.resize(file.read(bytes.data(), bytes.size()));
  if (bytes.size() == kPreambleSize) {
    const std::uint32_t version = check_preamble(bytes.data(), bytes.size());
    const std::size_t fixed = fixed_size(version);
    bytes.resize(fixed);
    bytes.resize(kPreambleSize + file.read(bytes.data() + kPreambleSize, fixed - kPreambleSize));
    if (bytes.size() == fixed) {
      read_declared(file, bytes, declared_size(bytes.data(), version));
    }
  }
  return decode_checkpoint(bytes.data(), bytes.size());
}

namespace {

void install(Regressor& model, const Checkpoint& cp) {
  if (cp.dtype != model.dtype())
    throw Error(Errc::invalid_argument, fmt::format("checkpoint: it holds a {} model, but this model is {}",
                                                    dtype_name(cp.dtype), dtype_name(model.dtype())));
  Config config = cp.config;
  if (cp.format_version < 2) config.inference = model.config().inference && config.penalty == Penalty::none;
  // Build the replacement completely; the caller's model changes only by the final, non-throwing move.
  Regressor loaded(model.space(), model.dtype(), config, model.device_id());
  loaded.set_state(cp.state);
  model = std::move(loaded);
}

}  // namespace

void load_checkpoint(Regressor& model, const std::uint8_t* data, std::size_t size) {
  install(model, decode_checkpoint(data, size));
}

void load_checkpoint_file(Regressor& model, const std::string& path) { install(model, read_checkpoint_file(path)); }

}  // namespace rh
