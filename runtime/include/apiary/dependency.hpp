// Individual dependencies (thesis 5.3): an atomic counter plus the waiting-storage slot of
// the task that waits on it.
//
// spawn_when(dep, item, n) loads the word, parks the item in the waiting storage, then adds
// n to the counter and sets the slot in one atomic; every resolve(dep) subtracts 1. Whoever
// brings the counter to zero moves the item from the waiting storage to its queue.
// Resolutions may come before the spawn: the counter goes negative, and a spawn whose load
// finds all n resolutions done enqueues its item directly.
//
// Counter and slot share one 64-bit word, so that the resolution that completes a dependency
// learns the slot from its own atomic (one memory round trip, not two), and the spawn
// publishes the parked item, adds its count and sets the slot in one atomic. (The previous
// protocol added n + 1 first, parked, then set the slot and gave back the extra 1: an atomic
// with a full fence where there is now a load.)
//
// A Dependency is 8 bytes of zero-initialised device memory owned by the user or by the
// runtime's pool; it may be reused once its task was released.
#pragma once

#include <apiary/platform.hpp>
#include <apiary/waiting_storage.hpp>

#include <cstdint>

namespace apiary {

struct Dependency {
  // The counter in the high 32 bits: +n at spawn, -1 per resolution. Signed, and wrapping
  // out of the word's top, so it never disturbs the slot below it.
  // The slot in the low 32 bits: the waiting-storage slot of the parked task (stale once it
  // was released).
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

enum class SpawnWhenOutcome { parked, direct, failed };

// The protocol, independent of where items go. `park()` reserves and writes a waiting-storage
// slot and returns it (no_slot on failure); `discard(slot)` frees a slot that park() wrote
// and nobody read; `direct()` enqueues the item itself. (Only resolutions release parked
// tasks: the spawn's single atomic leaves no window for one to complete in between.)
template <class Park, class Discard, class Direct>
APIARY_HD SpawnWhenOutcome spawn_when(Dependency& dep, std::int32_t n, Park&& park, Discard&& discard, Direct&& direct) {
  DeviceAtomic<std::uint64_t> word(dep.word);
  if (n <= 0) {
    direct();
    return SpawnWhenOutcome::direct;
  }
  // Only resolutions lower the counter, and n of them come: a counter of -n means all came
  // first. Then the spawn needs no slot: it gives the counter back and enqueues at once (the
  // acquire load read from the last resolution, so the task sees the resolutions' work).
  // Parking and discarding instead made Jacobi with per-task dependencies, where the last
  // task of a neighbourhood finds its successor resolved, 1.16x slower on an H200.
  const std::uint64_t seen = word.load(mo::acquire);
  if (Dependency::counter_of(seen) + n == 0) {
    word.fetch_add(Dependency::counts(n), mo::relaxed);
    direct();
    return SpawnWhenOutcome::direct;
  }
  const std::uint32_t slot = park();
  if (slot == no_slot) return SpawnWhenOutcome::failed;
  // Adds n and turns the slot bits into `slot`: only spawns write them (one task waits on a
  // dependency at a time), so they still hold what the load saw, and adding slot - old slot
  // carries nothing into the counter. (Resolvers leave the slot bits alone: clearing them
  // after a release, so that the spawn could skip this, made a parked chain's hop 2-3%
  // slower on an H200, an extra atomic on the word.) Release: the parked item, and whatever
  // the spawner wrote for the task, before the count that lets a resolution release it.
  // Acquire: the resolutions' work, for the direct case below.
  const std::uint64_t set_slot = std::uint64_t(slot) - std::uint64_t(Dependency::slot_of(seen));
  const std::uint64_t before = word.fetch_add(Dependency::counts(n) + set_slot, mo::acq_rel);
  if (Dependency::counter_of(before) + n != 0) return SpawnWhenOutcome::parked;
  // The last resolutions came between the load and this atomic: none of them saw the slot,
  // so the spawn takes its item back and enqueues it.
  discard(slot);
  direct();
  return SpawnWhenOutcome::direct;
}

// A held wait (below) is complete when exactly held_offset is left on its counter.
inline constexpr std::int32_t held_offset = std::int32_t(1) << 30;

// One resolution. Returns true if this call released the waiting task.
template <class Release>
APIARY_HD bool resolve(Dependency& dep, Release&& release) {
  const std::uint64_t before = DeviceAtomic<std::uint64_t>(dep.word).fetch_sub(Dependency::counts(1), mo::acq_rel);
  if (Dependency::counter_of(before) != 1) return false;
  release(Dependency::slot_of(before));
  return true;
}

// A held wait (ctx.spawn_next_when under the megakernel, handoff.hpp): the waiting task stays
// in its block's shared memory instead of the waiting storage, and the block polls the word.
// The wait begins right after the holding task (Context::begin_hold), for the resolutions
// that did not come from that task itself: the holder counts its own in a register, so a
// task that holds its continuation and then supplies all of its resolutions (a chain whose
// link resolves the dependency it holds the next link on) touches the word not at all, and
// its continuation runs next as a local hop. For the rest (n - own > 0), hold() adds them
// plus held_offset to the counter: the offset keeps the counter far above 1, so no resolution
// ever "releases" it, and the task is ready when exactly the offset is left (the resolutions
// came, before or after the hold); then the offset goes back (end_hold), which leaves the
// word as a released wait leaves it. (Counting the holder's own resolution with an atomic, as
// before, made every link of a held chain wait for that atomic's reply: docs/benchmarks.md.)

// A held wait whose n resolutions came gives the offset back: the dependency is reusable
// as after a release.
APIARY_HD inline void end_hold(Dependency& dep) {
  DeviceAtomic<std::uint64_t>(dep.word).fetch_sub(Dependency::counts(held_offset), mo::relaxed);
}

// Begins a held wait for n (> 0) more resolutions. True if they all came already: the wait
// ended at once and the task is ready without a poll; false: the block polls (held_ready).
// One atomic whose reply says so. (A second path, a reduction without reply for a holder
// that supplied none, made the code after every task larger and trees that hold nothing
// 1.01x slower: docs/benchmarks.md, "Kept: holds begun after the task".) Acquire: the
// resolvers' work. No device-scope release: the waiting task runs in the holder's block (or,
// when the run ends first, leaves through a queue, which publishes it), which sees the
// holder's work without one.
APIARY_HD inline bool hold(Dependency& dep, std::int32_t n) {
  const std::uint64_t before =
      DeviceAtomic<std::uint64_t>(dep.word).fetch_add(Dependency::counts(n + held_offset), mo::acquire);
  if (Dependency::counter_of(before) + n != 0) return false;
  end_hold(dep);
  return true;
}

// The holding block: true once the held wait's n resolutions came; it then ends the hold.
// Acquire: the resolvers' work.
APIARY_HD inline bool held_ready(Dependency& dep) {
  if (Dependency::counter_of(DeviceAtomic<std::uint64_t>(dep.word).load(mo::acquire)) != held_offset) return false;
  end_hold(dep);
  return true;
}

// One resolution by a thread that already issued a release fence after the work it
// guards (a task resolving many dependencies fences once, then resolves each with a
// relaxed atomic). Returns true if this call released the waiting task.
template <class Release>
APIARY_HD bool resolve_after_fence(Dependency& dep, Release&& release) {
#if APIARY_DEVICE_CODE
  const std::uint64_t before = DeviceAtomic<std::uint64_t>(dep.word).fetch_sub(Dependency::counts(1), mo::relaxed);
  if (Dependency::counter_of(before) != 1) return false;
  // The parked item and the spawner's work, as the acq_rel resolve reads them. The one-way
  // fence: an acquire atomic_thread_fence is a full MEMBAR (platform.hpp).
  acquire_only_fence();
#else
  // CPU threads: ThreadSanitizer ignores fences, so the atomic itself orders.
  const std::uint64_t before = DeviceAtomic<std::uint64_t>(dep.word).fetch_sub(Dependency::counts(1), mo::acq_rel);
  if (Dependency::counter_of(before) != 1) return false;
#endif
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
