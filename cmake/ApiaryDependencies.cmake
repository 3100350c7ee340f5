# Third-party dependencies, all from Debian packages (see tools/setup.sh).
find_package(CUDAToolkit REQUIRED)
find_package(Threads REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(Boost 1.74 REQUIRED)           # header-only parts: Boost.Lockfree
find_package(fmt REQUIRED)
find_package(spdlog REQUIRED)
if(APIARY_BUILD_TESTS)
  find_package(Catch2 2.13 REQUIRED)
endif()
find_package(Python3 COMPONENTS Interpreter)

# CCCL (libcu++) ships with the toolkit; host-only translation units (g++) need its include
# directory explicitly, nvcc adds it itself.
find_path(APIARY_CCCL_INCLUDE_DIR cuda/atomic
  HINTS ${CUDAToolkit_INCLUDE_DIRS} ${CUDAToolkit_INCLUDE_DIRS}/cccl
  PATH_SUFFIXES cccl REQUIRED)
