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
  // The fill levels of `scan` queues at a time are loaded together, before any is looked at:
  // one memory round trip per 8 queues instead of one per queue (an 11-type graph would
  // otherwise wait up to ten round trips before it reaches the queue that has work).
  constexpr std::uint32_t scan = 8;
  for (std::uint32_t base = 0; base < n; base += scan) {
    std::int64_t available[scan];
#pragma unroll
    for (std::uint32_t j = 0; j < scan; ++j) {
      std::uint32_t q = rotor + base + j;
      if (q >= n) q -= n;
      available[j] = base + j < n && pc.eligible(q, look.phase) ? queues[q].available_hint() : 0;
    }
#pragma unroll
    for (std::uint32_t j = 0; j < scan; ++j) {
      if (available[j] <= 0) continue;
      std::uint32_t q = rotor + base + j;
      if (q >= n) q -= n;
      const std::uint32_t count = queues[q].claim(max_items(q, available[j]), available[j], batch.first);
      if (count == 0) continue;
      batch.queue = q;
      batch.count = count;
      rotor = q + 1 < n ? q + 1 : 0;
      confirm_phase(pc, look.phase, batch);
      return batch;
    }
  }
  if (!pc.on_idle(parked)) batch.stop = true;
  return batch;
}

}  // namespace apiary
