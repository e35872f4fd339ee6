#pragma once
// The two entry points every module (core/module.hpp) exports, in one place:
//   TELAR_MODULE_ENTRY(telar::dist::MpiModuleTable{&open_world})
// in the module's source, at global scope, defines telar_module_version() (the telar version
// it is built with) and telar_module_table() (a pointer to that table, made once).

#define TELAR_MODULE_ENTRY(...)                                                          \
  extern "C" __attribute__((visibility("default"))) const char* telar_module_version() { \
    return TELAR_VERSION;                                                                \
  }                                                                                      \
  extern "C" __attribute__((visibility("default"))) const void* telar_module_table() {   \
    static const auto table = __VA_ARGS__;                                               \
    return &table;                                                                       \
  }
