// `--mpi` in a kforge built without MPI (KFORGE_WITH_MPI=OFF): a clear
// refusal, exit status 2, rather than a silent serial sweep per rank.
#include "tools/mpi_sweep.hpp"

namespace kforge::cli {

void run_mpi_sweep(const CommonOptions&, const SweepOptions&) {
  throw ErrorException(Error::bad_input(
      "--mpi: this kforge was built without MPI (KFORGE_WITH_MPI=OFF): install an MPI implementation "
      "(Debian: libopenmpi-dev openmpi-bin) and rebuild, or split the plan with --shard I/N and "
      "kforge db merge (docs/sweep.md)"));
}

}  // namespace kforge::cli
