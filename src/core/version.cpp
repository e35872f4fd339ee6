#include "core/version.hpp"

#include <fmt/format.h>

namespace telar {

std::string version() { return TELAR_VERSION; }

std::string build_summary() {
  return fmt::format("telar {} (g++ {}.{}, C++20; cuda={} mpi={} papi={} pfm={})", TELAR_VERSION,
                     __GNUC__, __GNUC_MINOR__, TELAR_HAVE_CUDA_FLAG, TELAR_HAVE_MPI_FLAG,
                     TELAR_HAVE_PAPI_FLAG, TELAR_HAVE_PFM_FLAG);
}

}  // namespace telar
