// A task that waits in a block's hand-off slot for its phase (handoff.hpp, megakernel only):
// a continuation (ctx.spawn_next) or released task of a queue of another phase. It cannot
// start before its phase does, which is after every task of the running phase (its spawner
// included) ended: so it may as well wait in the spawner's block, which runs it the moment its
// phase begins, instead of travelling through its queue (a publish, and after the phase change
// a poll, a claim and a staging copy by some block).
//
// Sound because the waiting task is pending in its phase's count from the end of the batch
// that spawned it (PhaseController::finish_handing_off), exactly as if it were queued: the
// phase controller reaches its phase as it would, and that phase cannot end before it ran.
#pragma once

#include <apiary/platform.hpp>
#include <apiary/run_state.hpp>

#include <cstdint>

namespace apiary {

// Whether the phase of queue `queue` is current; `now` gets the phase word read (acquire: the
// task reads what the tasks of the phases before it wrote, which the phase advance published).
APIARY_HD inline bool phase_reached(const PhaseController& pc, std::uint32_t queue, PhaseWord& now) {
  now = pc.current();
  return now.phase == pc.table->queue_phase[queue];
}

}  // namespace apiary
