// Device-resident data on spaces with their own memory (CUDA): the same results as host input, the memory
// space checked in both directions, and predictions written straight to device memory.
#include <Kokkos_Core.hpp>

#include "support.hpp"

using namespace rh;
using namespace rh::test;

namespace {

template <class DeviceMemory, class S>
Kokkos::View<S*, DeviceMemory> to_device(const std::vector<S>& v) {
  Kokkos::View<S*, DeviceMemory> d("test_device_array", v.size());
  Kokkos::deep_copy(d, Kokkos::View<const S*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(v.data(), v.size()));
  return d;
}

template <class T>
void device_round_trip() {
  using S = typename T::S;
  using DeviceMemory = typename T::Traits::execution_space::memory_space;
  const Space space = T::space;
  Data d = linear_data(3000, 9, 21, 1.0);
  d.w.assign(static_cast<size_t>(d.n), 1.0);
  for (long long i = 0; i < d.n; i += 3) d.w[static_cast<size_t>(i)] = 0.5;
  const TypedBatch host = make_batch(d, dtype_of<S>());
  const auto [hx, hy, hw] = arrays_of<S>(host);
  auto dx = to_device<DeviceMemory>(hx), dy = to_device<DeviceMemory>(hy), dw = to_device<DeviceMemory>(hw);
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

// Only on spaces with their own memory: DeviceTargets is empty in a build without one.
TEST_CASE_TEMPLATE_DEFINE("device input gives the same state as host input, and the memory space is checked", T,
                          device_round_trip_test) {
  device_round_trip<T>();
}
TEST_CASE_TEMPLATE_APPLY(device_round_trip_test, DeviceTargets);
