// The MPI communicator's functions: open_mpi_world() is forwarded to libtelar_mpi.so
// (mpi_module.cpp), loaded on the first call, so that processes that never use MPI never map
// Open MPI.
#include "dist/mpi_communicator.hpp"

#include <cstdlib>

#include "core/error.hpp"
#include "core/module.hpp"
#include "dist/communicator_modules.hpp"

namespace telar::dist {

bool mpi_available() {
  return modules::built("mpi");
}

bool launched_by_mpi() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"})
    if (std::getenv(var)) return true;
  return false;
}

std::unique_ptr<Communicator> open_mpi_world() {
  if (!mpi_available())
    fail(
        "--workers mpi: this telar was built without MPI; install libopenmpi-dev "
        "(scripts/setup.sh) and rebuild");
  return modules::load_table<MpiModuleTable>("mpi").open_world();
}

}  // namespace telar::dist
