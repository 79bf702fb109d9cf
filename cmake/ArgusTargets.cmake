# Helpers that give every Argus target the same flags.

set(ARGUS_WARNINGS -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers)
if(ARGUS_WERROR)
  list(APPEND ARGUS_WARNINGS -Werror)
endif()

# argus_library(NAME SRCS ... DEPS ...): a part's library.
function(argus_library name)
  cmake_parse_arguments(A "" "" "SRCS;DEPS" ${ARGN})
  add_library(${name} STATIC ${A_SRCS})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR})
  target_compile_options(${name} PRIVATE ${ARGUS_WARNINGS})
  target_link_libraries(${name} PUBLIC ${A_DEPS})
endfunction()

# argus_binary(NAME SRCS ... DEPS ...): a program.
function(argus_binary name)
  cmake_parse_arguments(A "" "" "SRCS;DEPS" ${ARGN})
  add_executable(${name} ${A_SRCS})
  target_compile_options(${name} PRIVATE ${ARGUS_WARNINGS})
  target_link_libraries(${name} PRIVATE ${A_DEPS})
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bin)
endfunction()

# argus_test(NAME SRCS ... DEPS ...): a Catch2 test binary registered with CTest.
function(argus_test name)
  if(NOT ARGUS_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(A "" "" "SRCS;DEPS" ${ARGN})
  add_executable(${name} ${A_SRCS})
  target_compile_options(${name} PRIVATE ${ARGUS_WARNINGS})
  target_link_libraries(${name} PRIVATE argus_catch_main ${A_DEPS})
  target_compile_definitions(${name} PRIVATE
    ARGUS_SOURCE_DIR="${PROJECT_SOURCE_DIR}" ARGUS_BINARY_DIR="${PROJECT_BINARY_DIR}")
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests)
  catch_discover_tests(${name} TEST_PREFIX "${name}:" DISCOVERY_TIMEOUT 60)
endfunction()
