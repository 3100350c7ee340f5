// Individual dependencies (thesis 5.3): an atomic counter plus the waiting-storage slot of
// the task that waits on it.
//
// spawn_when(dep, item, n) adds n + 1 (so that resolutions running concurrently cannot reach
// zero before the task is parked), parks the item, then subtracts 1; every resolve(dep)
// subtracts 1. Whoever brings the counter to zero moves the item from the waiting storage to
// its queue. Resolutions may come before the spawn: the counter goes negative, and a spawn
// that finds all n resolutions already done enqueues the item directly.
//
// Counter and slot share one 64-bit word, so that the resolution that completes a dependency
// learns the slot from its own atomic (one memory round trip, not two), and the spawn sets
// the slot and gives up its extra count in one atomic, which also publishes the parked item
// (waiting_storage.hpp).
//
// A Dependency is 8 bytes of zero-initialised device memory owned by the user or by the
// runtime's pool; it may be reused once its task was released.
#pragma once

#include <apiary/platform.hpp>
#include <apiary/waiting_storage.hpp>

#include <cstdint>

namespace apiary {

struct Dependency {
  // The counter in the high 32 bits: (n + 1) at spawn, -1 per resolution and after parking.
  // Signed, and wrapping out of the word's top, so it never disturbs the slot below it.
  // The slot in the low 32 bits: the waiting-storage slot of the parked task.
  std::uint64_t word = 0;

  APIARY_HD static constexpr std::int32_t counter_of(std::uint64_t w) { return static_cast<std::int32_t>(w >> 32); }
  APIARY_HD static constexpr std::uint32_t slot_of(std::uint64_t w) { return static_cast<std::uint32_t>(w); }
  // The word difference that adds k to the counter (k may be negative).
  APIARY_HD static constexpr std::uint64_t counts(std::int32_t k) { return std::uint64_t(std::uint32_t(k)) << 32; }

  // For the host, after a run (not while tasks may change the word).
  std::int32_t counter() const { return counter_of(word); }
};
static_assert(sizeof(Dependency) == 8);

// The identity of a dependency in traces and reports.
APIARY_HD inline std::uint64_t dependency_id(const Dependency& dep) {
  return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(&dep));
}

enum class SpawnWhenOutcome { parked, released_now, direct, failed };

// The protocol, independent of where items go. `park()` reserves and writes a waiting-storage
// slot and returns it (no_slot on failure); `direct()` enqueues the item itself;
// `release(slot)` moves a parked item to its queue.
template <class Park, class Direct, class Release>
APIARY_HD SpawnWhenOutcome spawn_when(Dependency& dep, std::int32_t n, Park&& park, Direct&& direct,
                                      Release&& release) {
  DeviceAtomic<std::uint64_t> word(dep.word);
  if (n <= 0) {
    direct();
    return SpawnWhenOutcome::direct;
  }
  const std::uint64_t before = word.fetch_add(Dependency::counts(n + 1), mo::acq_rel);
  if (Dependency::counter_of(before) + n + 1 == 1) {
    // All n resolutions arrived before the spawn: no parking needed.
    word.fetch_sub(Dependency::counts(1), mo::relaxed);
    direct();
    return SpawnWhenOutcome::direct;
  }
  const std::uint32_t slot = park();
  if (slot == no_slot) return SpawnWhenOutcome::failed;
  // Sets the slot and subtracts the extra 1 in one atomic. Only the spawn writes the slot
  // bits (one task waits on a dependency at a time), so they still hold what `before` read:
  // adding slot - old slot turns them into `slot` and carries nothing into the counter.
  const std::uint64_t set_slot = std::uint64_t(slot) - std::uint64_t(Dependency::slot_of(before));
  if (Dependency::counter_of(word.fetch_add(set_slot - Dependency::counts(1), mo::acq_rel)) == 1) {
    release(slot);
    return SpawnWhenOutcome::released_now;
  }
  return SpawnWhenOutcome::parked;
}

// One resolution. Returns true if this call released the waiting task.
template <class Release>
APIARY_HD bool resolve(Dependency& dep, Release&& release) {
  const std::uint64_t before = DeviceAtomic<std::uint64_t>(dep.word).fetch_sub(Dependency::counts(1), mo::acq_rel);
  if (Dependency::counter_of(before) != 1) return false;
  release(Dependency::slot_of(before));
  return true;
}

// Adds k expected resolutions to a dependency whose task is already parked or spawned. Only
// a holder of an outstanding count may call it (its own count keeps the counter above zero),
// e.g. a task that hands part of its obligation to children it is about to spawn.
APIARY_HD inline void retain(Dependency& dep, std::int32_t k) {
  if (k != 0) DeviceAtomic<std::uint64_t>(dep.word).fetch_add(Dependency::counts(k), mo::relaxed);
}

}  // namespace apiary
