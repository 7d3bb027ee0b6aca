// Distributions for declared inputs, reproducible from a seed on every machine.
#include "generator/input_distribution.hpp"

#include <cmath>

namespace kforge {

namespace {

/// Uniform in (0, 1), never 0 or 1.
double open_unit(SplitMix64& rng) {
  return (static_cast<double>(rng.symmetric_unit()) + 1.0) / 2.0;
}

}  // namespace

void fill_input(HostTensor& t, const InputInit& init, SplitMix64 rng, const NpyArray* npy) {
  using K = InputInit::Kind;
  const std::size_t n = t.elements();
  for (std::size_t i = 0; i < n; ++i) {
    double v = 0.0;
    switch (init.kind) {
      case K::kUniform:
        v = init.a + (init.b - init.a) * open_unit(rng);
        break;
      case K::kNormal: {
        // Box-Muller: both uniforms are in (0, 1), so the log is finite.
        const double u1 = open_unit(rng), u2 = open_unit(rng);
        v = init.a + init.b * std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
        break;
      }
      case K::kIntegers:
        v = init.a + std::floor(open_unit(rng) * (init.b - init.a + 1.0));
        break;
      case K::kConstant:
        v = init.a;
        break;
      case K::kRamp:
        v = init.a + init.b * static_cast<double>(i);
        break;
      case K::kNpy:
        v = npy && i < npy->values.size() ? npy->values[i] : NAN;
        break;
    }
    store_value(t, i, v);
  }
}

}  // namespace kforge
