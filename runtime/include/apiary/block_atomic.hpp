// Relaxed block-scope atomics on words in a block's shared memory (the hand-off slot, the
// block's share of the dependency pool). On the device they are shared-memory instructions:
// the same accesses through generic addresses cost about 300 more cycles per hand-off hop in a
// profiled build on an H200. On CPU threads (the stress tests) they are atomic_ref with block
// scope, so the same header-only code runs there.
#pragma once

#include <apiary/platform.hpp>

#include <cstdint>

namespace apiary::detail {

#if APIARY_DEVICE_CODE
__device__ inline std::uint32_t shared_address(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}
__device__ inline std::uint32_t block_load(const std::uint32_t& word) {
  std::uint32_t v;
  asm volatile("ld.relaxed.cta.shared.u32 %0, [%1];" : "=r"(v) : "r"(shared_address(&word)) : "memory");
  return v;
}
__device__ inline void block_store(std::uint32_t& word, std::uint32_t v) {
  asm volatile("st.relaxed.cta.shared.u32 [%0], %1;" ::"r"(shared_address(&word)), "r"(v) : "memory");
}
// An atomic store, for a word that other threads update with atomics meanwhile (a plain
// store there is a race to compute-sanitizer's racecheck, which knows atomics only).
__device__ inline void block_exchange(std::uint64_t& word, std::uint64_t v) {
  [[maybe_unused]] std::uint64_t old;  // the exchange's result, not needed
  asm volatile("atom.relaxed.cta.shared.exch.b64 %0, [%1], %2;" : "=l"(old) : "r"(shared_address(&word)), "l"(v) : "memory");
}
__device__ inline bool block_cas(std::uint32_t& word, std::uint32_t expected, std::uint32_t desired) {
  std::uint32_t old;
  asm volatile("atom.relaxed.cta.shared.cas.b32 %0, [%1], %2, %3;"
               : "=r"(old)
               : "r"(shared_address(&word)), "r"(expected), "r"(desired)
               : "memory");
  return old == expected;
}
__device__ inline std::uint64_t block_fetch_add(std::uint64_t& word, std::uint64_t v) {
  std::uint64_t old;
  asm volatile("atom.relaxed.cta.shared.add.u64 %0, [%1], %2;" : "=l"(old) : "r"(shared_address(&word)), "l"(v) : "memory");
  return old;
}
#else
template <class T>
using BlockAtomic = cuda::atomic_ref<T, cuda::thread_scope_block>;
inline std::uint32_t block_load(const std::uint32_t& word) {
  return BlockAtomic<std::uint32_t>(const_cast<std::uint32_t&>(word)).load(mo::relaxed);
}
inline void block_store(std::uint32_t& word, std::uint32_t v) { BlockAtomic<std::uint32_t>(word).store(v, mo::relaxed); }
inline void block_exchange(std::uint64_t& word, std::uint64_t v) { BlockAtomic<std::uint64_t>(word).exchange(v, mo::relaxed); }
inline bool block_cas(std::uint32_t& word, std::uint32_t expected, std::uint32_t desired) {
  return BlockAtomic<std::uint32_t>(word).compare_exchange_strong(expected, desired, mo::relaxed, mo::relaxed);
}
inline std::uint64_t block_fetch_add(std::uint64_t& word, std::uint64_t v) {
  return BlockAtomic<std::uint64_t>(word).fetch_add(v, mo::relaxed);
}
#endif

}  // namespace apiary::detail
