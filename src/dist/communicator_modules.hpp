#pragma once
// The communicators that need heavy libraries live in modules loaded on first use
// (core/module.hpp): libtelar_nccl.so (CUDA runtime and NCCL, nccl_module.cpp) and
// libtelar_mpi.so (Open MPI, mpi_module.cpp). These are their tables; the functions behave as
// nccl_communicator.hpp and mpi_communicator.hpp describe.
#include <memory>
#include <vector>

#include "dist/communicator.hpp"

namespace telar::dist {

struct NcclModuleTable {
  int (*device_count)();
  std::vector<std::unique_ptr<Communicator>> (*make_group)(const std::vector<int>& devices);
  std::unique_ptr<Communicator> (*join)(Communicator& bootstrap, int device);
};

struct MpiModuleTable {
  std::unique_ptr<Communicator> (*open_world)();
};

}  // namespace telar::dist
