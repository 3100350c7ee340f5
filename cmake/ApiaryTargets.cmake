# Helpers shared by every component.

# Logging: spdlog and fmt compiled header-only so that binaries built here run on the GPU
# machines, which carry the headers but not the shared libraries.
add_library(apiary_logging INTERFACE)
target_compile_definitions(apiary_logging INTERFACE SPDLOG_HEADER_ONLY SPDLOG_FMT_EXTERNAL FMT_HEADER_ONLY)
target_include_directories(apiary_logging INTERFACE
  $<TARGET_PROPERTY:spdlog::spdlog_header_only,INTERFACE_INCLUDE_DIRECTORIES>)

# Warnings for our own code (not for third-party headers).
add_library(apiary_warnings INTERFACE)
target_compile_options(apiary_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wno-unknown-pragmas>
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra,-Wno-unknown-pragmas --expt-relaxed-constexpr
                              -Wno-deprecated-gpu-targets -lineinfo>)

# apiary_add_host_test(NAME SOURCES... [LIBS ...] [LABELS ...])
#   A Catch2 test that needs no GPU; runs in CI.
function(apiary_add_host_test name)
  cmake_parse_arguments(T "" "" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE apiary_catch_main ${T_LIBS} apiary_warnings)
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES LABELS "host;${T_LABELS}")
endfunction()

# apiary_add_gpu_test(NAME SOURCES... [LIBS ...] [ARGS ...])
#   A test that needs a CUDA device. It exits with 77 ("skipped", shown by ctest) where no
#   device exists, so CI lists it as skipped rather than passed.
function(apiary_add_gpu_test name)
  cmake_parse_arguments(T "" "" "SOURCES;LIBS;ARGS;LABELS" ${ARGN})
  if(T_SOURCES)
    add_executable(${name} ${T_SOURCES})
    target_link_libraries(${name} PRIVATE ${T_LIBS} apiary_warnings)
    add_test(NAME ${name} COMMAND ${name} ${T_ARGS})
  endif()
  set_tests_properties(${name} PROPERTIES LABELS "gpu;${T_LABELS}" SKIP_RETURN_CODE 77)
endfunction()

# apiary_add_gpu_command_test(NAME COMMAND ...): a gpu-labelled test that runs a program.
function(apiary_add_gpu_command_test name)
  add_test(NAME ${name} COMMAND ${ARGN})
  set_tests_properties(${name} PROPERTIES LABELS "gpu" SKIP_RETURN_CODE 77)
endfunction()
