// The threads that run one task. A block runs several workers at once when the worker size
// is below the block size; each worker has its own rank space, barrier and shared memory.
#pragma once

#include <cuda/atomic>

#include <cstdint>

namespace apiary {

class Worker {
 public:
  enum class Barrier : std::uint8_t { none, warp, named, software };

  __device__ Worker(std::uint32_t rank, std::uint32_t size, std::uint32_t slot, std::uint32_t slot_size,
                    void* shared, std::uint32_t* software_barrier)
      : rank_(rank), size_(size), slot_(slot), shared_(shared), software_barrier_(software_barrier) {
    if (size == 1) {
      barrier_ = Barrier::none;
    } else if (slot_size <= 32) {
      barrier_ = Barrier::warp;
      const std::uint32_t lane_base = (threadIdx.x & 31u) & ~(slot_size - 1u);
      lane_mask_ = (size == 32 ? ~0u : ((1u << size) - 1u)) << lane_base;
    } else if (size % 32 == 0) {
      barrier_ = Barrier::named;  // barrier 0 is __syncthreads; workers use 1 + slot
    } else {
      barrier_ = Barrier::software;
    }
  }

  // This thread's index inside the task, 0..size()-1.
  __device__ std::uint32_t rank() const { return rank_; }
  // Threads per task (the task type's worker size).
  __device__ std::uint32_t size() const { return size_; }
  // Which worker of the block this is.
  __device__ std::uint32_t slot() const { return slot_; }

  // Barrier over this task's threads only (never the whole block): warp-level sync for
  // workers inside one warp, a named hardware barrier for whole warps, a shared-memory
  // barrier for other sizes. Orders shared and global memory among the task's threads.
  __device__ void sync() const {
    switch (barrier_) {
      case Barrier::none: __threadfence_block(); break;
      case Barrier::warp: __syncwarp(lane_mask_); break;
      case Barrier::named: asm volatile("barrier.sync %0, %1;" ::"r"(1u + slot_), "r"(size_) : "memory"); break;
      case Barrier::software: software_sync(); break;
    }
  }

  // This task's shared memory (the task type's shared_bytes), 16-byte aligned.
  template <class T>
  __device__ T* shared() const {
    return static_cast<T*>(shared_);
  }

 private:
  __device__ void software_sync() const {
    cuda::atomic_ref<std::uint32_t, cuda::thread_scope_block> count(software_barrier_[0]);
    cuda::atomic_ref<std::uint32_t, cuda::thread_scope_block> generation(software_barrier_[1]);
    const std::uint32_t g = generation.load(cuda::std::memory_order_acquire);
    if (count.fetch_add(1, cuda::std::memory_order_acq_rel) == size_ - 1) {
      count.store(0, cuda::std::memory_order_relaxed);
      generation.store(g + 1, cuda::std::memory_order_release);
    } else {
      while (generation.load(cuda::std::memory_order_acquire) == g) __nanosleep(20);
    }
  }

  std::uint32_t rank_;
  std::uint32_t size_;
  std::uint32_t slot_;
  std::uint32_t lane_mask_ = 0;
  Barrier barrier_ = Barrier::none;
  void* shared_;
  std::uint32_t* software_barrier_;
};

// How a scheduler lays workers of a given size into a block.
struct WorkerShape {
  std::uint32_t slot_size;  // threads reserved per worker
  std::uint32_t max_slots;  // hardware limit on workers per block (named barriers 1..15)

  __host__ __device__ static constexpr WorkerShape of(std::uint32_t worker_size) {
    if (worker_size <= 32) {
      std::uint32_t s = 1;
      while (s < worker_size) s <<= 1;  // power of two: workers never straddle a warp
      return {s, 1024};
    }
    const std::uint32_t s = (worker_size + 31) / 32 * 32;
    return {s, worker_size % 32 == 0 ? 15u : 32u};
  }
};

inline constexpr std::uint32_t max_software_barriers = 32;

}  // namespace apiary
