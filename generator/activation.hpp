// The epilogue activations in double precision (the reference), with the two
// constants the tolerance policy needs: a Lipschitz bound and the error of
// the prelude's f32 kf_activation (docs/tolerances.md).
#pragma once

#include <cmath>

#include "generator/problem.hpp"

namespace kforge {

/// act(x) in double: relu max(x, 0) (NaN stays NaN), gelu x/2 (1 + erf(x/sqrt 2)), silu x / (1 + e^-x).
inline double activation_reference(Activation a, double x) {
  switch (a) {
    case Activation::kNone: return x;
    case Activation::kRelu: return x < 0.0 ? 0.0 : x;
    case Activation::kGelu: return 0.5 * x * (1.0 + std::erf(x * 0.70710678118654752440));
    case Activation::kSilu: return x / (1.0 + std::exp(-x));
  }
  return x;
}

/// sup |act'(x)|: none and relu 1; gelu 1.129 (at x = sqrt 2); silu 1.0998 (at x ~ 2.4).
inline double activation_lipschitz(Activation a) {
  switch (a) {
    case Activation::kNone:
    case Activation::kRelu: return 1.0;
    case Activation::kGelu: return 1.13;
    case Activation::kSilu: return 1.10;
  }
  return 1.0;
}

/// c such that the f32 kf_activation(x) errs by at most c * u * |x| (u = 2^-24),
/// with OpenCL 1.2's accuracy floor for the library calls (erf 16 ulp, exp
/// 3 ulp; CUDA and HIP are tighter). gelu: 0.5|x| * (erf's 32u absolute + u
/// from the rounded argument + 2u for 1 + erf) + 2u|x| for the products < 20u|x|;
/// silu: 6u (exp) + u + u relative < 10u|x|; relu is exact.
inline double activation_eval_error(Activation a) {
  switch (a) {
    case Activation::kNone:
    case Activation::kRelu: return 0.0;
    case Activation::kGelu: return 20.0;
    case Activation::kSilu: return 10.0;
  }
  return 0.0;
}

}  // namespace kforge
