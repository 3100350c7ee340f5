// How large a block's batch may be, and why a block copies its batch out of the queue first.
//
// A batch gives each worker of a block up to max_batch_rounds tasks, which the worker runs one
// after the other (rounds). A task must never run while its block still holds a claimed queue
// slot it has not read: a producer one lap ahead on that queue waits for exactly that slot, and
// when the running task itself waits for a slot of another queue held the same way, the blocks
// wait on each other for ever (found on an H100: fan trees whose queues a level fills stalled
// under the device controller in about 1 run in 10, when workers read a batch's later rounds
// one at a time between their tasks). So, before any task of a batch runs, the whole block
// copies every task of the batch from its queue slot into shared memory, the staging area, and
// frees the slot; the workers then read their tasks from there. A batch is no larger than the
// staging area holds, and the staging area takes the shared memory the block's occupancy leaves
// unused, up to staging_cap (plan_resident_blocks, block_runner.cuh).
#pragma once

#include <apiary/platform.hpp>

#include <algorithm>
#include <cstdint>

namespace apiary {

inline constexpr std::uint32_t max_batch_rounds = 8;

// The staging area at most, unless one round of a queue needs more: 16 KiB a block, enough
// for the largest batch of one-thread workers of 8-byte items in a 256-thread block
// (256 x 8 x 8), or, where fewer than four blocks share an SM, a share of 64 KiB (the largest
// batch of a 1024-thread block of them; measured on an H100 with 16 KiB, two rounds: empty
// tasks 1.39x the time of 00a17af's eight, docs/benchmarks.md). More would only shrink the L1
// cache, which shares the SM's 256 KiB with shared memory, for larger batches of larger items.
inline constexpr std::uint32_t max_staging_bytes = 16 * 1024;
inline constexpr std::uint32_t staging_bytes_per_sm = 64 * 1024;

// The cap for a kernel of which `blocks_per_sm` blocks share an SM.
constexpr std::uint32_t staging_cap(std::uint32_t blocks_per_sm) {
  const std::uint32_t share = staging_bytes_per_sm / (blocks_per_sm == 0 ? 1 : blocks_per_sm);
  return share > max_staging_bytes ? share / 16 * 16 : max_staging_bytes;
}

// Bytes one staged task takes: its queue slot (the item, padded to 8 bytes), then its
// dependency tag when the run is traced.
APIARY_HD constexpr std::uint32_t staged_task_bytes(std::uint32_t slot_stride, bool traced) {
  return slot_stride + (traced ? 8u : 0u);
}

// What a graph's queues ask of the staging area: a round (a task per worker slot) of the
// queue that needs most for one, and max_batch_rounds rounds of the one that needs most for all.
struct StagingDemand {
  std::uint64_t round = 0;
  std::uint64_t largest = 0;

  constexpr void add(std::uint32_t slots, std::uint32_t task_bytes) {
    round = std::max(round, std::uint64_t(slots) * task_bytes);
    largest = std::max(largest, std::uint64_t(slots) * max_batch_rounds * task_bytes);
  }
};

// The staging area's size (a multiple of 16): the largest batches, up to `cap` (staging_cap), as
// far as `room` (the shared memory the block's occupancy leaves) holds them; at least one round
// of every queue, even if a block fewer fits then; never more than `block_room` (what a block
// may still have).
constexpr std::uint32_t staging_size(const StagingDemand& demand, std::uint64_t room, std::uint64_t block_room,
                                     std::uint32_t cap) {
  auto up16 = [](std::uint64_t bytes) { return (bytes + 15) / 16 * 16; };
  const std::uint64_t goal = up16(std::min(demand.largest, std::max<std::uint64_t>(cap, demand.round)));
  const std::uint64_t size = std::min(std::max(std::min(room, goal), up16(demand.round)), block_room);
  return std::uint32_t(size / 16 * 16);
}

// Tasks a batch of a queue may have: max_batch_rounds rounds, as far as the staging area holds
// them (0: not even one task fits).
constexpr std::uint32_t batch_limit(std::uint32_t staging_bytes, std::uint32_t slots, std::uint32_t task_bytes) {
  return std::min(slots * max_batch_rounds, staging_bytes / task_bytes);
}

}  // namespace apiary
