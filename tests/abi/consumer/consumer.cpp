// Uses the installed C++ API: fit, checkpoint, restore, predict.
#include <cstdio>
#include <vector>

#include <rh/checkpoint.hpp>
#include <rh/regressor.hpp>
#include <rh/version.hpp>

int main() {
  const rh::Space space = rh::compiled_spaces().at(0).space;
  std::vector<double> x, y;
  for (int i = 0; i < 40; ++i) {
    x.push_back(i * 0.05);
    y.push_back(2.0 * i * 0.05 + 1.0 + (i % 10 == 3 ? 6.0 : 0.0));
  }
  rh::Regressor model(space, rh::Dtype::f64);
  model.partial_fit(rh::host_batch(x.data(), y.data(), 40, 1));
  const std::vector<std::uint8_t> bytes = rh::save_checkpoint(model);
  rh::Regressor restored(space, rh::Dtype::f64);
  rh::load_checkpoint(restored, bytes.data(), bytes.size());
  const double probe[] = {0.5};
  const double a = model.predict(probe, 1, 1).at(0), b = restored.predict(probe, 1, 1).at(0);
  if (a != b || a < 1.8 || a > 2.4) {
    std::printf("consumer_cxx: unexpected predictions %.17g %.17g\n", a, b);
    return 1;
  }
  std::printf("consumer_cxx ok: renewable-huber %s (%s), prediction %.6f\n", rh::library_version(), RH_VERSION_STRING, a);
  return 0;
}
