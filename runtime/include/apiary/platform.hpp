// Portability layer: lets the concurrent structures compile as plain C++ (host tests, TSan)
// and as CUDA device code from the same source.
#pragma once

#include <cuda/atomic>
#include <cstdint>

#if defined(__CUDACC__)
#define APIARY_HD __host__ __device__
#define APIARY_DEVICE __device__
#else
#define APIARY_HD
#define APIARY_DEVICE
#endif

#if defined(__CUDA_ARCH__)
#define APIARY_DEVICE_CODE 1
#else
#define APIARY_DEVICE_CODE 0
#endif

#if !APIARY_DEVICE_CODE
#include <thread>
#endif

namespace apiary {

// Every shared word lives in device (or, for CPU tests, ordinary) memory and is accessed
// through atomic_ref with device scope; host tests exercise the same code on CPU threads.
template <class T>
using DeviceAtomic = cuda::atomic_ref<T, cuda::thread_scope_device>;

namespace mo {
inline constexpr auto relaxed = cuda::std::memory_order_relaxed;
inline constexpr auto acquire = cuda::std::memory_order_acquire;
inline constexpr auto release = cuda::std::memory_order_release;
inline constexpr auto acq_rel = cuda::std::memory_order_acq_rel;
}  // namespace mo

template <class T>
APIARY_HD inline T load_acquire(T& word) { return DeviceAtomic<T>(word).load(mo::acquire); }
template <class T>
APIARY_HD inline T load_relaxed(T& word) { return DeviceAtomic<T>(word).load(mo::relaxed); }
template <class T>
APIARY_HD inline void store_release(T& word, T value) { DeviceAtomic<T>(word).store(value, mo::release); }
template <class T>
APIARY_HD inline void store_relaxed(T& word, T value) { DeviceAtomic<T>(word).store(value, mo::relaxed); }

// The release pattern for counters that publish what came before them (a batch's spawns and
// writes) to whoever sees them change: `release_fence()`, then read-modify-writes with
// `mo_after_release_fence()`. On the GPU that is one fence and relaxed reductions that need no
// reply (an acq_rel RMW per counter waits a full memory round trip for each); on CPU threads a
// no-op and release RMWs, which ThreadSanitizer models (it ignores fences).
APIARY_HD inline void release_fence() {
#if APIARY_DEVICE_CODE
  cuda::atomic_thread_fence(cuda::std::memory_order_acq_rel, cuda::thread_scope_device);
#endif
}
APIARY_HD constexpr cuda::std::memory_order mo_after_release_fence() {
#if APIARY_DEVICE_CODE
  return cuda::std::memory_order_relaxed;
#else
  return cuda::std::memory_order_release;
#endif
}

// One-way fences for a thread that splits an acq_rel read-modify-write into its halves, to
// let a strong write ride on the release half (a fence followed by a strong write is a release
// pattern in the PTX memory model, as the RMW itself would be only for its own word):
// `release_only_fence()` before the writes it publishes, `acquire_only_fence()` after the read
// that decided. PTX ISA 8.6 split fence.acq_rel for sm_90: fence.release.gpu compiles to the
// MEMBAR without the L1 invalidation, fence.acquire.gpu to the L1 invalidation without the
// MEMBAR, so that fence, relaxed RMW and acquire cost what one acq_rel RMW costs (an acquire
// atomic_thread_fence would add a second MEMBAR). Elsewhere both are the acq_rel fence. On
// CPU threads no-ops: there callers use acq_rel RMWs and release stores, which
// ThreadSanitizer models (it ignores fences).
#if APIARY_DEVICE_CODE && __CUDA_ARCH__ >= 900 && \
    (__CUDACC_VER_MAJOR__ > 12 || (__CUDACC_VER_MAJOR__ == 12 && __CUDACC_VER_MINOR__ >= 8))
#define APIARY_SPLIT_FENCES 1
#else
#define APIARY_SPLIT_FENCES 0
#endif
APIARY_HD inline void release_only_fence() {
#if APIARY_SPLIT_FENCES
  asm volatile("fence.release.gpu;" ::: "memory");
#elif APIARY_DEVICE_CODE
  cuda::atomic_thread_fence(cuda::std::memory_order_acq_rel, cuda::thread_scope_device);
#endif
}
APIARY_HD inline void acquire_only_fence() {
#if APIARY_SPLIT_FENCES
  asm volatile("fence.acquire.gpu;" ::: "memory");
#elif APIARY_DEVICE_CODE
  cuda::atomic_thread_fence(cuda::std::memory_order_acq_rel, cuda::thread_scope_device);
#endif
}

// Back-off inside spin loops: short sleeps on the GPU, a yield on CPU threads (so that
// oversubscribed stress tests make progress).
APIARY_HD inline void spin_pause() {
#if APIARY_DEVICE_CODE
  __nanosleep(32);
#else
  std::this_thread::yield();
#endif
}

// 64-bit mixing function (splitmix64 finaliser): counter-based randomness and hashing that
// gives the same value on host and device.
APIARY_HD constexpr std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace apiary
