#include <apiary/cuda_check.hpp>

namespace apiary::detail {

void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line) {
  std::string message = std::string("CUDA error ") + cudaGetErrorName(status) + " (" +
                        cudaGetErrorString(status) + ") in " + call + " at " + file + ":" +
                        std::to_string(line);
  if (status == cudaErrorNoDevice || status == cudaErrorInsufficientDriver)
    message += ". This program needs an NVIDIA GPU (sm_90: H100/H200) and a matching driver.";
  throw CudaError(message);
}

}  // namespace apiary::detail
