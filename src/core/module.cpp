#include "core/module.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <system_error>

#include "core/error.hpp"
#include "core/log.hpp"

namespace telar::modules {

namespace {

namespace fs = std::filesystem;

std::mutex& modules_mutex() {
  static std::mutex m;
  return m;
}

// Tables of the modules loaded so far, by name. Modules are never unloaded: executables and
// communicators they made may live until the process ends.
std::map<std::string, const void*, std::less<>>& loaded_tables() {
  static std::map<std::string, const void*, std::less<>> tables;
  return tables;
}

const ModuleInfo* info_of(std::string_view name) {
  for (const auto& m : known())
    if (m.name == name) return &m;
  return nullptr;
}

std::vector<fs::path> search_folders() {
  if (const char* dir = std::getenv("TELAR_MODULE_DIR"); dir && *dir) return {fs::path(dir)};
  std::vector<fs::path> folders;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    folders.push_back(exe.parent_path());
    folders.push_back(exe.parent_path().parent_path() / "lib" / "telar");
  }
  folders.emplace_back(TELAR_MODULE_BUILD_DIR);
  return folders;
}

std::string folders_text() {
  std::string text;
  for (const auto& f : search_folders()) text += (text.empty() ? "" : ", ") + f.string();
  return text;
}

const void* open_module(const ModuleInfo& info) {
  const std::string library = library_name(info.name);
  if (!info.built)
    fail("{} ({}) was not built into this telar: it needs {} when telar is compiled", library,
         info.purpose, info.needs);
  const fs::path path = find(info.name);
  if (path.empty())
    fail(
        "{} ({}) is not installed beside this telar (looked in {}); reinstall telar or set "
        "TELAR_MODULE_DIR to the folder that holds it",
        library, info.purpose, folders_text());
  // RTLD_GLOBAL: MPI's own plug-ins look up its symbols in the global scope. The module's copy of
  // telar is hidden (linked with --exclude-libs), so nothing of it leaks into that scope.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!handle) {
    const char* why = dlerror();
    fail("{} ({}) cannot be loaded: {}; it needs {}", path.string(), info.purpose,
         why ? why : "unknown reason", info.needs);
  }
  using VersionFn = const char* (*)();
  using TableFn = const void* (*)();
  auto version = reinterpret_cast<VersionFn>(dlsym(handle, "telar_module_version"));
  auto table = reinterpret_cast<TableFn>(dlsym(handle, "telar_module_table"));
  if (!version || !table)
    fail("{} is not a telar module (no telar_module_version/telar_module_table); reinstall telar",
         path.string());
  if (std::string_view(version()) != TELAR_VERSION)
    fail("{} is from telar {}, this is telar {}; reinstall telar so that both match", path.string(),
         version(), TELAR_VERSION);
  return table();
}

}  // namespace

const std::vector<ModuleInfo>& known() {
  static const std::vector<ModuleInfo> modules = {
      {"blas", "BLAS and LAPACK", "OpenBLAS (libopenblas-dev, installed by scripts/setup.sh)",
       true},
      {"cuda", "the CUDA backend",
       "the CUDA runtime, cuBLAS and cuDNN (the CUDA toolkit and cuDNN installed)",
       TELAR_BUILT_CUDA_MODULE != 0},
      {"nccl", "the NCCL communicator", "the CUDA runtime and NCCL (libnccl)",
       TELAR_BUILT_NCCL_MODULE != 0},
      {"mpi", "the MPI communicator", "Open MPI (libopenmpi-dev, installed by scripts/setup.sh)",
       TELAR_BUILT_MPI_MODULE != 0},
      {"pfm", "native event names", "libpfm4 (libpfm4-dev, installed by scripts/setup.sh)",
       TELAR_BUILT_PFM_MODULE != 0},
      {"papi", "PAPI presets", "PAPI (libpapi-dev, installed by scripts/setup.sh)",
       TELAR_BUILT_PAPI_MODULE != 0},
  };
  return modules;
}

bool built(std::string_view name) {
  const ModuleInfo* info = info_of(name);
  return info && info->built;
}

std::string library_name(std::string_view name) {
  return fmt::format("libtelar_{}.so", name);
}

fs::path find(std::string_view name) {
  const std::string library = library_name(name);
  for (const auto& folder : search_folders()) {
    std::error_code ec;
    if (fs::is_regular_file(folder / library, ec)) return folder / library;
  }
  return {};
}

const void* load(std::string_view name) {
  const ModuleInfo* info = info_of(name);
  if (!info) fail("internal: no telar module is called '{}'", name);
  const std::lock_guard lock(modules_mutex());
  auto& tables = loaded_tables();
  if (auto it = tables.find(name); it != tables.end()) return it->second;
  const void* table = open_module(*info);
  tables.emplace(std::string(name), table);
  return table;
}

const void* load_if_available(std::string_view name, std::string_view without) {
  if (!built(name)) return nullptr;
  try {
    return load(name);
  } catch (const Error& e) {
    log::notice_once(library_name(name).c_str(), fmt::format("{}: {}", without, e.what()));
    return nullptr;
  }
}

std::string status_text(bool try_loading) {
  std::string text;
  for (const auto& m : known()) {
    std::string state;
    if (!m.built) {
      state = "not built";
    } else if (const fs::path path = find(m.name); path.empty()) {
      state = fmt::format("missing (looked in {})", folders_text());
    } else if (!try_loading) {
      state = fmt::format("present, {}", path.string());
    } else {
      try {
        load(m.name);
        state = fmt::format("loads, {}", path.string());
      } catch (const Error& e) {
        state = fmt::format("does not load: {}", e.what());
      }
    }
    text += fmt::format("  {:<5} {}: {}\n", m.name, m.purpose, state);
  }
  return text;
}

}  // namespace telar::modules
