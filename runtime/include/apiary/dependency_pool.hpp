// The runtime's pool of dependencies (ctx.new_dependency), zeroed before each run, and a
// block's share of it.
//
// The pool is a bump allocator: one cursor that every allocation advances. A megakernel block
// takes the pool's indices `share` at a time into its shared memory (BlockDependencies) and
// hands them out from there, so that most allocations cost a shared-memory atomic instead of
// a round trip to L2: a task that allocates the dependency its successor waits on (a held
// chain, the synthetic tree's joins) has that round trip on its critical path. Only blocks
// that live for the whole run take shares (the megakernel's): a timesliced or
// device-controller block ends with its launch, and the indices left in its share would be
// lost with it, round after round. Such a block still has a BlockDependencies, set up never
// to take a share (reset_without_share), so that every task reaches the pool the same way and
// the megakernel's tasks test no pointer for it (ctx.new_dependency: a generic null test of a
// shared-memory address, about 2% of a held chain's hop on an H100).
//
// Capacity: the indices a block took but did not hand out are lost for this run, at most
// `share` per block. The runtime therefore allocates `capacity + slack` dependencies (slack:
// a share for every block the device can hold at once), so that any run that allocates at
// most `capacity` succeeds under every scheduler, and reports exhaustion against the
// configured capacity.
#pragma once

#include <apiary/block_atomic.hpp>
#include <apiary/dependency.hpp>
#include <apiary/platform.hpp>

#include <cstdint>

namespace apiary {

struct DependencyPool {
  Dependency* deps = nullptr;
  std::uint32_t* next = nullptr;  // bump allocator cursor
  std::uint32_t capacity = 0;     // Config::dependency_capacity: what every run may allocate
  std::uint32_t limit = 0;        // dependencies allocated (capacity + slack): valid indices

  // Indices the device may lose in blocks' shares: one share per block it can hold.
  static constexpr std::uint32_t share = 16;
  static constexpr std::uint32_t max_blocks_per_sm = 32;  // every architecture since sm_50 (CUDA's limit)
  static std::uint32_t slack(std::uint32_t sm_count) { return sm_count * max_blocks_per_sm * share; }

  // Takes k consecutive indices; the first of them (>= limit: the pool is exhausted).
  APIARY_HD std::uint32_t take(std::uint32_t k) const { return DeviceAtomic<std::uint32_t>(*next).fetch_add(k, mo::relaxed); }
};

// A block's share of the pool, in its shared memory: one word, the share's first index in
// the high half and how many indices were handed out of it in the low half. Any thread of
// the block may take an index: an atomic add hands out the next one; the thread that finds
// the share just used up takes the next share from the pool (and its first index for itself)
// and publishes it; threads that come in between take theirs from the pool directly.
struct BlockDependencies {
  std::uint64_t word;

  // Before the first task (shared memory starts undefined): an empty share, so the first
  // take fetches one.
  APIARY_HD void reset() { word = DependencyPool::share; }
  // The same for a block that ends with its launch: the count starts past the share, so every
  // take goes to the pool itself and the block keeps no indices (it would need 2^31 takes in
  // one launch to reach the first index's half of the word).
  APIARY_HD void reset_without_share() { word = std::uint64_t(1) << 31; }

  // One index of `pool` (>= pool.limit: exhausted).
  APIARY_HD std::uint32_t take(const DependencyPool& pool) {
    const std::uint64_t seen = detail::block_fetch_add(word, 1);
    const auto handed = static_cast<std::uint32_t>(seen), first = static_cast<std::uint32_t>(seen >> 32);
    if (handed < DependencyPool::share) return first + handed;
    if (handed > DependencyPool::share) return pool.take(1);  // another thread is fetching the next share, or none
    const std::uint32_t fresh = pool.take(DependencyPool::share);
    // Published even when the pool is exhausted: the indices it hands out are then >= limit
    // too, and the run fails on the first of them (the error stops it).
    detail::block_exchange(word, (std::uint64_t(fresh) << 32) | 1u);
    return fresh;
  }
};

}  // namespace apiary
