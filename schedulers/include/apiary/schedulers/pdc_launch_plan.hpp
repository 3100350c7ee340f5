// How many worker blocks the device controller gives a queue in one step (device_controller.cuh,
// pdc_plan), before the oversubscription bound: the arithmetic alone, so that host tests check it.
//
// Every block launched for the queue and not exited covers a round of its tasks (`slots`),
// whether it has started or runs a batch: a block takes its next batch as soon as its batch
// ends, and that is sooner than a new launch starts (a device-side launch takes the controller
// thread ~6-8 us, FACTS.md). Tried on an H100 (docs/benchmarks.md, "Tried, not kept: launches
// for the tasks a busy block cannot take yet"): counting only the blocks that had not started
// made a 2,000-link chain under the spinning controller up to 1.12x slower, for 0.94x on the
// 11-type tree in individual mode (1.03x in phases mode).
#pragma once

#include <apiary/platform.hpp>

#include <cstdint>

namespace apiary {

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

// One block per `slots` tasks, at most the device's resident blocks, less the blocks launched.
APIARY_HD inline PdcWanted pdc_blocks_wanted(const PdcQueueLoad& load) {
  PdcWanted out;
  if (load.available <= 0 || load.slots == 0) return out;
  const std::uint64_t available = std::uint64_t(load.available);
  const std::uint64_t needed = (available + load.slots - 1) / load.slots;
  const std::uint64_t target = needed < load.max_blocks ? needed : load.max_blocks;
  out.blocks = target > load.launched ? std::uint32_t(target - load.launched) : 0u;
  out.partial = available < (std::uint64_t(load.launched) + 1) * load.slots;
  return out;
}

}  // namespace apiary
