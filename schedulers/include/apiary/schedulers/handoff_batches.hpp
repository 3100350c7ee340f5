// How a block-scheduled worker (a megakernel, timesliced or device-controller block, or a CPU
// thread in the stress tests) runs the tasks handed off to it (runtime/.../handoff.hpp): the
// batch of one that runs a handed-off task, and the batch epilogue that
// counts a finished batch together with the task it handed off. Shared by the schedulers and
// the host stress tests so both exercise the same code.
#pragma once

#include <apiary/handoff.hpp>
#include <apiary/phase_table.hpp>
#include <apiary/platform.hpp>
#include <apiary/queue.hpp>
#include <apiary/run_state.hpp>
#include <apiary/schedulers/batch_picker.hpp>

#include <cstdint>

namespace apiary {

// The batch of one that runs the task handed off during `previous`. Its phase is still
// current: nothing could end it while `previous` ran, and the handed-off task is pending.
APIARY_HD inline Batch handed_off_batch(const Batch& previous, std::uint32_t queue) {
  Batch batch;
  batch.queue = queue;
  batch.count = 1;
  batch.phase = previous.phase;
  batch.handed_off = true;
  return batch;
}

// Adds the executed counts that hand-off hops deferred.
template <std::uint32_t B>
APIARY_HD void count_deferred(const QueueView* queues, Handoff<B>& handoff) {
  if (handoff.uncounted == 0) return;
  DeviceAtomic<std::uint64_t>(queues[handoff.uncounted_queue].counters->executed).fetch_add(handoff.uncounted, mo::relaxed);
  handoff.uncounted = 0;
}

// A chain of hand-off hops checks in once per check_every hops (Handoff::status_due): adds
// the executed counts its hops deferred, moves the watchdog's heartbeat (a chain of hops
// finishes no batch that would), and reads whether the run goes on.
template <std::uint32_t B>
APIARY_HD bool check_in(const QueueView* queues, const PhaseController& pc, Handoff<B>& handoff) {
  count_deferred(queues, handoff);
  pc.heartbeat();
  return pc.running();
}

// After a batch: the task handed off during it, as the next batch (true). When the run is
// ending, the task goes to its queue instead, where the report counts it as queued like every
// task that did not run, and `next` stops. False if nothing was handed off. `previous` and
// `next` may be the same object.
// A held task (handoff.hpp) is taken only once its dependency is resolved; until then this
// returns false and the block runs other batches (`give_back_held` when the run ends first).
template <std::uint32_t B>
APIARY_HD bool next_handed_off(const QueueView* queues, const PhaseController& pc, Handoff<B>& handoff,
                               const Batch& previous, Batch& next) {
  if (!handoff.full() || !handoff.ready()) return false;
  const bool ending = handoff.stopping != 0 || (handoff.status_due() && !check_in(queues, pc, handoff));
  if (!ending) {
    next = handed_off_batch(previous, handoff.queue);
    return true;
  }
  count_deferred(queues, handoff);
  const QueueView& queue = queues[handoff.queue];
  queue.push_words(handoff.item, queue.stride, handoff.tag);  // may fail only on an error already raised
  handoff.clear();
  next = Batch{};
  next.stop = true;
  return true;
}

// The block leaves the run (it stopped) while a task waits in its slot: the task goes to its
// queue, where the report counts it as queued like every task that did not run, and the
// executed counts that hand-off hops deferred are added.
template <std::uint32_t B>
APIARY_HD void give_back_held(const QueueView* queues, Handoff<B>& handoff) {
  count_deferred(queues, handoff);
  if (!handoff.full()) return;
  const QueueView& queue = queues[handoff.queue];
  queue.push_words(handoff.item, queue.stride, handoff.tag);  // may fail only on an error already raised
  handoff.forget_wait();
  handoff.clear();
}

// Thread 0 (the worker's rank 0), right after the task of a handed-off batch of one (queue
// q): takes the task it handed off as the next hop in this worker, without going back to the
// scheduler's loop, doing what finish_batch and next_handed_off would do for it. The worker
// then runs it at once, as a batch identical to the one that ran (a chain, block_runner.cuh).
// Once per check_every hops the hop checks in here (one load and two reductions): leaving
// for the scheduler's loop to do that instead cost ~7,100 cycles against ~1,320 for a local
// hop (H100, profiled build), i.e. ~440 cycles per link of a chain at one exit per 16 hops.
// With GatedHops (the megakernel, whose blocks alone hold tasks, for task types that declare
// waits_at_gates), a task held at a gate is such a hop once the gate opens within gate_polls
// polls (Handoff::await_gate); elsewhere that code is not compiled (in every worker it cost
// the device controller's empty-task worker 6 registers, a fan-tree megakernel 2). False: the
// scheduler's loop finishes the batch and takes the hop (a waiting task, a gate still closed,
// another queue, ctx.stop() in the block, or the run ending).
template <bool GatedHops = false, std::uint32_t B>
APIARY_HD bool take_local_hop(const QueueView* queues, const PhaseController& pc, Handoff<B>& handoff, std::uint32_t q) {
  if (!handoff.local_hop_possible(q) && !(GatedHops && handoff.gated_hop_possible(q) && handoff.await_gate()))
    return false;
  if (handoff.status_due() && !check_in(queues, pc, handoff)) {
    handoff.recheck_status();
    return false;
  }
  handoff.take_hop(q);
  return true;
}

// One thread, after every worker finished `batch`: counts its tasks as executed and lets
// them leave the pending counts, adding the task they handed off, if any. A hop from the
// slot to the slot within one phase defers all of it (handoff.hpp).
template <std::uint32_t B>
APIARY_HD void finish_batch(const QueueView* queues, const PhaseController& pc, Handoff<B>& handoff,
                            const Batch& batch) {
  // Only a task put during this batch is new to the pending count: a held task that waits
  // on across batches was counted by the batch that held it.
  const bool handing_off = handoff.full() && handoff.fresh != 0;
  handoff.fresh = 0;
  const PhaseTableView& table = *pc.table;
  if (batch.handed_off && handing_off && table.pending_slot(batch.queue) == table.pending_slot(handoff.queue) &&
      handoff.defer_count(batch.queue))
    return;
  count_deferred(queues, handoff);
  DeviceAtomic<std::uint64_t>(queues[batch.queue].counters->executed).fetch_add(batch.count, mo::relaxed);
  if (handing_off) pc.finish_handing_off(batch.queue, batch.count, handoff.queue);
  else pc.finish(batch.queue, batch.count);
}

}  // namespace apiary
