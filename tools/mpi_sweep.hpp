// `kforge sweep PLAN --mpi`: one rank of a distributed sweep started by
// mpirun or srun (docs/sweep.md, "MPI"). Built from mpi_sweep.cpp where MPI
// was found (KFORGE_WITH_MPI), else from mpi_sweep_unavailable.cpp, which
// says so and exits 2.
#pragma once

#include "tools/cli_common.hpp"
#include "tools/sweep_command.hpp"

namespace kforge::cli {

void run_mpi_sweep(const CommonOptions& o, const SweepOptions& s);

}  // namespace kforge::cli
