// libFuzzer target: the checkpoint file reader and rh::load_checkpoint_file on arbitrary file contents.
// Properties: reading a file gives exactly the outcome of decoding its bytes (the same error code, or the same
// checkpoint); a load that fails leaves the model bit for bit as it was; a load that succeeds makes the model save
// exactly the file's bytes.
#include <cstdint>
#include <fstream>
#include <string>
#include <unistd.h>

#include "fuzz_support.hpp"
#include "rh/regressor.hpp"

namespace {

const std::string& scratch_path() {
  static const std::string path = [] {
    char name[] = "/tmp/rh-fuzz-checkpoint-XXXXXX";
    const int fd = ::mkstemp(name);
    if (fd < 0) rh_fuzz::violated("the fuzzer can create its scratch file");
    ::close(fd);
    return std::string(name);
  }();
  return path;
}

// A model of each dtype with a fitted state of its own, to load into.
rh::Regressor& model_of(rh::Dtype dtype) {
  auto make = [](rh::Dtype t) {
    auto* m = new rh::Regressor(rh::Space::serial, t);  // lives until the process ends
    const double x[] = {1, 2, 3, 4, 5, 6, 7, 8}, y[] = {1, 0, 2, 5};
    const float xf[] = {1, 2, 3, 4, 5, 6, 7, 8}, yf[] = {1, 0, 2, 5};
    if (t == rh::Dtype::f64)
      m->partial_fit(rh::host_batch(x, y, 4, 2));
    else
      m->partial_fit(rh::host_batch(xf, yf, 4, 2));
    return m;
  };
  static rh::Regressor* f64 = make(rh::Dtype::f64);
  static rh::Regressor* f32 = make(rh::Dtype::f32);
  return dtype == rh::Dtype::f64 ? *f64 : *f32;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = scratch_path();
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    if (!out) rh_fuzz::violated("the fuzzer can write its scratch file");
  }
  const rh_fuzz::Decoded from_file = rh_fuzz::outcome_of([&] { return rh::read_checkpoint_file(path); });
  const rh_fuzz::Decoded from_bytes = rh_fuzz::outcome_of([&] { return rh::decode_checkpoint(data, size); });
  if (from_file.ok != from_bytes.ok || from_file.code != from_bytes.code || from_file.canonical != from_bytes.canonical)
    rh_fuzz::violated("reading a file is decoding its bytes");

  for (rh::Dtype dtype : {rh::Dtype::f64, rh::Dtype::f32}) {
    rh::Regressor& m = model_of(dtype);
    const std::vector<std::uint8_t> before = rh::save_checkpoint(m);
    try {
      rh::load_checkpoint_file(m, path);
    } catch (const rh::Error&) {
      if (rh::save_checkpoint(m) != before) rh_fuzz::violated("a failed load leaves the model as it was");
      continue;
    }
    if (!from_bytes.ok) rh_fuzz::violated("a load succeeds only when the bytes decode");
    // A model reports an empty state (p = 0) with fit_intercept = true: without coefficients the flag means nothing,
    // and the file may hold either value.
    rh::Checkpoint expected = from_bytes.checkpoint;
    if (expected.state.n_features == 0) expected.state.fit_intercept = true;
    if (rh::save_checkpoint(m) != rh::encode_checkpoint(expected))
      rh_fuzz::violated("a loaded model saves the file's checkpoint");
    rh::load_checkpoint(m, before.data(), before.size());  // back to the fitted state for the next input
  }
  return 0;
}
