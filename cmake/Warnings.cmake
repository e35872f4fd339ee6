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

# telar_test(NAME SOURCES... DEPS ... [LABELS ...]): one GoogleTest executable, registered with CTest.
function(telar_test name)
  cmake_parse_arguments(T "" "TIMEOUT" "SOURCES;DEPS;LABELS" ${ARGN})
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
  include(GoogleTest)
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 600)
  endif()
  set(props TIMEOUT ${T_TIMEOUT})
  if(T_LABELS)
    list(APPEND props LABELS "${T_LABELS}")
  endif()
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES ${props})
endfunction()
