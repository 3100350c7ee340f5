// A block's hand-off slot (after the "LIFO slot" of Go's and Tokio's schedulers): the first
// continuation (ctx.spawn_next) or dependency-released task (the waiter a ctx.resolve frees)
// that a single thread enqueues during a batch, into a queue the block is allowed to run next,
// stays in the block's shared memory and runs right after the batch instead of travelling
// through its queue. Plain spawns always go through the queue: a child spawned while its
// parent still works must be free to start on another block (measured: handing those off too
// made the 11-type synthetic tree's span 29% longer in individual mode on an H200).
//
// Why: a hop through a queue is a chain of dependent L2 round trips and fences (reserve,
// wait for the slot, publish, commit; then another block polls, claims, waits for the
// publish, frees the slot) — about 3.1 us per hop on an H200 (docs/benchmarks.md). A chain of
// tasks, or an iterative graph whose tasks each release one successor, pays that on every
// link. Only one task per block and batch takes the slot, and warp-aggregated spawns (several
// lanes at once) never do, so fan-out still spreads over the grid through the queues.
//
// A hop through the slot touches no global memory in the common case:
//  - Pending count: a handed-off task is not counted when it is spawned; the batch that
//    spawned it counts it when it finishes (PhaseController::finish_handing_off), which is
//    free when both are in the same phase. Sound because the spawning task stays pending
//    until then, and schedulers only accept queues eligible in the batch's phase, which
//    cannot end while the batch runs.
//  - Statistics and heartbeat: the executed count and the watchdog's progress counter are
//    added once per `check_every` hops, with the status read below (and when the chain ends).
//  - Run status: read once per `check_every` hops, and at once after a task of this block
//    called ctx.stop(). A stop or error from elsewhere may so let up to check_every - 1
//    handed-off tasks run after it, as a batch claimed before the stop runs to its end.
//
// Held tasks (ctx.spawn_next_when, megakernel only): a continuation that must also wait for a
// dependency can wait here instead of in the waiting storage (dependency.hpp, "held wait").
// The block goes on running other batches meanwhile and polls the dependency between them
// and while idle; once it is resolved the task runs as the block's next batch. The pending
// count takes the task when the batch that held it finishes, as for any hand-off, so the run
// cannot end under it; a run that stops first sends it to its queue (reported as queued).
// Only phaseless task types are held (they are eligible in every phase). Why: an iterative
// graph whose tasks each wait for a barrier (Jacobi's stages) otherwise pays, per iteration,
// a park, a release and a queue hop for every task; held, the barrier's resolutions are all
// it costs, and each task runs again on the block that holds its successor. The wait begins
// right after the task that held it (begin_hold, called by Context::begin_hold), for the
// resolutions that task did not supply itself: where it supplied all (a task that holds its
// continuation and then resolves that dependency itself), or the others came first, the task
// is ready at once: no poll, and the hop can be local.
//
// Gated tasks (ctx.hold_next_at, megakernel only, gate.hpp): the same, for a task that waits
// until a word many tasks wait on reaches a count (a barrier's arrivals), instead of a
// dependency of its own. Nothing else releases it, so only a block that holds it can run it.
//
// Local hops (take_local_hop, handoff_batches.hpp): the worker that ran a handed-off task
// takes the task that task handed off to its own queue itself, without going back through the
// block's scheduling loop (its barriers and batch set-up), while the hop needs nothing but
// this slot's bookkeeping and, once per check_every hops, the run status read above.
// A task held at a gate is such a hop too once the gate opens (megakernel, task types that
// declare waits_at_gates, task_type.hpp): the worker polls the gate itself, up to gate_polls
// times (about as long as a barrier of short tasks takes to open), and otherwise leaves the
// task to the scheduler's loop as before. Why: a held task's wait for its gate went through
// the loop (finish the batch, poll between batch searches, set up the next batch), 5,200-6,600
// cycles from one Jacobi task's end to its successor's start on an H200, where a local hop
// cost ~1,300 on an H100. The bound keeps a block from waiting long on a gate while tasks
// that would open it sit in a queue (more held tasks than blocks).
//
// Header-only and __host__ __device__ so the CPU stress tests run the same code. On the
// device the slot lives in shared memory and is accessed with shared-memory instructions
// (block_atomic.hpp).
#pragma once

#include <apiary/block_atomic.hpp>
#include <apiary/dependency.hpp>
#include <apiary/gate.hpp>
#include <apiary/platform.hpp>
#include <apiary/queue.hpp>
#include <apiary/trace_record.hpp>

#include <cstddef>
#include <cstdint>

namespace apiary {

template <std::uint32_t Bytes>
struct Handoff {
  static constexpr std::uint32_t item_bytes = Bytes;
  static constexpr std::uint32_t check_every = 16;  // hops between reads of the run status
  static constexpr std::uint32_t gate_polls = 8;     // await_gate's polls before it gives up

  std::uint64_t accept;     // bit q: tasks of queue q may be handed off (set by the scheduler)
  std::uint64_t hold_accept;  // bit q: tasks of queue q may be held for a dependency (set by the scheduler)
  Dependency* waits_on;     // the held task's dependency; nullptr: the task is ready (unless gated)
  Gate gate;                // the gated task's gate; gate.word == nullptr: not gated
  std::uint32_t fresh;      // the task was put during the running batch and is not counted pending yet
  std::uint32_t was_held;   // the ready task waited here for `tag` (its release is not traced yet)
  std::uint32_t taken;      // 0: empty; 1: a task was put (or is being put)
  std::uint32_t queue;
  std::uint64_t tag;        // dependency id, for traces
  std::uint32_t stopping;   // a task of this block called ctx.stop()
  std::uint32_t unchecked;  // hops since the run status was last read
  std::uint32_t uncounted_queue;  // hops whose executed count is not yet added, and their queue
  std::uint32_t uncounted;
  std::uint32_t chained;    // the worker runs the task here next (take_local_hop's answer)
  // Per-queue workers (drain_queue, timesliced.cuh): whether the block looks at its queue
  // again after this batch. Thread 0 clears it when its claim took every pending task of the
  // run; a task that enqueues to its own queue sets it (Context::enqueue). In shared memory,
  // not a register of thread 0's loop: kept there (with the claim's verdict), the workers took
  // 2-12 more registers.
  std::uint32_t look_again;
  alignas(8) std::byte item[Bytes];

  // Before the first batch (shared memory starts undefined).
  APIARY_HD void reset() {
    accept = 0;
    hold_accept = 0;
    waits_on = nullptr;
    gate.word = nullptr;
    fresh = 0;
    was_held = 0;
    taken = 0;
    stopping = 0;
    unchecked = 0;
    uncounted = 0;
    chained = 0;
    look_again = 1;
  }

  // One thread: claims the slot for a task of queue q. False if q is not accepted or another
  // thread of the block was first.
  APIARY_HD bool try_take(std::uint32_t q) { return try_claim(accept, q); }
  // The same for a task that is to wait here for a dependency (put_held).
  APIARY_HD bool try_hold(std::uint32_t q) { return try_claim(hold_accept, q); }

  // The thread that took the slot writes the task (bytes <= Bytes, 8-byte aligned source).
  // Readers see it after the block barrier that ends the batch.
  APIARY_HD void put(std::uint32_t q, const void* source, std::uint32_t bytes, std::uint64_t dependency_tag) {
    copy_words(item, source, bytes);
    queue = q;
    tag = dependency_tag;
    waits_on = nullptr;
    gate.word = nullptr;
    fresh = 1;
  }
  // The same for a task that waits for resolutions of `dep` (after try_hold); the wait
  // begins after the holding task (begin_hold).
  APIARY_HD void put_held(std::uint32_t q, const void* source, std::uint32_t bytes, Dependency& dep) {
    put(q, source, bytes, dependency_id(dep));
    waits_on = &dep;
  }
  // The same for a task that waits until `g` opens (after try_hold; gate.hpp).
  APIARY_HD void put_gated(std::uint32_t q, const void* source, std::uint32_t bytes, const Gate& g) {
    put(q, source, bytes, no_dependency);
    gate = g;
  }

  // Read after a block barrier: whether a task waits here.
  APIARY_HD bool full() const { return detail::block_load(taken) != 0; }

  // Thread 0, after a block barrier: whether the task here may run now (a held task once its
  // dependency is resolved, a gated one once its gate is open; this polls them).
  APIARY_HD bool ready() {
    if (waits_on != nullptr) {
      if (!held_ready(*waits_on)) return false;
      waits_on = nullptr;
      was_held = 1;  // traced as its dependency's release
      return true;
    }
    if (gate.word != nullptr) {
      if (!gate_open(gate)) return false;
      gate.word = nullptr;
    }
    return true;
  }
  // The thread that held a task here (put_held), right after its task: begins the wait for
  // the `remaining` resolutions that task did not supply itself. True if the task is ready
  // now (nothing remains, or the rest came first), as if handed off; false while it waits
  // (the block polls it between batches, ready()). No barrier needed: this thread wrote the
  // wait, and thread 0 polls the slot only between batches.
  APIARY_HD bool begin_hold(std::int32_t remaining) {
    if (remaining > 0 && !hold(*waits_on, remaining)) return false;
    waits_on = nullptr;
    return true;
  }

  // Thread 0, after a block barrier: whether a task waits here for a dependency or a gate.
  APIARY_HD bool held() const { return full() && (waits_on != nullptr || gate.word != nullptr); }
  // Thread 0: the waiting task leaves the slot unrun (the run ended first).
  APIARY_HD void forget_wait() {
    waits_on = nullptr;
    gate.word = nullptr;
  }

  // A thread whose task enqueued a task to the running task's own queue (see look_again).
  APIARY_HD void note_own_queue_spawn() { detail::block_store(look_again, 1u); }
  // Thread 0, after a claim that took every pending task of the run (the block's first; the
  // flag is set from reset() until then, and only a later own-queue spawn sets it again, so a
  // claim that was not sole has nothing to store).
  APIARY_HD void skip_next_look() { detail::block_store(look_again, 0u); }
  APIARY_HD bool looks_again() const { return detail::block_load(look_again) != 0; }

  // The task that ran the handed-off item read it: the slot may take the next one.
  APIARY_HD void clear() { detail::block_store(taken, 0u); }

  // Thread 0, before a hand-off hop: whether the run status is due to be read.
  APIARY_HD bool status_due() {
    if (++unchecked < check_every) return false;
    unchecked = 0;
    return true;
  }

  // Thread 0: defers the executed count of a hop from queue q; false when the count must be
  // added now (another queue's count is pending). The deferred counts are added when the run
  // status is read (check_in in handoff_batches.hpp: from next_handed_off or a local hop), so
  // at most check_every hops wait: one bound for both.
  // (Each with a bound of its own, the two fell out of step and a chain left its local hops
  // for the scheduler's loop twice per check_every hops: 1,179 batches for 10,000 links, at
  // ~7,100 cycles each against ~1,320 for a local hop, H100, profiled build.)
  APIARY_HD bool defer_count(std::uint32_t q) {
    if (uncounted != 0 && uncounted_queue != q) return false;
    uncounted_queue = q;
    ++uncounted;
    return true;
  }

  // Thread 0, right after the task of a handed-off batch of one (queue q) ran: whether the
  // task it handed off can be the next hop in this worker (a local hop, take_local_hop in
  // handoff_batches.hpp) — a fresh task of queue q that waits for nothing (any more:
  // begin_hold), no ctx.stop() in the block, the executed count deferrable.
  // Every field is read before any is tested (`&`, not `&&`): one round of shared-memory
  // loads on the hop rather than three that wait for each other's branches.
  APIARY_HD bool local_hop_possible(std::uint32_t q) const { return hop_candidate(q) & (gate.word == nullptr); }
  // The same for a fresh task of queue q that waits for a gate only: the worker may wait for
  // the gate itself (await_gate) and then take the hop.
  APIARY_HD bool gated_hop_possible(std::uint32_t q) const { return hop_candidate(q) & (gate.word != nullptr); }
  // Thread 0, for a gated hop: polls the task's gate up to gate_polls times (each an acquire
  // of its word, ready()). True once it is open (the task no longer waits); false with the
  // task still held, for the scheduler's loop.
  APIARY_HD bool await_gate() {
    for (std::uint32_t poll = 1;; ++poll) {
      if (ready()) return true;
      if (poll == gate_polls) return false;
      spin_pause();
    }
  }
  // Takes that hop, doing what finish_batch would do for it: counted with the batch
  // (deferred: same queue, same phase).
  APIARY_HD void take_hop(std::uint32_t q) {
    fresh = 0;
    defer_count(q);  // cannot fail (local_hop_possible)
  }
  // The status read that a local hop made found the run ending: the scheduler's loop reads it
  // again before the next hop (next_handed_off) and ends the chain there.
  APIARY_HD void recheck_status() { unchecked = check_every - 1; }

 private:
  // local_hop_possible without the gate's test.
  APIARY_HD bool hop_candidate(std::uint32_t q) const {
    const bool ready = full() & (fresh != 0) & (queue == q) & (waits_on == nullptr);
    const bool free_to_run = detail::block_load(stopping) == 0;
    const bool countable = (uncounted == 0) | (uncounted_queue == q);
    return ready & free_to_run & countable;
  }
  // try_take / try_hold: q must be in `mask`, and the slot free.
  APIARY_HD bool try_claim(std::uint64_t mask, std::uint32_t q) {
    if (((mask >> q) & 1u) == 0) return false;
    if (detail::block_load(taken) != 0) return false;  // cheap early out
    return detail::block_cas(taken, 0u, 1u);
  }
};

}  // namespace apiary
