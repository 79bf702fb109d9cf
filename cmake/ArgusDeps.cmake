# Finds every dependency Argus uses. All come from Debian 12 packages
# (scripts/install-deps installs them).
find_package(Threads REQUIRED)
find_package(PkgConfig REQUIRED)
find_package(absl CONFIG REQUIRED)
find_package(protobuf CONFIG QUIET)
if(NOT protobuf_FOUND)
  find_package(Protobuf REQUIRED)
endif()
find_package(gRPC CONFIG REQUIRED)
find_package(spdlog CONFIG REQUIRED)
find_package(fmt CONFIG REQUIRED)
find_package(SQLite3 REQUIRED)
pkg_check_modules(Z3 REQUIRED IMPORTED_TARGET z3)
find_package(LLVM 19.1 CONFIG REQUIRED
             HINTS /usr/lib/llvm-19/lib/cmake/llvm)

find_program(ARGUS_PROTOC protoc REQUIRED)
find_program(ARGUS_GRPC_CPP_PLUGIN grpc_cpp_plugin REQUIRED)
find_package(Catch2 2.13 CONFIG REQUIRED)
include(Catch)

# LLVM as one imported target over the shared libLLVM (fast links on 2 cores).
add_library(argus_llvm INTERFACE)
target_include_directories(argus_llvm SYSTEM INTERFACE ${LLVM_INCLUDE_DIRS})
target_compile_definitions(argus_llvm INTERFACE ${LLVM_DEFINITIONS})
target_link_directories(argus_llvm INTERFACE ${LLVM_LIBRARY_DIRS})
target_link_libraries(argus_llvm INTERFACE LLVM)
