// A typed, owning device allocation (cudaMalloc/cudaFree) with explicit copies. Move-only.
#pragma once

#include <apiary/cuda_check.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>
#include <vector>

namespace apiary::sparse {

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    // Allocate at least one element so that data() is a valid device pointer for empty
    // matrices (cuSPARSE rejects null pointers even when nothing is read).
    void* raw = nullptr;
    APIARY_CUDA_CHECK(cudaMalloc(&raw, (count ? count : 1) * sizeof(T)));
    data_ = static_cast<T*>(raw);
  }
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) { upload(host); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), count_(std::exchange(other.count_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      release();
      data_ = std::exchange(other.data_, nullptr);
      count_ = std::exchange(other.count_, 0);
    }
    return *this;
  }
  ~DeviceBuffer() { release(); }

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }

  void upload(const std::vector<T>& host) {
    if (host.size() != count_) throw Error("DeviceBuffer::upload: size mismatch");
    if (count_) APIARY_CUDA_CHECK(cudaMemcpy(data_, host.data(), bytes(), cudaMemcpyHostToDevice));
  }
  std::vector<T> download() const {
    std::vector<T> host(count_);
    if (count_) APIARY_CUDA_CHECK(cudaMemcpy(host.data(), data_, bytes(), cudaMemcpyDeviceToHost));
    return host;
  }
  // Fills every byte with `byte` (used to poison outputs before a checked run).
  void fill_bytes(int byte, cudaStream_t stream = nullptr) {
    if (count_) APIARY_CUDA_CHECK(cudaMemsetAsync(data_, byte, bytes(), stream));
  }

 private:
  void release() noexcept {
    if (data_) cudaFree(data_);
    data_ = nullptr;
  }
  T* data_ = nullptr;
  std::size_t count_ = 0;
};

}  // namespace apiary::sparse
