// The waiting storage: a fixed array of slots that holds tasks parked on an individual
// dependency until its counter reaches zero (thesis 5.2).
//
// Each slot has a state word: free, reserved, filled. Insertion is two steps: reserve a free
// slot (CAS free -> reserved, starting where the insert policy says and probing linearly),
// then write the item and mark the slot filled. Extraction reads the item, hands it to the
// caller and frees the slot with one release store (the item is read before the slot can be
// reserved again). A caller that issues a release fence anyway after reading may split the
// two: read() now, free_after_fence() after its next fence, which saves the store's own
// fence (the megakernel's released tasks: Context::resolve).
//
// The storage does not publish items itself: the slot number travels from the writer to the
// extractor through a release/acquire pair of the caller's (the dependency word,
// dependency.hpp), which orders the item before its extraction. So an extraction reads the
// item in one memory round trip, and a parked task costs no fence of its own. The filled
// state marks the parked slots for the end-of-run report.
#pragma once

#include <apiary/device_error.hpp>
#include <apiary/platform.hpp>
#include <apiary/queue.hpp>

#include <cstddef>
#include <cstdint>

namespace apiary {

inline constexpr std::uint32_t no_slot = ~0u;

// Default insert policy: a pseudo-random start slot derived from a caller-supplied hint (task
// identity, thread id, clock), then linear probing. A policy is any type with
// `std::uint32_t start(std::uint64_t hint, std::uint32_t capacity) const`.
struct RandomStartLinearProbe {
  APIARY_HD std::uint32_t start(std::uint64_t hint, std::uint32_t capacity) const {
    return static_cast<std::uint32_t>(mix64(hint) % capacity);
  }
};

// Alternative policy: always probe from slot 0 (dense packing, more contention). Useful for
// tests and as an example of a custom policy.
struct FirstFitProbe {
  APIARY_HD std::uint32_t start(std::uint64_t, std::uint32_t) const { return 0; }
};

// A slot's state word. Zeroed memory is a storage of free slots.
enum SlotState : std::uint32_t { slot_free = 0, slot_reserved = 1, slot_filled = 2 };

struct WaitingStorageCounters {
  alignas(128) std::int64_t parked;  // tasks currently in the storage
};

struct WaitingStorageView {
  // Slots a device needs beyond the tasks parked at once: a slot that a thread read may stay
  // taken until that thread's next release fence (free_after_fence, Context::release), one per
  // thread at most, so one per thread the device can hold. The runtime allocates
  // Config::waiting_storage_capacity + slack slots, so that any run that parks at most the
  // configured capacity at once succeeds.
  static std::uint32_t slack(std::uint32_t sm_count, std::uint32_t max_threads_per_sm) {
    return sm_count * max_threads_per_sm;
  }

  std::uint32_t* state = nullptr;      // capacity SlotState words
  std::uint32_t* queue_of = nullptr;   // target queue of each parked task
  std::uint64_t* tag_of = nullptr;     // dependency id of each parked task (trace)
  std::byte* items = nullptr;          // capacity * stride bytes
  WaitingStorageCounters* counters = nullptr;
  std::uint32_t capacity = 0;
  std::uint32_t stride = 0;            // bytes per slot, multiple of 8
  ErrorWord* error = nullptr;

  // Reserves a free slot; raises waiting_storage_full and returns no_slot if none is free.
  template <class Policy = RandomStartLinearProbe>
  APIARY_HD std::uint32_t reserve(std::uint64_t hint, Policy policy = {}) const {
    if (capacity == 0) {
      raise_error(*error, ErrorCode::waiting_storage_full, 0, 0);
      return no_slot;
    }
    const std::uint32_t start = policy.start(hint, capacity);
    for (std::uint32_t probe = 0; probe < capacity; ++probe) {
      std::uint32_t slot = start + probe;
      if (slot >= capacity) slot -= capacity;
      // Every probe loads before it CASes. A bare CAS as the first probe (a free slot then
      // costs one round trip, not two) made a dependency-chain link 4% faster but parking 4M
      // waiters 1.34x slower on an H200: the atomics cost the L2 more than the loads.
      DeviceAtomic<std::uint32_t> word(state[slot]);
      if (word.load(mo::relaxed) != slot_free) continue;
      std::uint32_t expected = slot_free;
      if (word.compare_exchange_strong(expected, std::uint32_t(slot_reserved), mo::acquire, mo::relaxed)) return slot;
    }
    raise_error(*error, ErrorCode::waiting_storage_full, 0, capacity);
    return no_slot;
  }

  // Writes a reserved slot and marks it filled. The caller publishes the slot (see above).
  APIARY_HD void write(std::uint32_t slot, std::uint32_t queue, const void* item, std::uint32_t bytes,
                       std::uint64_t tag) const {
    copy_words(items + std::size_t(slot) * stride, item, bytes);
    queue_of[slot] = queue;
    if (tag_of) tag_of[slot] = tag;
    DeviceAtomic<std::int64_t>(counters->parked).fetch_add(1, mo::relaxed);
    store_relaxed(state[slot], std::uint32_t(slot_filled));
  }

  // Reads a filled slot into `item` (`bytes` <= stride bytes) and frees it. Returns the
  // target queue. The caller acquired the slot number from the writer's release (see above).
  // One release store frees a slot (here and in discard): the item's reads or writes come
  // before any reuse. (With a reserved and a filled flag, cleared one after the other,
  // resolving 4M dependencies of fan-in 1 took 1.17x as long on an H200.)
  APIARY_HD std::uint32_t extract(std::uint32_t slot, void* item, std::uint32_t bytes, std::uint64_t* tag = nullptr) const {
    const std::uint32_t queue = read(slot, item, bytes, tag);
    store_release(state[slot], std::uint32_t(slot_free));
    return queue;
  }

  // extract() without the free: the task leaves the storage (it no longer counts as parked),
  // its slot stays taken until free_after_fence(slot).
  APIARY_HD std::uint32_t read(std::uint32_t slot, void* item, std::uint32_t bytes, std::uint64_t* tag = nullptr) const {
    copy_words(item, items + std::size_t(slot) * stride, bytes < stride ? bytes : stride);
    const std::uint32_t queue = queue_of[slot];
    if (tag) *tag = tag_of ? tag_of[slot] : 0;
    DeviceAtomic<std::int64_t>(counters->parked).fetch_sub(1, mo::relaxed);
    return queue;
  }

  // Frees a slot read by read(), by the thread that read it, after it issued a release fence
  // (release_only_fence or stronger) that follows the read: the fence and this strong store
  // form a release pattern, so the reads come before any reuse, as extract's store orders them.
  APIARY_HD void free_after_fence(std::uint32_t slot) const {
#if APIARY_DEVICE_CODE
    store_relaxed(state[slot], std::uint32_t(slot_free));
#else
    store_release(state[slot], std::uint32_t(slot_free));  // ThreadSanitizer ignores fences
#endif
  }

  // Frees a slot that was written but never read (a spawn whose resolutions all came first
  // takes its item back).
  APIARY_HD void discard(std::uint32_t slot) const {
    store_release(state[slot], std::uint32_t(slot_free));
    DeviceAtomic<std::int64_t>(counters->parked).fetch_sub(1, mo::relaxed);
  }

  APIARY_HD std::int64_t parked_hint() const { return load_relaxed(counters->parked); }
};

}  // namespace apiary
