// libFuzzer target: sequences of C ABI calls with arbitrary arguments on one model and one model group (struct
// headers, enums, shapes, leading dimensions, NULL pointers, lengths, capacities, values, handles; for the group also
// row offsets, offsets lengths and model indices). Properties of every call:
//  - the status is a known one, never RH_INTERNAL_ERROR;
//  - on success rh_last_error() is ""; on failure it is "<function>: <reason>", and the model's (group's) message
//    repeats it;
//  - a failing call leaves the model (state, diagnostics, configuration, checkpoint bytes), or the group (checkpoint
//    bytes, configuration, every model's diagnostics and status), bit for bit as it was, and its output arguments
//    untouched.
// The harness never declares more memory than it passes: a call whose arguments would let the library read or
// write beyond the buffers given here (a valid but larger shape) is skipped, since that would be the caller's lie.
#include <array>
#include <cstdint>
#include <cstring>
#include <fuzzer/FuzzedDataProvider.h>
#include <string>
#include <vector>

#include "rh/rh.h"
#include "rh/types.hpp"  // RH_STATE_SCALARS: rh_state's scalar fields are the list's, by the same names

namespace {

[[noreturn]] void violated(const std::string& property) {
  std::fprintf(stderr, "property violated: %s\n", property.c_str());
  std::abort();
}

constexpr std::int64_t kCap = 64;  // elements in every data array; fits have at most kCap columns
constexpr std::int64_t kQ = kCap + 1;
constexpr std::size_t kCheckpointCap = 148 + 8 * kQ + 8 * kQ * kQ;
// A handle never handed out: handles are tokens counted from 1 by every create of the process, so a small invented
// value (it was 0x1234) is a live handle once that many models and groups were made in one fuzzing run.
constexpr std::uintptr_t kInvented = (std::uintptr_t{1} << 40) | 0x1234;
constexpr std::int64_t kGroupModels = 4, kGroupP = 3;  // the group: up to 4 models of the batches' plain 3 features
constexpr std::size_t kGroupCheckpointCap = 64 + kGroupModels * (8 + 148 + 8 * 4 + 8 * 16);

// A struct with room behind it: a larger struct_size (<= 4096, the library's bound) is real memory.
template <class T>
struct Padded {
  T s;
  unsigned char tail[4096];
};

struct Buffers {
  std::array<double, kCap> x, y, w;
  std::array<double, kCap + 1> out;
  std::array<double, kQ> coefficients;
  std::array<double, kQ * kQ> information;
  std::vector<std::uint8_t> checkpoint = std::vector<std::uint8_t>(kCheckpointCap);
};

std::int64_t pick_i64(FuzzedDataProvider& in) {
  switch (in.ConsumeIntegralInRange(0, 3)) {
    case 0:
    case 1: return in.ConsumeIntegralInRange<std::int64_t>(-2, 12);
    case 2:
      return in.PickValueInArray<std::int64_t>({0, -1, INT64_MIN, INT64_MAX, std::int64_t{1} << 31,
                                                std::int64_t{1} << 32, std::int64_t{1} << 62, 3037000500,
                                                -(std::int64_t{1} << 62), kCap, kCap + 1});
    default: return in.ConsumeIntegral<std::int64_t>();
  }
}

std::int32_t pick_enum(FuzzedDataProvider& in, std::int32_t valid) {
  // Mostly the valid one; otherwise 0 (never valid), any small value or anything.
  switch (in.ConsumeIntegralInRange(0, 5)) {
    case 0: return 0;
    case 1: return in.ConsumeIntegralInRange(-1, 4);
    case 2: return in.ConsumeIntegral<std::int32_t>();
    default: return valid;
  }
}

double pick_value(FuzzedDataProvider& in) {
  if (in.ConsumeBool()) return static_cast<double>(in.ConsumeIntegralInRange(-8, 8)) / 4;
  const std::uint64_t bits = in.ConsumeIntegral<std::uint64_t>();
  double v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

// How many scalar fields the state has (RH_STATE_SCALARS, rh/types.hpp).
#define RH_COUNT_SCALAR(type, name, init, since) +1
constexpr int kStateScalars = 0 RH_STATE_SCALARS(RH_COUNT_SCALAR);
#undef RH_COUNT_SCALAR

// A value for a scalar field of rh_state, by its C type: a count or size, a double, or a flag (int32: 0 or 1 valid).
void pick_into(FuzzedDataProvider& in, std::int64_t& v) { v = pick_i64(in); }
void pick_into(FuzzedDataProvider& in, double& v) { v = pick_value(in); }
void pick_into(FuzzedDataProvider& in, std::int32_t& flag) { flag = pick_enum(in, 1); }

// Sets scalar field k (in the list's order) of an rh_state to a value picked by its type.
void spoil_scalar(FuzzedDataProvider& in, rh_state& s, int k) {
  int i = 0;
#define RH_SPOIL_SCALAR(type, name, init, since) \
  if (i++ == k) pick_into(in, s.name);
  RH_STATE_SCALARS(RH_SPOIL_SCALAR)
#undef RH_SPOIL_SCALAR
}

// Spoils the header of an initialized struct now and then; returns the struct or, rarely, NULL.
template <class T>
T* spoil_header(FuzzedDataProvider& in, Padded<T>& p) {
  switch (in.ConsumeIntegralInRange(0, 7)) {
    case 0: p.s.abi_version = in.ConsumeIntegral<std::uint32_t>(); break;
    case 1: p.s.struct_size = in.PickValueInArray<std::uint32_t>({0, 8, sizeof(T) - 4, 4097, 1u << 31}); break;
    case 2:
      p.s.struct_size = static_cast<std::uint32_t>(sizeof(T) + in.ConsumeIntegralInRange(1, 64));
      if (in.ConsumeBool()) p.tail[in.ConsumeIntegralInRange(0, 63)] = in.ConsumeIntegral<std::uint8_t>();
      break;
    default: break;
  }
  return in.ConsumeIntegralInRange(0, 15) == 0 ? nullptr : &p.s;
}

template <class T>
T* header(FuzzedDataProvider& in, Padded<T>& p) {
  std::memset(&p, 0, sizeof p);
  RH_STRUCT_INIT(&p.s);
  return spoil_header(in, p);
}

// Every observable of a model, to compare before and after a failing call.
struct Snapshot {
  std::vector<std::uint8_t> checkpoint;
  rh_status diagnostics_status = RH_SUCCESS;
  rh_diagnostics diagnostics;
  rh_config config;
  bool operator==(const Snapshot& o) const {
    return checkpoint == o.checkpoint && diagnostics_status == o.diagnostics_status &&
           std::memcmp(&diagnostics, &o.diagnostics, sizeof diagnostics) == 0 &&
           std::memcmp(&config, &o.config, sizeof config) == 0;
  }
};

Snapshot snapshot(rh_model* m) {
  Snapshot s;
  std::int64_t size = 0;
  if (rh_model_save_checkpoint(m, nullptr, 0, &size) != RH_SUCCESS) violated("a live model can be saved");
  s.checkpoint.resize(static_cast<std::size_t>(size));
  if (rh_model_save_checkpoint(m, s.checkpoint.data(), size, &size) != RH_SUCCESS) violated("save");
  std::memset(&s.diagnostics, 0, sizeof s.diagnostics);
  RH_STRUCT_INIT(&s.diagnostics);
  s.diagnostics_status = rh_model_diagnostics(m, &s.diagnostics);
  std::memset(&s.config, 0, sizeof s.config);
  RH_STRUCT_INIT(&s.config);
  if (rh_model_get_config(m, &s.config) != RH_SUCCESS) violated("a live model has a configuration");
  return s;
}

// Every observable of a group, to compare before and after a failing call.
struct GroupSnapshot {
  std::vector<std::uint8_t> checkpoint;
  rh_config config;
  std::vector<rh_status> diagnostics_status, model_status;
  std::vector<rh_diagnostics> diagnostics;
  std::vector<std::string> messages;
  bool operator==(const GroupSnapshot& o) const {
    if (diagnostics.size() != o.diagnostics.size()) return false;
    for (std::size_t m = 0; m < diagnostics.size(); ++m)
      if (std::memcmp(&diagnostics[m], &o.diagnostics[m], sizeof diagnostics[m]) != 0) return false;
    return checkpoint == o.checkpoint && std::memcmp(&config, &o.config, sizeof config) == 0 &&
           diagnostics_status == o.diagnostics_status && model_status == o.model_status && messages == o.messages;
  }
};

GroupSnapshot snapshot(rh_group* g) {
  GroupSnapshot s;
  std::int64_t size = 0, n = 0;
  if (rh_group_save_checkpoint(g, nullptr, 0, &size) != RH_SUCCESS) violated("a live group can be saved");
  s.checkpoint.resize(static_cast<std::size_t>(size));
  if (rh_group_save_checkpoint(g, s.checkpoint.data(), size, &size) != RH_SUCCESS) violated("group save");
  std::memset(&s.config, 0, sizeof s.config);
  RH_STRUCT_INIT(&s.config);
  if (rh_group_get_config(g, &s.config) != RH_SUCCESS) violated("a live group has a configuration");
  if (rh_group_n_models(g, &n) != RH_SUCCESS || n < 1 || n > kGroupModels) violated("a group's model count");
  for (std::int64_t m = 0; m < n; ++m) {
    rh_diagnostics d;
    std::memset(&d, 0, sizeof d);
    RH_STRUCT_INIT(&d);
    s.diagnostics_status.push_back(rh_group_diagnostics(g, m, &d));
    s.diagnostics.push_back(d);
    rh_status status = RH_SUCCESS;
    char message[512];
    if (rh_group_model_status(g, m, &status, message, sizeof message) != RH_SUCCESS) violated("a model's status");
    s.model_status.push_back(status);
    s.messages.emplace_back(message);
  }
  return s;
}

const char* last_error_of(const rh_model* m) { return rh_model_last_error(m); }
const char* last_error_of(const rh_group* g) { return rh_group_last_error(g); }

// Could the library, honouring the arguments, touch memory beyond this harness's arrays? Then the call is skipped.
bool beyond_buffers(const rh_batch& b) {
  if (b.rows < 1 || b.cols < 1 || b.ld < 0) return false;  // refused before anything is read
  if (b.rows > kCap || b.cols > kCap) return true;
  const __int128 rows = b.rows, cols = b.cols, ld = b.ld;
  const __int128 row_major = (rows - 1) * (ld > cols ? ld : cols) + cols;
  const __int128 col_major = (cols - 1) * (ld > rows ? ld : rows) + rows;
  return row_major > kCap || col_major > kCap;
}

rh_batch* batch(FuzzedDataProvider& in, Padded<rh_batch>& p, Buffers& buf, bool& skip) {
  rh_batch* b = header(in, p);
  p.s.x = in.ConsumeIntegralInRange(0, 15) == 0 ? nullptr : buf.x.data();
  p.s.y = in.ConsumeIntegralInRange(0, 15) == 0 ? nullptr : buf.y.data();
  p.s.weights = in.ConsumeBool() ? nullptr : buf.w.data();
  const bool plain = in.ConsumeBool();  // a shape the model takes: rows x its p, tight
  p.s.rows = plain ? in.ConsumeIntegralInRange<std::int64_t>(1, kCap / 4) : pick_i64(in);
  p.s.cols = plain ? 3 : pick_i64(in);
  p.s.ld = plain ? 0 : pick_i64(in);
  p.s.layout = pick_enum(in, in.ConsumeBool() ? RH_LAYOUT_ROW_MAJOR : RH_LAYOUT_COL_MAJOR);
  p.s.dtype = pick_enum(in, RH_DTYPE_F64);
  p.s.memory = pick_enum(in, RH_MEMORY_HOST);
  if (in.ConsumeIntegralInRange(0, 15) == 0) p.s.reserved0 = in.ConsumeIntegral<std::int32_t>();
  // A few values spoiled: NaN, Inf, negative weights, ... (float32 batches read the same bytes as floats).
  for (int k = in.ConsumeIntegralInRange(0, 3); k > 0; --k) {
    std::array<double, kCap>* a = in.PickValueInArray({&buf.x, &buf.y, &buf.w});
    (*a)[in.ConsumeIntegralInRange<std::size_t>(0, kCap - 1)] = pick_value(in);
  }
  skip = beyond_buffers(p.s);
  return b;
}

// The bytes of a load: `bytes` (the object's own checkpoint) with a few bytes spoiled, or raw bytes from the input (at
// most `most`), and the size to pass, mostly theirs; false when that size would claim more than the bytes here.
bool checkpoint_to_load(FuzzedDataProvider& in, std::vector<std::uint8_t>& bytes, std::size_t most, std::int64_t& size) {
  if (in.ConsumeBool()) {
    bytes = in.ConsumeBytes<std::uint8_t>(in.ConsumeIntegralInRange<std::size_t>(0, most));
  } else {
    for (int k = in.ConsumeIntegralInRange(0, 3); k > 0; --k)
      bytes[in.ConsumeIntegralInRange<std::size_t>(0, bytes.size() - 1)] = in.ConsumeIntegral<std::uint8_t>();
  }
  size = static_cast<std::int64_t>(bytes.size());
  if (in.ConsumeIntegralInRange(0, 7) == 0) size = pick_i64(in);
  return size <= static_cast<std::int64_t>(bytes.size());
}

void fill_data(Buffers& buf) {
  for (std::int64_t i = 0; i < kCap; ++i) {
    const auto k = static_cast<std::size_t>(i);
    buf.x[k] = static_cast<double>((i * 7) % 13) / 4 - 1.5;
    buf.y[k] = static_cast<double>((i * 5) % 11) / 2 - 2.0;
    buf.w[k] = 1.0 + static_cast<double>(i % 3);
  }
}

// Checks the status and the messages of one call, and that a failure changed nothing; after a success on the model
// or group `h` (NULL: the call had none), `current` becomes its new snapshot (one snapshot per call).
template <class Handle, class Snap>
void check_call(const char* function, rh_status status, Handle* h, Snap& current) {
  if (status < RH_SUCCESS || status > RH_INTERNAL_ERROR) violated(std::string(function) + ": unknown status");
  if (status == RH_INTERNAL_ERROR) violated(std::string(function) + ": internal error: " + rh_last_error());
  const std::string message = rh_last_error();
  if (status == RH_SUCCESS) {
    if (!message.empty()) violated(std::string(function) + ": a success leaves a message");
    if (h) current = snapshot(h);
    return;
  }
  if (message.rfind(std::string(function) + ": ", 0) != 0) violated(std::string(function) + ": message " + message);
  if (h) {
    if (last_error_of(h) != message) violated(std::string(function) + ": the model's (group's) message differs");
    if (!(snapshot(h) == current)) violated(std::string(function) + " failed but changed the model (group)");
  }
}

// How many values rh_space_name / rh_penalty_name know (they are 1 .. that count): the valid choices come from the
// library's own lists, so every penalty and every known space is tried.
std::int32_t known_count(rh_status (*name_of)(std::int32_t, const char**)) {
  const char* name = nullptr;
  std::int32_t count = 0;
  while (name_of(count + 1, &name) == RH_SUCCESS) ++count;
  return count;
}

rh_model* create(FuzzedDataProvider& in) {
  static const std::int32_t penalties = known_count(rh_penalty_name), spaces = known_count(rh_space_name);
  Padded<rh_config> p;
  std::memset(&p, 0, sizeof p);
  RH_STRUCT_INIT(&p.s);
  if (rh_config_init(&p.s) != RH_SUCCESS) violated("rh_config_init");
  p.s.space = RH_SPACE_SERIAL;
  rh_config* c = spoil_header(in, p);
  for (int k = in.ConsumeIntegralInRange(0, 2); k > 0; --k) {
    switch (in.ConsumeIntegralInRange(0, 12)) {
      case 0: p.s.tau = pick_value(in); break;
      case 1: p.s.lambda_scale = pick_value(in); break;
      case 2: p.s.bandwidth_scale = pick_value(in); break;
      case 3: p.s.tol = pick_value(in); break;
      case 4: p.s.ridge = pick_value(in); break;
      case 5: p.s.penalty = pick_enum(in, in.ConsumeIntegralInRange<std::int32_t>(1, penalties)); break;
      case 6: p.s.fit_intercept = pick_enum(in, 0); break;
      // Bounded: a valid max_iter of 2^31 with a tolerance never met is a legitimate call that runs for hours.
      case 7: p.s.max_iter = in.ConsumeIntegralInRange<std::int32_t>(-2, 300); break;
      case 8: p.s.dtype = pick_enum(in, RH_DTYPE_F32); break;
      case 9: p.s.space = pick_enum(in, in.ConsumeIntegralInRange<std::int32_t>(1, spaces)); break;
      case 10: p.s.device_id = pick_enum(in, 0); break;
      case 11: p.s.host_threads = pick_enum(in, 1); break;  // ignored: the runtime started in LLVMFuzzerInitialize
      default: p.s.reserved0 = in.ConsumeIntegral<std::int32_t>(); break;
    }
  }
  rh_model* sentinel = reinterpret_cast<rh_model*>(std::uintptr_t{0x5eed});
  rh_model* m = sentinel;
  const std::uint32_t version = in.ConsumeIntegralInRange(0, 15) == 0 ? in.ConsumeIntegral<std::uint32_t>()
                                                                       : RH_ABI_VERSION;
  const rh_status s = rh_model_create(version, c ? &p.s : nullptr, in.ConsumeIntegralInRange(0, 31) ? &m : nullptr);
  Snapshot none;
  check_call("rh_model_create", s, static_cast<rh_model*>(nullptr), none);
  if (s != RH_SUCCESS) {
    if (m != sentinel) violated("a failed create wrote its output");
    return nullptr;
  }
  return m;
}

void one_call(FuzzedDataProvider& in, rh_model* m, Buffers& buf, Snapshot& before) {
  Padded<rh_batch> pb;
  Padded<rh_diagnostics> pd;
  Padded<rh_state> ps;
  Padded<rh_config> pc;
  bool skip = false;
  switch (in.ConsumeIntegralInRange(0, 11)) {
    case 0:
    case 1: {
      const bool fit = in.ConsumeIntegralInRange(0, 3) == 0;
      const rh_batch* b = batch(in, pb, buf, skip);
      rh_diagnostics* d = in.ConsumeBool() ? nullptr : header(in, pd);
      if (skip) return;
      const rh_status s = fit ? rh_model_fit(m, b, d) : rh_model_partial_fit(m, b, d);
      check_call(fit ? "rh_model_fit" : "rh_model_partial_fit", s, m, before);
      return;
    }
    case 2: {
      const rh_batch* b = batch(in, pb, buf, skip);
      double* out = in.ConsumeIntegralInRange(0, 15) == 0 ? nullptr : buf.out.data();
      const std::int64_t length = in.ConsumeBool() ? static_cast<std::int64_t>(buf.out.size()) : pick_i64(in);
      if (skip) return;
      buf.out.fill(-7.0);
      const rh_status s = rh_model_predict(m, b, out, length);
      check_call("rh_model_predict", s, m, before);
      if (s != RH_SUCCESS)
        for (double v : buf.out)
          if (v != -7.0) violated("a failed predict wrote its output");
      return;
    }
    case 3: {
      const rh_batch* b = batch(in, pb, buf, skip);
      double r2 = -7.0;
      double* out = in.ConsumeIntegralInRange(0, 15) == 0 ? nullptr : &r2;
      if (skip) return;
      const rh_status s = rh_model_score(m, b, out);
      check_call("rh_model_score", s, m, before);
      if (s != RH_SUCCESS && r2 != -7.0) violated("a failed score wrote its output");
      return;
    }
    case 4:
    case 5: {  // get_state with fuzzed capacities, or set_state of the model's own state with fields spoiled
      const bool set = in.ConsumeBool();
      rh_state* st = header(in, ps);
      ps.s.coefficients = in.ConsumeIntegralInRange(0, 7) == 0 ? nullptr : buf.coefficients.data();
      ps.s.information = in.ConsumeIntegralInRange(0, 7) == 0 ? nullptr : buf.information.data();
      ps.s.coefficients_length = kQ;
      ps.s.information_length = kQ * kQ;
      if (set) {
        rh_state own;
        RH_STRUCT_INIT(&own);
        own.coefficients = buf.coefficients.data();
        own.information = buf.information.data();
        own.coefficients_length = kQ;
        own.information_length = kQ * kQ;
        if (rh_model_get_state(m, &own) != RH_SUCCESS) violated("a live model has a state");
        ps.s.coefficients_length = own.coefficients_length;
        ps.s.information_length = own.information_length;
#define RH_COPY_SCALAR(type, name, init, since) ps.s.name = own.name;
        RH_STATE_SCALARS(RH_COPY_SCALAR)
#undef RH_COPY_SCALAR
        for (int k = in.ConsumeIntegralInRange(0, 3); k > 0; --k) {
          const int what = in.ConsumeIntegralInRange(0, kStateScalars + 3);
          switch (what) {
            case 0: ps.s.coefficients_length = pick_i64(in); break;
            case 1: ps.s.information_length = pick_i64(in); break;
            case 2: buf.coefficients[in.ConsumeIntegralInRange<std::size_t>(0, kQ - 1)] = pick_value(in); break;
            case 3: buf.information[in.ConsumeIntegralInRange<std::size_t>(0, kQ * kQ - 1)] = pick_value(in); break;
            default: spoil_scalar(in, ps.s, what - 4); break;
          }
        }
        if (in.ConsumeIntegralInRange(0, 15) == 0) ps.s.reserved0 = 1;
      } else {
        if (in.ConsumeBool()) ps.s.coefficients_length = pick_i64(in);
        if (in.ConsumeBool()) ps.s.information_length = pick_i64(in);
      }
      // Lengths beyond the arrays here would be a lie about them.
      if ((ps.s.coefficients && ps.s.coefficients_length > kQ) ||
          (ps.s.information && ps.s.information_length > kQ * kQ))
        return;
      const Padded<rh_state> unchanged = ps;
      const rh_status s = set ? rh_model_set_state(m, st) : rh_model_get_state(m, st);
      check_call(set ? "rh_model_set_state" : "rh_model_get_state", s, m, before);
      if (!set && s != RH_SUCCESS && std::memcmp(&ps, &unchanged, sizeof ps) != 0)
        violated("a failed get_state wrote its output");
      return;
    }
    case 6: {
      void* out = in.ConsumeBool() ? nullptr : buf.checkpoint.data();
      const std::int64_t capacity = in.ConsumeBool() ? static_cast<std::int64_t>(buf.checkpoint.size()) : pick_i64(in);
      std::int64_t size = -7;
      std::int64_t* size_out = in.ConsumeIntegralInRange(0, 15) == 0 ? nullptr : &size;
      if (out && capacity > static_cast<std::int64_t>(buf.checkpoint.size())) return;
      const rh_status s = rh_model_save_checkpoint(m, out, capacity, size_out);
      check_call("rh_model_save_checkpoint", s, m, before);
      if (s != RH_SUCCESS && size != -7) violated("a failed save wrote its size");
      return;
    }
    case 7: {  // the model's own checkpoint with a few bytes spoiled, or raw bytes from the input
      std::vector<std::uint8_t> bytes = before.checkpoint;
      std::int64_t size = 0;
      if (!checkpoint_to_load(in, bytes, 512, size)) return;
      const rh_status s = rh_model_load_checkpoint(m, in.ConsumeIntegralInRange(0, 15) ? bytes.data() : nullptr, size);
      check_call("rh_model_load_checkpoint", s, m, before);
      return;
    }
    case 8: {
      rh_diagnostics* d = header(in, pd);
      const Padded<rh_diagnostics> unchanged = pd;
      const rh_status s = rh_model_diagnostics(m, d);
      check_call("rh_model_diagnostics", s, m, before);
      if (s != RH_SUCCESS && std::memcmp(&pd, &unchanged, sizeof pd) != 0) violated("a failed diagnostics wrote");
      return;
    }
    case 9: {
      rh_config* c = header(in, pc);
      const Padded<rh_config> unchanged = pc;
      const rh_status s = rh_model_get_config(m, c);
      check_call("rh_model_get_config", s, m, before);
      if (s != RH_SUCCESS && std::memcmp(&pc, &unchanged, sizeof pc) != 0) violated("a failed get_config wrote");
      return;
    }
    case 10: check_call("rh_model_reset", rh_model_reset(m), m, before); return;
    default: {  // a dead, invented or NULL handle changes nothing anywhere
      rh_model* other = in.PickValueInArray<rh_model*>(
          {nullptr, reinterpret_cast<rh_model*>(kInvented), reinterpret_cast<rh_model*>(~std::uintptr_t{0})});
      const rh_status s = rh_model_reset(other);
      if (s != RH_INVALID_ARGUMENT) violated("a dead handle is RH_INVALID_ARGUMENT");
      check_call("rh_model_reset", s, static_cast<rh_model*>(nullptr), before);
      if (!(snapshot(m) == before)) violated("a call on another handle changed the model");
      return;
    }
  }
}

// ---- The model group: rh_group_* ----

// A group of the model's configuration (its dtype, penalty, ...), with a fuzzed model count and feature count
// (mostly 3, the batches' plain shape); NULL when refused.
rh_group* create_group(FuzzedDataProvider& in, rh_model* m) {
  Padded<rh_config> p;
  std::memset(&p, 0, sizeof p);
  RH_STRUCT_INIT(&p.s);
  if (rh_model_get_config(m, &p.s) != RH_SUCCESS) violated("a live model has a configuration");
  rh_config* c = spoil_header(in, p);
  const std::int64_t n_models = in.ConsumeIntegralInRange(0, 7) ? in.ConsumeIntegralInRange<std::int64_t>(1, kGroupModels)
                                                                  : pick_i64(in);
  const std::int64_t features = in.ConsumeIntegralInRange(0, 7) ? kGroupP : pick_i64(in);
  if (n_models > kGroupModels || features > kCap) return nullptr;  // a valid but larger group than the buffers here
  rh_group* sentinel = reinterpret_cast<rh_group*>(std::uintptr_t{0x5eed});
  rh_group* g = sentinel;
  const rh_status s = rh_group_create(RH_ABI_VERSION, c ? &p.s : nullptr, n_models, features,
                                      in.ConsumeIntegralInRange(0, 31) ? &g : nullptr);
  GroupSnapshot none;
  check_call("rh_group_create", s, static_cast<rh_group*>(nullptr), none);
  if (s != RH_SUCCESS) {
    if (g != sentinel) violated("a failed group create wrote its output");
    return nullptr;
  }
  return g;
}

// Row offsets for `rows` rows: mostly valid (a split of the rows, some models empty), else spoiled values; the
// array always holds kGroupModels + 1 values, and the length passed is the group's n_models + 1 or fuzzed.
std::int64_t offsets_for(FuzzedDataProvider& in, std::int64_t rows, std::int64_t n_models,
                         std::array<std::int64_t, kGroupModels + 1>& offsets) {
  offsets.fill(0);
  const std::int64_t valid_rows = rows >= 0 && rows <= kCap ? rows : 0;
  for (std::int64_t m = 1; m <= n_models; ++m)
    offsets[static_cast<std::size_t>(m)] =
        m == n_models ? valid_rows
                      : in.ConsumeIntegralInRange<std::int64_t>(offsets[static_cast<std::size_t>(m - 1)], valid_rows);
  for (int k = in.ConsumeIntegralInRange(0, 3) == 0 ? in.ConsumeIntegralInRange(1, 2) : 0; k > 0; --k)
    offsets[in.ConsumeIntegralInRange<std::size_t>(0, kGroupModels)] = pick_i64(in);
  const std::int64_t length = in.ConsumeIntegralInRange(0, 7) ? n_models + 1 : pick_i64(in);
  return length;
}

void one_group_call(FuzzedDataProvider& in, rh_group* g, Buffers& buf, GroupSnapshot& before) {
  Padded<rh_batch> pb;
  Padded<rh_diagnostics> pd;
  Padded<rh_state> ps;
  bool skip = false;
  std::array<std::int64_t, kGroupModels + 1> offsets;
  const std::int64_t n_models = static_cast<std::int64_t>(before.diagnostics.size());
  const std::int64_t model = in.ConsumeIntegralInRange(0, 7) ? in.ConsumeIntegralInRange<std::int64_t>(0, n_models - 1)
                                                             : pick_i64(in);
  switch (in.ConsumeIntegralInRange(0, 8)) {
    case 0:
    case 1: {  // a ragged batch: its shape, its offsets and their length fuzzed
      const rh_batch* b = batch(in, pb, buf, skip);
      const std::int64_t length = offsets_for(in, pb.s.rows, n_models, offsets);
      const std::int64_t* o = in.ConsumeIntegralInRange(0, 15) ? offsets.data() : nullptr;
      std::int64_t committed = -7;
      std::int64_t* committed_out = in.ConsumeIntegralInRange(0, 7) ? &committed : nullptr;
      if (skip || (o && length > kGroupModels + 1)) return;  // more offsets than the array holds: a lie
      const rh_status s = rh_group_partial_fit(g, b, o, length, committed_out);
      check_call("rh_group_partial_fit", s, g, before);
      if (s != RH_SUCCESS && committed != -7) violated("a failed group partial_fit wrote its count");
      if (s == RH_SUCCESS && committed_out && (committed < 0 || committed > n_models))
        violated("a group partial_fit's count");
      return;
    }
    case 2: {
      const rh_batch* b = batch(in, pb, buf, skip);
      const std::int64_t length = offsets_for(in, pb.s.rows, n_models, offsets);
      double* out = in.ConsumeIntegralInRange(0, 15) == 0 ? nullptr : buf.out.data();
      const std::int64_t out_length = in.ConsumeBool() ? static_cast<std::int64_t>(buf.out.size()) : pick_i64(in);
      if (skip || length > kGroupModels + 1) return;
      buf.out.fill(-7.0);
      const rh_status s = rh_group_predict(g, b, offsets.data(), length, out, out_length);
      check_call("rh_group_predict", s, g, before);
      if (s != RH_SUCCESS)
        for (double v : buf.out)
          if (v != -7.0) violated("a failed group predict wrote its output");
      return;
    }
    case 3: {  // one model's state out, with fuzzed capacities, or its own state back in with fields spoiled
      const bool set = in.ConsumeBool();
      rh_state* st = header(in, ps);
      ps.s.coefficients = in.ConsumeIntegralInRange(0, 7) == 0 ? nullptr : buf.coefficients.data();
      ps.s.information = in.ConsumeIntegralInRange(0, 7) == 0 ? nullptr : buf.information.data();
      ps.s.coefficients_length = in.ConsumeBool() ? kQ : pick_i64(in);
      ps.s.information_length = in.ConsumeBool() ? kQ * kQ : pick_i64(in);
      if (set) {
        rh_state own;
        RH_STRUCT_INIT(&own);
        own.coefficients = buf.coefficients.data();
        own.information = buf.information.data();
        own.coefficients_length = kQ;
        own.information_length = kQ * kQ;
        if (rh_group_get_state(g, model >= 0 && model < n_models ? model : 0, &own) != RH_SUCCESS)
          violated("a live group's model has a state");
        ps.s = own;
        const int what = in.ConsumeIntegralInRange(0, kStateScalars + 1);  // as the model's set_state case
        switch (what) {
          case 0: ps.s.coefficients_length = pick_i64(in); break;
          case 1: buf.coefficients[in.ConsumeIntegralInRange<std::size_t>(0, kQ - 1)] = pick_value(in); break;
          default: spoil_scalar(in, ps.s, what - 2); break;
        }
      }
      if ((ps.s.coefficients && ps.s.coefficients_length > kQ) ||
          (ps.s.information && ps.s.information_length > kQ * kQ))
        return;  // lengths beyond the arrays here would be a lie about them
      const Padded<rh_state> unchanged = ps;
      const rh_status s = set ? rh_group_set_state(g, model, st) : rh_group_get_state(g, model, st);
      check_call(set ? "rh_group_set_state" : "rh_group_get_state", s, g, before);
      if (!set && s != RH_SUCCESS && std::memcmp(&ps, &unchanged, sizeof ps) != 0)
        violated("a failed group get_state wrote its output");
      return;
    }
    case 4: {
      rh_diagnostics* d = header(in, pd);
      const Padded<rh_diagnostics> unchanged = pd;
      const rh_status s = rh_group_diagnostics(g, model, d);
      check_call("rh_group_diagnostics", s, g, before);
      if (s != RH_SUCCESS && std::memcmp(&pd, &unchanged, sizeof pd) != 0) violated("a failed group diagnostics wrote");
      return;
    }
    case 5: {
      rh_status status = static_cast<rh_status>(-7);
      char message[64];
      std::memset(message, 'x', sizeof message);
      rh_status* status_out = in.ConsumeIntegralInRange(0, 15) ? &status : nullptr;
      char* message_out = in.ConsumeBool() ? nullptr : message;
      const std::int64_t capacity = in.ConsumeBool() ? static_cast<std::int64_t>(sizeof message) : pick_i64(in);
      if (message_out && capacity > static_cast<std::int64_t>(sizeof message)) return;
      const rh_status s = rh_group_model_status(g, model, status_out, message_out, capacity);
      check_call("rh_group_model_status", s, g, before);
      if (s != RH_SUCCESS && (status != static_cast<rh_status>(-7) || message[0] != 'x'))
        violated("a failed group model_status wrote its output");
      return;
    }
    case 6: {  // the group's own checkpoint with a few bytes spoiled, or raw bytes from the input
      std::vector<std::uint8_t> bytes = before.checkpoint;
      std::int64_t size = 0;
      if (!checkpoint_to_load(in, bytes, kGroupCheckpointCap, size)) return;
      const rh_status s = rh_group_load_checkpoint(g, in.ConsumeIntegralInRange(0, 15) ? bytes.data() : nullptr, size);
      check_call("rh_group_load_checkpoint", s, g, before);
      return;
    }
    case 7: check_call("rh_group_reset", rh_group_reset(g, model), g, before); return;
    default: {  // a dead, invented or NULL group handle changes nothing anywhere
      rh_group* other = in.PickValueInArray<rh_group*>(
          {nullptr, reinterpret_cast<rh_group*>(kInvented), reinterpret_cast<rh_group*>(~std::uintptr_t{0})});
      const rh_status s = rh_group_reset(other, 0);
      if (s != RH_INVALID_ARGUMENT) violated("a dead group handle is RH_INVALID_ARGUMENT");
      check_call("rh_group_reset", s, static_cast<rh_group*>(nullptr), before);
      if (!(snapshot(g) == before)) violated("a call on another handle changed the group");
      return;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // One host thread: a later config's host_threads is then ignored, as docs/abi.md says.
  if (rh_init(RH_ABI_VERSION, 1, -1) != RH_SUCCESS) violated("rh_init");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  static Buffers buf;
  fill_data(buf);
  rh_model* m = create(in);
  if (!m) return 0;
  Snapshot current = snapshot(m);
  for (int calls = 0; calls < 8 && in.remaining_bytes() > 0; ++calls) one_call(in, m, buf, current);
  // Then, with the bytes left (the model's calls read an input as before), a group of the model's configuration.
  if (rh_group* g = in.remaining_bytes() > 0 ? create_group(in, m) : nullptr) {
    GroupSnapshot group_current = snapshot(g);
    for (int calls = 0; calls < 8 && in.remaining_bytes() > 0; ++calls) one_group_call(in, g, buf, group_current);
    if (rh_group_destroy(g) != RH_SUCCESS) violated("group destroy");
  }
  if (rh_model_destroy(m) != RH_SUCCESS) violated("destroy");
  return 0;
}
