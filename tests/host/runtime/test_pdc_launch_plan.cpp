// The device controller's per-queue launch size (pdc_launch_plan.hpp): blocks already draining
// a queue are busy and do not cover its unclaimed tasks; blocks launched and not yet started do.
#include <apiary/schedulers/pdc_launch_plan.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

using namespace apiary;

namespace {
PdcQueueLoad load_of(std::int64_t available, std::uint32_t slots, std::uint32_t max_blocks, std::uint32_t launched,
                     std::uint32_t started) {
  PdcQueueLoad l;
  l.available = available;
  l.slots = slots;
  l.max_blocks = max_blocks;
  l.launched = launched;
  l.started = started;
  return l;
}
}  // namespace

TEST_CASE("pdc plan: an empty queue gets no blocks", "[pdc_launch_plan]") {
  CHECK(pdc_blocks_wanted(load_of(0, 8, 100, 0, 0)).blocks == 0);
  CHECK(pdc_blocks_wanted(load_of(-3, 8, 100, 2, 1)).blocks == 0);  // a hint may run below zero
}

TEST_CASE("pdc plan: one block per slots tasks, at most the resident blocks", "[pdc_launch_plan]") {
  CHECK(pdc_blocks_wanted(load_of(1, 8, 100, 0, 0)).blocks == 1);
  CHECK(pdc_blocks_wanted(load_of(8, 8, 100, 0, 0)).blocks == 1);
  CHECK(pdc_blocks_wanted(load_of(9, 8, 100, 0, 0)).blocks == 2);
  CHECK(pdc_blocks_wanted(load_of(1'000'000, 8, 100, 0, 0)).blocks == 100);
}

TEST_CASE("pdc plan: tasks that arrive while the queue's blocks are busy get blocks of their own", "[pdc_launch_plan]") {
  // One block drains the queue (it runs a batch); three tasks arrived since: it cannot take them
  // before its batch ends, so they get a block (before, the running block covered them).
  CHECK(pdc_blocks_wanted(load_of(3, 8, 100, 1, 1)).blocks == 1);
  CHECK(pdc_blocks_wanted(load_of(20, 8, 100, 5, 5)).blocks == 3);
}

TEST_CASE("pdc plan: blocks launched and not yet started cover the tasks they will claim", "[pdc_launch_plan]") {
  CHECK(pdc_blocks_wanted(load_of(3, 8, 100, 1, 0)).blocks == 0);
  CHECK(pdc_blocks_wanted(load_of(20, 8, 100, 4, 2)).blocks == 1);
  CHECK(pdc_blocks_wanted(load_of(20, 8, 100, 3, 0)).blocks == 0);
  // A start counted without its launch (the two counters are read one after the other): none waits.
  CHECK(pdc_blocks_wanted(load_of(9, 8, 100, 1, 2)).blocks == 2);
}

TEST_CASE("pdc plan: a queue's blocks stay within the device's resident blocks", "[pdc_launch_plan]") {
  CHECK(pdc_blocks_wanted(load_of(1'000'000, 8, 100, 100, 100)).blocks == 0);
  CHECK(pdc_blocks_wanted(load_of(1'000'000, 8, 100, 97, 97)).blocks == 3);
  CHECK(pdc_blocks_wanted(load_of(1'000'000, 8, 100, 130, 100)).blocks == 0);
}

TEST_CASE("pdc plan: a launch is partial when the uncovered tasks do not fill a block", "[pdc_launch_plan]") {
  CHECK(pdc_blocks_wanted(load_of(7, 8, 100, 0, 0)).partial);
  CHECK_FALSE(pdc_blocks_wanted(load_of(8, 8, 100, 0, 0)).partial);
  CHECK(pdc_blocks_wanted(load_of(15, 8, 100, 1, 0)).partial);        // the waiting block takes 8
  CHECK_FALSE(pdc_blocks_wanted(load_of(16, 8, 100, 1, 0)).partial);
  CHECK_FALSE(pdc_blocks_wanted(load_of(8, 8, 100, 4, 4)).partial);   // busy blocks cover nothing
}

TEST_CASE("pdc plan: random loads against the rule spelled out", "[pdc_launch_plan]") {
  std::mt19937_64 rng(GENERATE(1u, 2u, 3u));
  for (int i = 0; i < 20'000; ++i) {
    const auto slots = std::uint32_t(1 + rng() % 64);
    const auto max_blocks = std::uint32_t(rng() % 2000);
    const auto launched = std::uint32_t(rng() % 2500);
    const auto started = std::uint32_t(rng() % 2500);
    const auto available = std::int64_t(rng() % 200'000) - 10;
    const PdcWanted w = pdc_blocks_wanted(load_of(available, slots, max_blocks, launched, started));
    CAPTURE(slots, max_blocks, launched, started, available);
    if (available <= 0) {
      REQUIRE(w.blocks == 0);
      continue;
    }
    const std::int64_t waiting = std::max<std::int64_t>(0, std::int64_t(launched) - started);
    // Enough blocks, with those waiting, for every unclaimed task, unless the device is full.
    const std::int64_t total = std::int64_t(w.blocks) + waiting;
    const bool full = std::int64_t(launched) + w.blocks >= max_blocks;
    REQUIRE((total * slots >= available || full));
    // Never a block too many, and never beyond the resident blocks.
    if (w.blocks > 0) REQUIRE((total - 1) * std::int64_t(slots) < available);
    REQUIRE(std::int64_t(launched) + w.blocks <= std::max<std::int64_t>(max_blocks, launched));
    REQUIRE(w.partial == (available < (waiting + 1) * std::int64_t(slots)));
  }
}
