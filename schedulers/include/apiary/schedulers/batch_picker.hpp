// How a persistent worker (a megakernel block, or a CPU thread in the stress tests) finds its
// next batch: scan the queues eligible in the current phase, starting after the queue it
// served last (round robin), claim up to `max_items` tasks with one claim, and confirm the
// phase. When nothing is eligible it lets the phase controller advance the phase or end the
// run. Shared by the megakernel and the host stress tests so both exercise the same code.
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
};

// The phase a claimed batch runs in. The phase may have moved on since `seen` was read
// (cyclic graphs queue tasks for later phases). The claimed tasks are pending, so their phase
// cannot end before they run: wait until it is current. A graph without phases has nothing
// to confirm, which saves a memory round trip per batch.
APIARY_HD inline void confirm_phase(const PhaseController& pc, PhaseWord seen, Batch& batch) {
  if (pc.table->num_phases == 0) {
    batch.phase = seen;
    return;
  }
  for (;;) {
    batch.phase = pc.current();
    if (pc.eligible(batch.queue, batch.phase)) return;
    if (!pc.running()) {
      batch.stop = true;
      return;
    }
    pc.try_advance();
    spin_pause();
  }
}

// max_items(q, available) -> how many tasks to claim from queue q at once.
template <class MaxItems, class ParkedCount>
APIARY_HD Batch pick_batch(const QueueView* queues, const PhaseController& pc, std::uint32_t& rotor,
                           MaxItems&& max_items, ParkedCount&& parked) {
  Batch batch;
  const PhaseController::Look look = pc.look();
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
  // `available` more often, and the hop's commit and claim wait behind those loads).
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
    confirm_phase(pc, look.phase, batch);
    return batch;
  }
  if (!pc.on_idle(parked)) batch.stop = true;
  return batch;
}

}  // namespace apiary
