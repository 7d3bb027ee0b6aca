// The initial values of a declared operator's buffers (InputInit): drawn from
// the run's seed through the portable stream, a constant, a ramp, or a file.
#pragma once

#include "generator/npy_file.hpp"
#include "generator/operator_declaration.hpp"
#include "generator/workload_builder.hpp"

namespace kforge {

/// Fills every element of `t` as `init` says, rounded to t's dtype; `npy` is
/// the array a kNpy init names (its size already checked against t's).
void fill_input(HostTensor& t, const InputInit& init, SplitMix64 rng, const NpyArray* npy);

}  // namespace kforge
