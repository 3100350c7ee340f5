// Per-queue launch sizes (launch_plan.hpp): one block per round of unclaimed tasks within the
// device's resident blocks; the device controller's, less the blocks launched for the queue.
#include <apiary/schedulers/launch_plan.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

using namespace apiary;

namespace {
PdcQueueLoad load_of(std::int64_t available, std::uint32_t slots, std::uint32_t max_blocks, std::uint32_t launched) {
  PdcQueueLoad l;
  l.available = available;
  l.slots = slots;
  l.max_blocks = max_blocks;
  l.launched = launched;
  return l;
}
}  // namespace

TEST_CASE("launch plan: a block per round of tasks, at most the resident blocks", "[launch_plan]") {
  CHECK(blocks_for_tasks(0, 8, 100) == 0);
  CHECK(blocks_for_tasks(-5, 8, 100) == 0);
  CHECK(blocks_for_tasks(1, 8, 100) == 1);
  CHECK(blocks_for_tasks(8, 8, 100) == 1);
  CHECK(blocks_for_tasks(9, 8, 100) == 2);
  CHECK(blocks_for_tasks(1'000'000, 8, 100) == 100);
  CHECK(blocks_for_tasks(std::int64_t(1) << 40, 1, 0xffffffffu) == 0xffffffffu);  // no overflow
}

TEST_CASE("pdc plan: an empty queue gets no blocks", "[pdc_launch_plan]") {
  CHECK(pdc_blocks_wanted(load_of(0, 8, 100, 0)).blocks == 0);
  CHECK(pdc_blocks_wanted(load_of(-3, 8, 100, 2)).blocks == 0);  // a hint may run below zero
}

TEST_CASE("pdc plan: one block per slots tasks, at most the resident blocks", "[pdc_launch_plan]") {
  CHECK(pdc_blocks_wanted(load_of(1, 8, 100, 0)).blocks == 1);
  CHECK(pdc_blocks_wanted(load_of(8, 8, 100, 0)).blocks == 1);
  CHECK(pdc_blocks_wanted(load_of(9, 8, 100, 0)).blocks == 2);
  CHECK(pdc_blocks_wanted(load_of(1'000'000, 8, 100, 0)).blocks == 100);
}

TEST_CASE("pdc plan: blocks launched for the queue cover a round of its tasks each", "[pdc_launch_plan]") {
  CHECK(pdc_blocks_wanted(load_of(3, 8, 100, 1)).blocks == 0);  // the running block takes them next
  CHECK(pdc_blocks_wanted(load_of(20, 8, 100, 2)).blocks == 1);
  CHECK(pdc_blocks_wanted(load_of(64, 8, 100, 1)).blocks == 7);  // a burst: blocks for the rest
  CHECK(pdc_blocks_wanted(load_of(1'000'000, 8, 100, 100)).blocks == 0);
  CHECK(pdc_blocks_wanted(load_of(1'000'000, 8, 100, 97)).blocks == 3);
  CHECK(pdc_blocks_wanted(load_of(1'000'000, 8, 100, 130)).blocks == 0);
}

TEST_CASE("pdc plan: a launch is partial when the uncovered tasks do not fill a block", "[pdc_launch_plan]") {
  CHECK(pdc_blocks_wanted(load_of(7, 8, 100, 0)).partial);
  CHECK_FALSE(pdc_blocks_wanted(load_of(8, 8, 100, 0)).partial);
  CHECK(pdc_blocks_wanted(load_of(15, 8, 100, 1)).partial);
  CHECK_FALSE(pdc_blocks_wanted(load_of(16, 8, 100, 1)).partial);
}

TEST_CASE("pdc plan: random loads against the rule spelled out", "[pdc_launch_plan]") {
  std::mt19937_64 rng(GENERATE(1u, 2u, 3u));
  for (int i = 0; i < 20'000; ++i) {
    const auto slots = std::uint32_t(1 + rng() % 64);
    const auto max_blocks = std::uint32_t(rng() % 2000);
    const auto launched = std::uint32_t(rng() % 2500);
    const auto available = std::int64_t(rng() % 200'000) - 10;
    const PdcWanted w = pdc_blocks_wanted(load_of(available, slots, max_blocks, launched));
    CAPTURE(slots, max_blocks, launched, available);
    if (available <= 0) {
      REQUIRE(w.blocks == 0);
      continue;
    }
    const std::int64_t total = std::int64_t(w.blocks) + launched;
    // Enough blocks, with those launched, for every unclaimed task, unless the device is full.
    REQUIRE((total * slots >= available || total >= max_blocks));
    // Never a block too many, and never beyond the resident blocks.
    if (w.blocks > 0) REQUIRE((total - 1) * std::int64_t(slots) < available);
    REQUIRE(std::int64_t(launched) + w.blocks <= std::max<std::int64_t>(max_blocks, launched));
    REQUIRE(w.partial == (available < (std::int64_t(launched) + 1) * std::int64_t(slots)));
  }
}
