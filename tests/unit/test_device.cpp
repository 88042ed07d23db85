// Device-resident data on spaces with their own memory (CUDA): the same results as host input, the memory
// space checked in both directions, and predictions written straight to device memory.
#include <Kokkos_Core.hpp>

#include "support.hpp"

using namespace rh;
using namespace rh::test;

namespace {

using DeviceMemory = Kokkos::DefaultExecutionSpace::memory_space;

template <class S>
Kokkos::View<S*, DeviceMemory> to_device(const std::vector<S>& v) {
  Kokkos::View<S*, DeviceMemory> d("test_device_array", v.size());
  Kokkos::deep_copy(d, Kokkos::View<const S*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(v.data(), v.size()));
  return d;
}

template <class S>
void device_round_trip(Space space) {
  Data d = linear_data(3000, 9, 21, 1.0);
  d.w.assign(static_cast<size_t>(d.n), 1.0);
  for (long long i = 0; i < d.n; i += 3) d.w[static_cast<size_t>(i)] = 0.5;
  const TypedBatch host = make_batch(d, dtype_of<S>());
  const auto [hx, hy, hw] = arrays_of<S>(host);
  auto dx = to_device(hx), dy = to_device(hy), dw = to_device(hw);
  Batch device = host.batch;
  device.x.data = dx.data();
  device.y = dy.data();
  device.weights = dw.data();
  device.memory = Memory::device;

  Regressor from_host(space, dtype_of<S>()), from_device(space, dtype_of<S>());
  from_host.partial_fit(host.batch);
  from_device.partial_fit(device);
  CHECK(same_state(from_host.state(), from_device.state()));  // same kernels after the copy: bitwise

  Kokkos::View<S*, DeviceMemory> out("test_predictions", d.n);
  from_device.predict(device.x, out.data(), dtype_of<S>(), Memory::device);
  auto out_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
  const auto want = from_host.predict(hx.data(), d.n, d.p);
  for (long long i = 0; i < d.n; ++i) CHECK(out_host(i) == want[static_cast<size_t>(i)]);

  // The memory space is checked, never guessed: a host pointer claimed as device memory, and the reverse.
  const State before = from_device.state();
  Batch lie = host.batch;
  lie.memory = Memory::device;
  CHECK_THROWS_AS(from_device.partial_fit(lie), Error);
  Batch reverse = device;
  reverse.memory = Memory::host;
  CHECK_THROWS_AS(from_device.partial_fit(reverse), Error);
  CHECK(same_state(from_device.state(), before));
}

}  // namespace

TEST_CASE("device input gives the same state as host input, and the memory space is checked") {
  for (const auto& t : targets()) {
    if (t.space != Space::cuda) continue;
    CAPTURE(t.name());
    if (t.dtype == Dtype::f64) device_round_trip<double>(t.space);
    else device_round_trip<float>(t.space);
  }
}
