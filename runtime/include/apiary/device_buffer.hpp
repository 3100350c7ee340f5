// Owning device allocations (cudaMalloc/cudaFree) with typed access.
#pragma once

#include <apiary/cuda_check.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

namespace apiary {

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count, bool zero = true) : count_(count) {
    if (count == 0) return;
    APIARY_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&data_), count * sizeof(T)));
    if (zero) APIARY_CUDA_CHECK(cudaMemset(data_, 0, count * sizeof(T)));
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept : data_(std::exchange(o.data_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(count_, o.count_);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (data_) cudaFree(data_);
  }

  T* get() const { return data_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }
  void zero() const {
    if (data_) APIARY_CUDA_CHECK(cudaMemset(data_, 0, bytes()));
  }

 private:
  T* data_ = nullptr;
  std::size_t count_ = 0;
};

}  // namespace apiary
