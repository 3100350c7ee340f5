// Helpers for gpu-labelled tests: skip visibly where no CUDA device exists.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>

namespace apiary::testing {

inline constexpr int skip_exit_code = 77;  // ctest SKIP_RETURN_CODE

// Exits with the skip code (ctest shows "Skipped") when the process sees no CUDA device.
inline void require_gpu_or_skip(const char* test_name) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("SKIPPED %s: no CUDA device on this machine\n", test_name);
    std::exit(skip_exit_code);
  }
}

}  // namespace apiary::testing
