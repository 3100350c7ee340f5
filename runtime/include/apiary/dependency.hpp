// Individual dependencies (thesis 5.3): an atomic counter plus the waiting-storage slot of
// the task that waits on it.
//
// spawn_when(dep, item, n) adds n + 1 (so that resolutions running concurrently cannot reach
// zero before the task is parked), parks the item, then subtracts 1; every resolve(dep)
// subtracts 1. Whoever brings the counter to zero moves the item from the waiting storage to
// its queue. Resolutions may come before the spawn: the counter goes negative, and a spawn
// that finds all n resolutions already done enqueues the item directly.
//
// A Dependency is 8 bytes of zero-initialised device memory owned by the user or by the
// runtime's pool; it may be reused once its task was released.
#pragma once

#include <apiary/platform.hpp>
#include <apiary/waiting_storage.hpp>

#include <cstdint>

namespace apiary {

struct Dependency {
  std::int32_t counter = 0;       // (n + 1) at spawn, -1 per resolution and after parking
  std::uint32_t slot = no_slot;   // waiting-storage slot of the parked task
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
  DeviceAtomic<std::int32_t> counter(dep.counter);
  if (n <= 0) {
    direct();
    return SpawnWhenOutcome::direct;
  }
  const std::int32_t before = counter.fetch_add(n + 1, mo::acq_rel);
  if (before + n + 1 == 1) {
    // All n resolutions arrived before the spawn: no parking needed.
    counter.fetch_sub(1, mo::relaxed);
    direct();
    return SpawnWhenOutcome::direct;
  }
  const std::uint32_t slot = park();
  if (slot == no_slot) return SpawnWhenOutcome::failed;
  store_relaxed(dep.slot, slot);  // published by the release below
  if (counter.fetch_sub(1, mo::acq_rel) == 1) {
    release(slot);
    return SpawnWhenOutcome::released_now;
  }
  return SpawnWhenOutcome::parked;
}

// One resolution. Returns true if this call released the waiting task.
template <class Release>
APIARY_HD bool resolve(Dependency& dep, Release&& release) {
  if (DeviceAtomic<std::int32_t>(dep.counter).fetch_sub(1, mo::acq_rel) != 1) return false;
  release(load_relaxed(dep.slot));
  return true;
}

// Adds k expected resolutions to a dependency whose task is already parked or spawned. Only
// a holder of an outstanding count may call it (its own count keeps the counter above zero),
// e.g. a task that hands part of its obligation to children it is about to spawn.
APIARY_HD inline void retain(Dependency& dep, std::int32_t k) {
  if (k != 0) DeviceAtomic<std::int32_t>(dep.counter).fetch_add(k, mo::relaxed);
}

}  // namespace apiary
