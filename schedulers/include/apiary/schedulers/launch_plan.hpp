// How many blocks a per-queue worker launch gets: a timesliced round's (planned_blocks,
// timesliced.cuh) and the device controller's step (pdc_plan, device_controller.cuh, before its
// oversubscription bound). The arithmetic alone, so that host tests check it.
//
// The device controller: every block launched for the queue and not exited covers a round of
// its tasks (`slots`), whether it has started or runs a batch: a block takes its next batch as
// soon as its batch ends, and that is sooner than a new launch starts (a device-side launch
// takes the controller thread ~6-8 us, FACTS.md). Tried on an H100 (docs/benchmarks.md, "Tried, not kept: launches
// for the tasks a busy block cannot take yet"): counting only the blocks that had not started
// made a 2,000-link chain under the spinning controller up to 1.12x slower, for 0.94x on the
// 11-type tree in individual mode (1.03x in phases mode).
#pragma once

#include <apiary/platform.hpp>

#include <cstdint>

namespace apiary {

// One block per `slots` tasks, at most `max_blocks` (the resident blocks).
APIARY_HD inline std::uint32_t blocks_for_tasks(std::int64_t available, std::uint32_t slots, std::uint32_t max_blocks) {
  if (available <= 0 || slots == 0) return 0;
  const std::uint64_t needed = (std::uint64_t(available) + slots - 1) / slots;
  return needed < max_blocks ? std::uint32_t(needed) : max_blocks;
}

// What the controller knows of queue q when it plans. `launched`: worker blocks launched for the
// queue that have not exited (spin mode; zero in a wave, whose workers of the last wave ended).
struct PdcQueueLoad {
  std::int64_t available = 0;    // unclaimed tasks (a hint)
  std::uint32_t slots = 1;       // worker slots per block
  std::uint32_t max_blocks = 0;  // resident worker blocks on the device
  std::uint32_t launched = 0;
};

struct PdcWanted {
  std::uint32_t blocks = 0;  // blocks to launch now, before the oversubscription bound
  bool partial = false;      // the tasks the launched blocks do not cover do not fill a block
};

// blocks_for_tasks, less the blocks launched for the queue.
APIARY_HD inline PdcWanted pdc_blocks_wanted(const PdcQueueLoad& load) {
  PdcWanted out;
  if (load.available <= 0) return out;
  const std::uint32_t target = blocks_for_tasks(load.available, load.slots, load.max_blocks);
  out.blocks = target > load.launched ? target - load.launched : 0u;
  out.partial = std::uint64_t(load.available) < (std::uint64_t(load.launched) + 1) * load.slots;
  return out;
}

}  // namespace apiary
