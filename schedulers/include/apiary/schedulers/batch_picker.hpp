// How a persistent worker (a megakernel block, or a CPU thread in the stress tests) finds its
// next batch: scan the queues eligible in the current phase, starting after the queue it
// served last (round robin), claim up to `max_items` tasks with one claim, and check that
// the phase is still one they run in. When nothing is eligible it lets the phase controller
// advance the phase or end the run. Shared by the megakernel and the host stress tests so both
// exercise the same code.
#pragma once

#include <apiary/phase_table.hpp>
#include <apiary/platform.hpp>
#include <apiary/queue.hpp>
#include <apiary/run_state.hpp>

#include <cstdint>

namespace apiary {

struct Batch {
  std::uint32_t queue = 0;
  std::uint32_t count = 0;   // 0 with stop == false: nothing found this time
  std::uint64_t first = 0;   // first ticket
  PhaseWord phase{no_phase, 0};
  bool stop = false;         // the run is over (finished, stopped, aborted or failed)
  bool handed_off = false;   // one task from the block's hand-off slot (handoff.hpp), not from the queue
  bool stale = false;        // claimed after its phase ended: not to be run (settle_stale)
};

// Tasks claimed after the phase they run in ended go back to their queue. This happens in
// cyclic graphs: a later phase's tasks are queued while another phase runs, and a worker that
// looked at the phase word before that phase ended can still claim them. Waiting with them
// for their phase could hang the run: the running phase may be spawning into the same queue,
// and a producer that comes round the ring to the claimed, unread slots waits for exactly
// those (the phase could then never end; a block that waited would also run nothing else
// meanwhile). So the worker copies the tasks to `scratch` (their items, then their tags where
// the queue keeps tags), frees their slots, and pushes them again, as if it had never claimed
// them: if that overfills the queue, the run fails with queue_full, as it would have without
// the claim. `scratch` holds count x (stride, + 8 with tags) bytes: a megakernel block's
// staging area, which holds a batch (staged_task_bytes), is free while thread 0 picks.
APIARY_HD inline void give_back_claim(const QueueView& queue, std::uint64_t first, std::uint32_t count,
                                      std::byte* scratch) {
  auto item = [&](std::uint32_t i) { return scratch + std::uint64_t(i) * queue.stride; };
  auto* tags = reinterpret_cast<std::uint64_t*>(item(count));
#pragma unroll 1
  for (std::uint32_t i = 0; i < count; ++i) {
    if (!queue.wait_published(first + i)) return;  // the run failed meanwhile
    queue.read(first + i, item(i), queue.stride);
    if (queue.tags) tags[i] = queue.tag(first + i);
    queue.release(first + i);
  }
#pragma unroll 1
  for (std::uint32_t i = 0; i < count; ++i)
    if (!queue.push_words(item(i), queue.stride, queue.tags ? tags[i] : 0)) return;  // queue_full: raised
}

// A stale batch (pick_batch): a cyclic graph gives it back (give_back_claim). In a graph whose
// phases run once, a task of a phase that already ended can never run: the run fails with
// phase_already_ended now, as the idle step would find once the running phase drained.
template <bool Cyclic>
APIARY_HD void settle_stale(const QueueView* queues, const PhaseController& pc, const Batch& batch, std::byte* scratch) {
  if constexpr (Cyclic) give_back_claim(queues[batch.queue], batch.first, batch.count, scratch);
  else pc.report_unreachable_work(batch.phase.phase);
}

// The phase a claimed batch runs in, read again after the claim (the phase may have moved on
// since `seen`); false if its queue does not run in it (give_back_claim). A graph without
// phases has nothing to check, which saves a memory round trip per batch.
APIARY_HD inline bool check_phase(const PhaseController& pc, PhaseWord seen, Batch& batch) {
  if (pc.table->num_phases == 0) {
    batch.phase = seen;
    return true;
  }
  batch.phase = pc.current();
  return pc.eligible(batch.queue, batch.phase);
}

// max_items(q, available) -> how many tasks to claim from queue q at once. A batch of count 0
// without stop: nothing to run this time. A stale batch must not run: the caller settles it
// (settle_stale; not in here, where the scan's registers are live: inlined here, it cost the
// megakernel of a phaseless graph 8 registers, 40 -> 48).
// `phase_hint`, where given: non-zero after a pick whose idle step saw the phase change (the
// new phase word, PhaseController::on_idle). The next pick then scans that phase without its
// look (the step read the status just before), and the caller need not back off first: two
// memory round trips and a sleep less on the path of every phase change. A hint only: the
// claim confirms the phase (check_phase). The pick consumes it.
template <class MaxItems, class ParkedCount>
APIARY_HD Batch pick_batch(const QueueView* queues, const PhaseController& pc, std::uint32_t& rotor,
                           MaxItems&& max_items, ParkedCount&& parked, std::uint64_t* phase_hint = nullptr) {
  Batch batch;
  PhaseController::Look look;
  if (phase_hint != nullptr && *phase_hint != 0) {
    look = {true, PhaseWord::unpack(*phase_hint)};
    *phase_hint = 0;
  } else {
    look = pc.look();
  }
  if (!look.running) {
    batch.stop = true;
    return batch;
  }
  const PhaseTableView& table = *pc.table;
  const std::uint32_t n = table.num_queues;
  // One queue at a time. Measured on an H200 and not kept: loading the fill levels of 8
  // queues together, before looking at any, cost 12 more registers per thread in the
  // megakernel (6 -> 4 resident 256-thread blocks per SM, 20-30% of the empty-task
  // throughput); loading the rotor queue's level in the same round trip as look()'s words
  // raised fan-tree throughput 28% but made the queue-hop chain 14% slower (idle blocks poll
  // `available` more often, and the hop's commit and claim wait behind those loads);
  // occupancy bits (a word of "queue q may have tasks" bits set by each commit, so a pick
  // looks only at those queues) left the 11-type tree's time at 0.95-1.00x and slowed the
  // small graphs 2-5% (docs/benchmarks.md, "Tried, not kept: occupancy bits").
  for (std::uint32_t i = 0; i < n; ++i) {
    std::uint32_t q = rotor + i;
    if (q >= n) q -= n;
    if (!pc.eligible(q, look.phase)) continue;
    const std::int64_t available = queues[q].available_hint();
    if (available <= 0) continue;
    const std::uint32_t count = queues[q].claim(max_items(q, available), available, batch.first);
    if (count == 0) continue;
    batch.queue = q;
    batch.count = count;
    rotor = q + 1 < n ? q + 1 : 0;
    batch.stale = !check_phase(pc, look.phase, batch);
    return batch;
  }
  if (!pc.on_idle(parked, phase_hint)) batch.stop = true;
  return batch;
}

}  // namespace apiary
