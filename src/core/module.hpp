#pragma once
// Parts of telar that pull in heavy libraries (the CUDA backend with cuBLAS and cuDNN, the NCCL
// and MPI communicators, OpenBLAS, libpfm4, PAPI) are built as shared modules,
// libtelar_<name>.so, and loaded the first time a run needs one: a run that names no cuda
// target never maps libcudart, and `telar --version` starts in milliseconds.
//
// A module exports two C functions: `telar_module_version()` (the telar version it was built
// with; a module of another version is refused) and `telar_module_table()`, a pointer to a
// struct of function pointers that the module and its caller share through a header
// (backend/cuda_module.hpp, dist/communicator_modules.hpp, core/blas_module.hpp,
// prof/counter_modules.hpp). A module links its own copy of the telar libraries it uses, with
// their symbols hidden: process state it needs (the log level, thread settings) must be passed
// in calls, not read from globals.
//
// Where modules are looked for, in order: $TELAR_MODULE_DIR (only there, when set); the
// executable's folder; <executable's folder>/../lib/telar (an installed telar); the build tree
// that compiled this library (tests and benchmarks run from their own folders).
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace telar::modules {

struct ModuleInfo {
  std::string_view name;     // "cuda": libtelar_cuda.so
  std::string_view purpose;  // "the CUDA backend"
  std::string_view needs;    // the libraries it loads, and how to get them
  bool built;                // whether this build of telar compiled it
};

// The modules this telar knows of (blas, cuda, nccl, mpi, pfm, papi), built or not.
const std::vector<ModuleInfo>& known();

// Whether this build of telar compiled the module (false for names it does not know).
bool built(std::string_view name);

// The file name of a module: "libtelar_<name>.so".
std::string library_name(std::string_view name);

// Where the module's library is, or an empty path when it is in none of the folders above.
std::filesystem::path find(std::string_view name);

// Loads the module once per process (thread-safe) and returns its table. Throws telar::Error,
// one line naming the library, what went wrong (the loader's reason) and how to get it, when
// the module was not built, is missing, does not load, or is of another telar version.
const void* load(std::string_view name);

template <typename Table>
const Table& load_table(std::string_view name) {
  return *static_cast<const Table*>(load(name));
}

// For modules a command can do without: the table, or nullptr when the module was not built or
// does not load; the latter is said once on stderr as "<without>: <why>".
const void* load_if_available(std::string_view name, std::string_view without);

template <typename Table>
const Table* load_table_if_available(std::string_view name, std::string_view without) {
  return static_cast<const Table*>(load_if_available(name, without));
}

// One line per known module for `telar --version`: built or not, present or missing, and with
// `try_loading` whether it loads (that maps its libraries).
std::string status_text(bool try_loading);

}  // namespace telar::modules
