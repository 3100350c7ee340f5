// Turns CUDA runtime errors into apiary::CudaError with the failing call and location.
#pragma once

#include <apiary/error.hpp>

#include <cuda_runtime_api.h>

#include <string>

namespace apiary::detail {

[[noreturn]] void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line);

inline void check_cuda(cudaError_t status, const char* call, const char* file, int line) {
  if (status != cudaSuccess) throw_cuda_error(status, call, file, line);
}

}  // namespace apiary::detail

#define APIARY_CUDA_CHECK(call) ::apiary::detail::check_cuda((call), #call, __FILE__, __LINE__)
