# Strict warnings for project code only (third-party headers are included as system headers).
add_library(telar_warnings INTERFACE)
target_compile_options(telar_warnings INTERFACE -Wall -Wextra -Werror -Wno-error=deprecated-declarations)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  # g++ 12 reports false -Wrestrict/-Wstringop-overflow positives inside libstdc++ string code.
  target_compile_options(telar_warnings INTERFACE -Wno-restrict -Wno-stringop-overflow)
endif()

# telar_module(NAME SOURCES... DEPS ...): one static library per module under src/.
function(telar_module name)
  cmake_parse_arguments(M "" "" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(telar_${name} STATIC ${M_SOURCES})
  target_include_directories(telar_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(telar_${name} PUBLIC ${M_DEPS} PRIVATE telar_warnings ${M_PRIVATE_DEPS})
endfunction()

# telar_loadable_module(NAME SOURCES... DEPS ...): libtelar_NAME.so, an optional part loaded on
# first use (src/core/module.hpp), written beside the telar executable. It links its own copy of
# the telar libraries in DEPS with their symbols hidden (--exclude-libs), exports only its two
# entry points, and must resolve every symbol when linked (-z defs). Warnings are the caller's
# to add (CUDA sources need them through -Xcompiler).
function(telar_loadable_module name)
  cmake_parse_arguments(M "" "" "SOURCES;DEPS" ${ARGN})
  add_library(telar_${name} MODULE ${M_SOURCES})
  target_include_directories(telar_${name} PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(telar_${name} PRIVATE ${M_DEPS})
  target_compile_definitions(telar_${name} PRIVATE TELAR_VERSION="${PROJECT_VERSION}")
  target_link_options(telar_${name} PRIVATE -Wl,--exclude-libs,ALL -Wl,-z,defs)
  # Installed into lib/telar beside bin/ (where core/module.cpp looks), keeping the run path to
  # libraries outside the system's folders (the CUDA toolkit's).
  set_target_properties(telar_${name} PROPERTIES
    LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR} INSTALL_RPATH_USE_LINK_PATH ON
    CXX_VISIBILITY_PRESET hidden CUDA_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
  install(TARGETS telar_${name} LIBRARY DESTINATION lib/telar)
  set_property(GLOBAL APPEND PROPERTY TELAR_LOADABLE_MODULES telar_${name})
endfunction()

# telar_test(NAME SOURCES... DEPS ... [LABELS ...] [TIMEOUT S] [PROCESSORS N]): one GoogleTest
# executable, registered with CTest. PROCESSORS 2 marks tests that keep every core busy (a
# telar process training or running a model on all its threads): ctest then runs them alone.
# Two of them side by side would each slow the other's OpenMP barriers down (one epoch of the
# accuracy test's CNN: 15 s alone, 61 s beside another), where two one-thread tests side by
# side cost nothing.
function(telar_test name)
  cmake_parse_arguments(T "" "TIMEOUT;PROCESSORS" "SOURCES;DEPS;LABELS" ${ARGN})
  # The sanitize run skips tests labelled slow (scripts/test.sh), so that build does not compile
  # them; a placeholder target keeps add_dependencies() on them valid.
  if(TELAR_SANITIZE AND "slow" IN_LIST T_LABELS)
    add_custom_target(${name})
    return()
  endif()
  add_executable(${name} ${T_SOURCES})
  # Tests include their shared helpers from tests/ (e.g. "e2e/run_command.hpp").
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  target_link_libraries(${name} PRIVATE ${T_DEPS} GTest::gtest GTest::gtest_main telar_warnings)
  target_compile_definitions(${name} PRIVATE TELAR_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
                                             TELAR_BINARY_DIR="${PROJECT_BINARY_DIR}")
  # Code under test may load the optional modules (from the build tree): build them first.
  get_property(loadable_modules GLOBAL PROPERTY TELAR_LOADABLE_MODULES)
  if(loadable_modules)
    add_dependencies(${name} ${loadable_modules})
  endif()
  include(GoogleTest)
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 600)
  endif()
  set(props TIMEOUT ${T_TIMEOUT})
  if(T_PROCESSORS)
    list(APPEND props PROCESSORS ${T_PROCESSORS})
  endif()
  if(T_LABELS)
    list(APPEND props LABELS "${T_LABELS}")
  endif()
  # NO_PRETTY_VALUES: a parameterised test is named by its suite's name generator alone; the
  # value gtest prints of a struct without PrintTo is its bytes, pointers included, which would
  # name the test anew at every build (and ctest would never find its time from the last run).
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 NO_PRETTY_VALUES PROPERTIES ${props})
endfunction()
