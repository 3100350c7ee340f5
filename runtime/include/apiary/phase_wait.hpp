// A task that waits in a block's hand-off slot for its phase (handoff.hpp, megakernel only):
// a lone spawn into a queue of another phase. Its phase is known when it is spawned, and it
// cannot start before that phase does, which is after every task of the running phase
// (its spawner included) ended: so it may as well wait in the spawner's block, which runs it
// the moment its phase begins, instead of travelling through its queue (a publish, and after
// the phase change a poll, a claim and a staging copy by some block).
//
// Sound because the waiting task is pending in its phase's count from the end of the batch
// that spawned it (PhaseController::finish_handing_off), exactly as if it were queued: the
// phase controller reaches its phase as it would, and that phase cannot end before it ran.
#pragma once

#include <apiary/phase_table.hpp>
#include <apiary/platform.hpp>
#include <apiary/run_state.hpp>

#include <cstdint>

namespace apiary {

struct PhaseWait {
  const std::uint64_t* word = nullptr;  // the run's phase word (RunState::phase_word); nullptr: no wait
  std::int32_t phase = no_phase;        // the phase the task runs in
};

// Whether the waited-for phase is current; `now` gets the phase word read. Acquire: the task
// reads what the tasks of the phases before it wrote (the phase advance published them).
APIARY_HD inline bool phase_reached(const PhaseWait& wait, PhaseWord& now) {
  now = PhaseWord::unpack(load_acquire(*const_cast<std::uint64_t*>(wait.word)));
  return now.phase == wait.phase;
}

}  // namespace apiary
