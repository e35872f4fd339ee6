// The NCCL communicator's functions, forwarded to libtelar_nccl.so (nccl_module.cpp), which is
// loaded on the first call: processes that never use NCCL never map the CUDA runtime or NCCL.
#include "dist/nccl_communicator.hpp"

#include "core/error.hpp"
#include "core/module.hpp"
#include "dist/communicator_modules.hpp"

namespace telar::dist {

namespace {

const NcclModuleTable& nccl_module() {
  return modules::load_table<NcclModuleTable>("nccl");
}

}  // namespace

bool nccl_available() {
  return modules::built("nccl");
}

int nccl_device_count() {
  if (!nccl_available()) return 0;
  try {
    return nccl_module().device_count();
  } catch (const Error&) {
    return 0;  // a module that does not load has no devices to offer
  }
}

std::vector<std::unique_ptr<Communicator>> make_nccl_group(const std::vector<int>& devices) {
  return nccl_module().make_group(devices);
}

std::unique_ptr<Communicator> join_nccl(Communicator& bootstrap, int device) {
  return nccl_module().join(bootstrap, device);
}

}  // namespace telar::dist
