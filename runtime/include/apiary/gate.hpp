// A gate: one 32-bit word that any number of held tasks wait on (ctx.hold_next_at, megakernel
// only). A task waits until `(word & mask) >= target`; whoever raises the word with a release
// (a fence, then an atomic add or a store) opens the gate for all its waiters at once.
//
// Why: a barrier whose T successors each wait on a dependency of their own (spawn_next_when)
// costs its last arriver T resolutions after a fence, and each waiter a poll of its own word
// and a reduction to take the hold offset back. A barrier whose arrivals count up one word
// needs neither: the waiters poll the arrival count itself, so the last arrival's atomic is
// the whole hand-over (Jacobi's stages_inline, apps/jacobi/src/task_graph.cuh).
//
// Unlike a dependency, nobody releases a gate's waiters: only a block that holds its waiter
// in its hand-off slot can wait on one. Where the scheduler cannot hold (TSK and PDC, whose
// blocks end with their kernels; a taken slot; hand-off off; a phased task type),
// ctx.hold_next_at returns false and the caller starts the task another way (e.g. the last
// arriver spawns it).
//
// The word must not fall below the target while tasks wait on it: a count that is reset for
// reuse may be reset only once every waiter has left (the caller's protocol says when).
#pragma once

#include <apiary/platform.hpp>

#include <cstdint>

namespace apiary {

struct Gate {
  const std::uint32_t* word = nullptr;
  std::uint32_t mask = ~0u;    // the bits of *word that count (others may carry data)
  std::uint32_t target = 0;    // open once the masked count reaches this
};

// Whether the gate is open. Acquire: whatever the raisers published before raising the word.
APIARY_HD inline bool gate_open(const Gate& gate) {
  return (load_acquire(*const_cast<std::uint32_t*>(gate.word)) & gate.mask) >= gate.target;
}

}  // namespace apiary
