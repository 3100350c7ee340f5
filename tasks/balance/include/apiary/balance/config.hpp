// Portability helpers of the balance headers.
#pragma once

#include <apiary/platform.hpp>

// The schedules are __host__ __device__ templates that call team operations which exist
// only on one side (a CUDA block on the device, simulated threads on the host). nvcc checks
// host/device compatibility per instantiation only when told not to skip it; this disables
// the check on those templates (as CCCL's _CCCL_EXEC_CHECK_DISABLE does).
#if defined(__CUDACC__)
#define APIARY_NO_EXEC_CHECK _Pragma("nv_exec_check_disable")
#else
#define APIARY_NO_EXEC_CHECK
#endif

namespace apiary::balance {

template <class I>
APIARY_HD constexpr I ceil_div(I a, I b) {
  return (a + b - 1) / b;
}

template <class T>
APIARY_HD constexpr T min_of(T a, T b) {
  return b < a ? b : a;
}
template <class T>
APIARY_HD constexpr T max_of(T a, T b) {
  return a < b ? b : a;
}

}  // namespace apiary::balance
