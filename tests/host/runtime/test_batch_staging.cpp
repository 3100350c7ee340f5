// How large a block's staging area is and how many tasks a batch may have (batch_staging.hpp):
// a block copies every task of a batch into the staging area before any of them runs.
#include <apiary/queue.hpp>
#include <apiary/schedulers/batch_staging.hpp>

#include <catch2/catch.hpp>

using namespace apiary;

TEST_CASE("staging: a staged task holds its queue slot, and its tag when traced", "[batch_staging]") {
  CHECK(staged_task_bytes(queue_stride(4), false) == 8);
  CHECK(staged_task_bytes(queue_stride(12), false) == 16);
  CHECK(staged_task_bytes(queue_stride(12), true) == 24);
}

TEST_CASE("staging: a batch is max_batch_rounds rounds, as far as the staging area holds them", "[batch_staging]") {
  const std::uint32_t slots = GENERATE(1u, 4u, 8u, 32u, 256u, 1024u);
  const std::uint32_t task_bytes = GENERATE(8u, 16u, 24u, 72u);
  CAPTURE(slots, task_bytes);
  StagingDemand demand;
  demand.add(slots, task_bytes);
  CHECK(demand.round == slots * task_bytes);
  CHECK(demand.largest == slots * max_batch_rounds * task_bytes);
  const auto largest = std::uint32_t(demand.largest);
  CHECK(batch_limit(largest, slots, task_bytes) == slots * max_batch_rounds);
  CHECK(batch_limit(2 * largest, slots, task_bytes) == slots * max_batch_rounds);
  CHECK(batch_limit(largest - 1, slots, task_bytes) == slots * max_batch_rounds - 1);
  CHECK(batch_limit(slots * task_bytes, slots, task_bytes) == slots);
  CHECK(batch_limit(task_bytes, slots, task_bytes) == 1);
  CHECK(batch_limit(task_bytes - 1, slots, task_bytes) == 0);  // not one task: the planner refuses the graph
}

TEST_CASE("staging: the area takes the room the occupancy leaves, up to the largest batches", "[batch_staging]") {
  StagingDemand demand;  // one-thread workers of 8-byte items and warps of 40-byte items, 256 threads
  demand.add(256, 8);
  demand.add(8, 40);
  REQUIRE(demand.round == 2048);
  REQUIRE(demand.largest == 16384);
  const std::uint64_t block_room = 200 * 1024;
  CHECK(staging_size(demand, 64 * 1024, block_room, max_staging_bytes) == 16384);  // plenty of room: the largest batches
  CHECK(staging_size(demand, 5000, block_room, max_staging_bytes) == 4992);        // what the room holds, a multiple of 16
  CHECK(staging_size(demand, 100, block_room, max_staging_bytes) == 2048);         // one round even without room
  CHECK(staging_size(demand, 0, 1000, max_staging_bytes) == 992);                  // never more than a block may have
}

TEST_CASE("staging: a multiple of 16 bytes that holds a round even when a round is less", "[batch_staging]") {
  StagingDemand one_block_worker;  // a 256-thread worker of an 8-byte item: one slot per block
  one_block_worker.add(1, 8);
  CHECK(staging_size(one_block_worker, 0, 200 * 1024, max_staging_bytes) == 16);
  CHECK(batch_limit(16, 1, 8) == 2);
  CHECK(staging_size(one_block_worker, 100 * 1024, 200 * 1024, max_staging_bytes) == 64);  // all 8 rounds
  CHECK(batch_limit(64, 1, 8) == max_batch_rounds);
  StagingDemand odd;  // 3 slots of 24-byte tasks: a round is 72 bytes, 8 rounds 576
  odd.add(3, 24);
  CHECK(staging_size(odd, 40, 200 * 1024, max_staging_bytes) == 80);
  CHECK(staging_size(odd, 1000, 200 * 1024, max_staging_bytes) == 576);
  CHECK(batch_limit(80, 3, 24) == 3);
}

TEST_CASE("staging: 16 KiB a block at most, or a share of 64 KiB where fewer blocks share an SM", "[batch_staging]") {
  CHECK(staging_cap(8) == max_staging_bytes);
  CHECK(staging_cap(4) == max_staging_bytes);
  CHECK(staging_cap(3) == 21840);  // 64 KiB / 3, a multiple of 16
  CHECK(staging_cap(2) == 32 * 1024);
  CHECK(staging_cap(1) == 64 * 1024);
  CHECK(staging_cap(0) == 64 * 1024);  // never divides by zero
  StagingDemand wide_block;             // one-thread workers of 8-byte items in a 1024-thread block
  wide_block.add(1024, 8);
  CHECK(staging_size(wide_block, 200 * 1024, 200 * 1024, staging_cap(1)) == 64 * 1024);
  CHECK(batch_limit(64 * 1024, 1024, 8) == 1024 * max_batch_rounds);
  CHECK(staging_size(wide_block, 200 * 1024, 200 * 1024, staging_cap(2)) == 32 * 1024);
  CHECK(batch_limit(32 * 1024, 1024, 8) == 4 * 1024);
}

TEST_CASE("staging: never more than the cap, unless one round needs more", "[batch_staging]") {
  StagingDemand large_items;
  large_items.add(256, 40);  // a round is 10 KiB: eight would be 80 KiB
  CHECK(staging_size(large_items, 100 * 1024, 200 * 1024, max_staging_bytes) == max_staging_bytes);
  CHECK(batch_limit(max_staging_bytes, 256, 40) == max_staging_bytes / 40);
  StagingDemand wide_block;
  wide_block.add(1024, 24);  // a round of a 1024-thread block is 24 KiB
  CHECK(staging_size(wide_block, 100 * 1024, 200 * 1024, max_staging_bytes) == 24 * 1024);
  CHECK(batch_limit(24 * 1024, 1024, 24) == 1024);
}
