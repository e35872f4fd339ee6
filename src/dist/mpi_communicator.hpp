#pragma once
// One worker per MPI process (mpirun -np N telar train --workers mpi ...), over
// MPI_COMM_WORLD. Built when CMake finds MPI (TELAR_HAVE_MPI), as the module libtelar_mpi.so
// (mpi_module.cpp), loaded by open_mpi_world(); otherwise, or when it does not load, that
// explains.
#include <memory>

#include "dist/communicator.hpp"

namespace telar::dist {

// Whether this telar was built with MPI.
bool mpi_available();
// Whether the process was started by an MPI launcher (mpirun, srun): the environment says so.
bool launched_by_mpi();

// Initialises MPI (once per process; collectives may then come from any one thread at a time)
// and returns this process's communicator over MPI_COMM_WORLD. MPI is finalised when the last
// communicator is destroyed. Throws telar::Error when MPI is not built in.
std::unique_ptr<Communicator> open_mpi_world();

}  // namespace telar::dist
