// How many worker blocks the device controller gives a queue in one step (device_controller.cuh,
// pdc_plan), before the oversubscription bound: the arithmetic alone, so that host tests check it.
//
// A worker block that has started draining its queue is busy: it runs one batch at a time and
// claims the next batch only when that one is done (drain_queue). Tasks that arrive in the queue
// meanwhile wait for it. So the spinning controller counts only the blocks it launched that have
// not started yet as already covering the queue's unclaimed tasks, and launches blocks for the
// rest. (Until 2026-11-28 it subtracted every block still running for the queue, busy or not:
// the 11-type tree's joins and leaves, released a few at a time into a queue with one running
// block, then ran on that block one batch after another, e.g. 64 of its 256 J5 tasks on one
// block for 86 us on an H100; docs/benchmarks.md, "Kept: the device controller launches for
// tasks its busy blocks cannot take".)
#pragma once

#include <apiary/platform.hpp>

#include <cstdint>

namespace apiary {

// What the controller knows of queue q when it plans. `launched`: worker blocks launched for the
// queue that have not exited (spin mode; zero in a wave, whose workers of the last wave ended);
// `started`: those that began draining it (the runtime's live_blocks; read after `launched`, it
// may count a block that exits meanwhile, which only makes the plan launch less).
struct PdcQueueLoad {
  std::int64_t available = 0;   // unclaimed tasks (a hint)
  std::uint32_t slots = 1;      // worker slots per block
  std::uint32_t max_blocks = 0; // resident worker blocks on the device
  std::uint32_t launched = 0;
  std::uint32_t started = 0;
};

struct PdcWanted {
  std::uint32_t blocks = 0;  // blocks to launch now, before the oversubscription bound
  bool partial = false;      // the tasks no launched-and-waiting block covers do not fill a block
};

// Blocks for the tasks that no launched, not yet started block will claim: one per `slots`
// tasks, at most what leaves the queue's blocks within the device's resident blocks.
APIARY_HD inline PdcWanted pdc_blocks_wanted(const PdcQueueLoad& load) {
  PdcWanted out;
  if (load.available <= 0 || load.slots == 0) return out;
  const std::uint64_t available = std::uint64_t(load.available);
  const std::uint64_t needed = (available + load.slots - 1) / load.slots;
  const std::uint64_t waiting = load.launched > load.started ? load.launched - load.started : 0;
  const std::uint64_t room = load.max_blocks > load.launched ? load.max_blocks - load.launched : 0;
  std::uint64_t blocks = needed > waiting ? needed - waiting : 0;
  blocks = blocks < room ? blocks : room;
  out.blocks = std::uint32_t(blocks);
  out.partial = available < (waiting + 1) * load.slots;
  return out;
}

}  // namespace apiary
