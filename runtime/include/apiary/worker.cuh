// The threads that run one task. A block runs several workers at once when the worker size
// is below the block size; each worker has its own rank space, barrier and shared memory.
#pragma once

#include <cuda/barrier>

#include <cstdint>

namespace apiary {

class Worker {
 public:
  enum class Barrier : std::uint8_t { none, warp, block_barrier, block };
  using BlockBarrier = cuda::barrier<cuda::thread_scope_block>;

  // `barrier` must be initialised for `size` threads (by the scheduler) when size > 32.
  __device__ Worker(std::uint32_t rank, std::uint32_t size, std::uint32_t slot, std::uint32_t slot_size,
                    void* shared, BlockBarrier* barrier)
      : rank_(rank), size_(size), slot_(slot), shared_(shared), block_barrier_(barrier) {
    if (size == 1) {
      barrier_ = Barrier::none;
    } else if (slot_size <= 32) {
      barrier_ = Barrier::warp;
      const std::uint32_t lane_base = (threadIdx.x & 31u) & ~(slot_size - 1u);
      lane_mask_ = (size == 32 ? ~0u : ((1u << size) - 1u)) << lane_base;
    } else if (size == blockDim.x) {
      barrier_ = Barrier::block;  // the task is the whole block
    } else {
      barrier_ = Barrier::block_barrier;
    }
  }

  // This thread's index inside the task, 0..size()-1.
  __device__ std::uint32_t rank() const { return rank_; }
  // Threads per task (the task type's worker size).
  __device__ std::uint32_t size() const { return size_; }
  // Which worker of the block this is.
  __device__ std::uint32_t slot() const { return slot_; }

  // Barrier over this task's threads: warp-level sync for workers inside one warp, the
  // block's barrier (__syncthreads) for a worker that is the whole block, a shared-memory
  // barrier object (mbarrier) for other larger workers. Orders shared and global memory among
  // the task's threads. Every thread of the task must reach it: a task whose threads leave
  // early and then sync hangs on an mbarrier, and on the block's barrier meets the
  // scheduler's, which then runs ahead of it. (Named hardware barriers would be faster for
  // whole warps but allow only 15 workers per block and confuse compute-sanitizer's
  // racecheck; mbarriers do neither. A whole-block worker takes the block's barrier, which
  // an mbarrier's arrive-and-wait loop only emulates.)
  __device__ void sync() const {
    switch (barrier_) {
      case Barrier::none: __threadfence_block(); break;
      case Barrier::warp: __syncwarp(lane_mask_); break;
      case Barrier::block: __syncthreads(); break;
      case Barrier::block_barrier: block_barrier_->arrive_and_wait(); break;
    }
  }

  // Whether `pred` may hold on any of the task's threads; every thread must call it, and it
  // orders no memory. Exact for one thread, a warp's worker and a whole-block worker (a vote);
  // a worker on a barrier object cannot vote cheaply and answers true. For skipping work that
  // a false answer makes needless.
  __device__ bool may_any(bool pred) const {
    switch (barrier_) {
      case Barrier::none: return pred;
      case Barrier::warp: return __any_sync(lane_mask_, pred);
      case Barrier::block: return __syncthreads_or(pred) != 0;
      case Barrier::block_barrier: return true;
    }
    return true;
  }

  // This task's shared memory (the task type's shared_bytes), 16-byte aligned.
  template <class T>
  __device__ T* shared() const {
    return static_cast<T*>(shared_);
  }

 private:
  std::uint32_t rank_;
  std::uint32_t size_;
  std::uint32_t slot_;
  std::uint32_t lane_mask_ = 0;
  Barrier barrier_ = Barrier::none;
  void* shared_;
  BlockBarrier* block_barrier_;
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
    return {s, max_block_barriers};
  }
  static constexpr std::uint32_t max_block_barriers = 32;
};

}  // namespace apiary
