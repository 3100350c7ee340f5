// The waiting storage under concurrent park/extract from 8 threads: every parked item is
// extracted exactly once, also where slots are read first and freed later; a full storage
// raises an error naming its capacity.
#include "host_structures.hpp"

#include <catch2/catch.hpp>

#include <atomic>

using namespace apiary;
using namespace apiary::testing;

TEST_CASE("waiting storage: concurrent park and extract lose nothing", "[waiting_storage][stress]") {
  ErrorWord error{};
  HostWaitingStorage ws(1024, sizeof(std::uint64_t), &error);
  HostQueue handoff(1 << 12, sizeof(std::uint32_t), &error);  // slots travel between threads
  const unsigned threads = stress_threads();
  const std::uint64_t per_thread = scaled(1'000'000);
  const std::uint64_t total = per_thread * threads;
  std::vector<std::atomic<std::uint8_t>> seen(total);
  std::atomic<std::uint64_t> extracted{0};
  ThreadFailures failures;

  auto extract_one = [&](const QueueView& h) {
    std::uint32_t slot;
    if (!h.pop(slot)) return false;
    std::uint64_t value = 0;
    const std::uint32_t queue = ws.view.extract(slot, &value, sizeof(value));
    APIARY_THREAD_CHECK(failures, queue == value % 5);
    APIARY_THREAD_CHECK(failures, seen[value].fetch_add(1) == 0);
    extracted.fetch_add(1);
    return true;
  };

  run_threads(threads, [&](unsigned t) {
    for (std::uint64_t i = 0; i < per_thread; ++i) {
      const std::uint64_t value = t * per_thread + i;
      const std::uint32_t slot = ws.view.reserve(value);
      APIARY_THREAD_CHECK(failures, slot != no_slot);
      ws.view.write(slot, static_cast<std::uint32_t>(value % 5), &value, sizeof(value), value);
      while (handoff.view.outstanding_hint() > std::int64_t(handoff.view.capacity()) - 2 * std::int64_t(threads)) extract_one(handoff.view);
      APIARY_THREAD_CHECK(failures, handoff.view.push(slot));
      extract_one(handoff.view);  // usually another thread's item
    }
    while (extracted.load() < total) extract_one(handoff.view);
  });

  INFO(failures.first);
  REQUIRE(failures.count == 0);
  REQUIRE(error.code == 0);
  REQUIRE(extracted.load() == total);
  REQUIRE(ws.view.parked_hint() == 0);
  for (std::uint64_t v = 0; v < total; v += 997) REQUIRE(seen[v].load() == 1);
}

// The megakernel's release path (Context::release): a thread reads a slot and frees it only
// after its next fence, here when it has read the next one (or at its end), so every thread
// holds one read slot at a time. Until its free nobody may write that slot (checked by reading
// it again just before: ThreadSanitizer also flags a write racing with that read), and no
// slot may leak.
TEST_CASE("waiting storage: slots read now and freed after the next fence lose nothing", "[waiting_storage][stress]") {
  constexpr std::uint32_t capacity = 1024;
  ErrorWord error{};
  HostWaitingStorage ws(capacity, 2 * sizeof(std::uint64_t), &error);
  HostQueue handoff(1 << 12, sizeof(std::uint32_t), &error);
  const unsigned threads = stress_threads();
  const std::uint64_t per_thread = scaled(500'000);
  const std::uint64_t total = per_thread * threads;
  std::vector<std::atomic<std::uint8_t>> seen(total);
  std::atomic<std::uint64_t> extracted{0};
  ThreadFailures failures;
  auto item_at = [&](std::uint32_t slot) {
    return reinterpret_cast<const std::uint64_t*>(ws.view.items + std::size_t(slot) * ws.view.stride);
  };

  run_threads(threads, [&](unsigned t) {
    std::uint32_t unfreed = no_slot;
    std::uint64_t kept[2] = {0, 0};  // what `unfreed` held when it was read
    auto free_unfreed = [&] {
      if (unfreed == no_slot) return;
      const std::uint64_t* again = item_at(unfreed);
      APIARY_THREAD_CHECK(failures, again[0] == kept[0] && again[1] == kept[1]);
      ws.view.free_after_fence(unfreed);
      unfreed = no_slot;
    };
    auto read_one = [&] {
      std::uint32_t slot;
      if (!handoff.view.pop(slot)) return false;
      std::uint64_t item[2] = {0, 0};
      const std::uint32_t queue = ws.view.read(slot, item, sizeof(item));
      free_unfreed();  // this thread's next fence came
      unfreed = slot;
      kept[0] = item[0];
      kept[1] = item[1];
      APIARY_THREAD_CHECK(failures, queue == item[0] % 5 && item[1] == ~item[0]);
      APIARY_THREAD_CHECK(failures, seen[item[0]].fetch_add(1) == 0);
      extracted.fetch_add(1);
      return true;
    };
    for (std::uint64_t i = 0; i < per_thread; ++i) {
      const std::uint64_t item[2] = {t * per_thread + i, ~(t * per_thread + i)};
      const std::uint32_t slot = ws.view.reserve(item[0]);
      APIARY_THREAD_CHECK(failures, slot != no_slot);
      ws.view.write(slot, static_cast<std::uint32_t>(item[0] % 5), item, sizeof(item), item[0]);
      while (handoff.view.outstanding_hint() > std::int64_t(handoff.view.capacity()) - 2 * std::int64_t(threads)) read_one();
      APIARY_THREAD_CHECK(failures, handoff.view.push(slot));
      read_one();  // usually another thread's item
    }
    while (extracted.load() < total) read_one();
    free_unfreed();
  });

  INFO(failures.first);
  REQUIRE(failures.count == 0);
  REQUIRE(error.code == 0);
  REQUIRE(extracted.load() == total);
  REQUIRE(ws.view.parked_hint() == 0);
  for (std::uint32_t s = 0; s < capacity; ++s) REQUIRE(ws.state[s] == slot_free);
  for (std::uint64_t v = 0; v < total; v += 997) REQUIRE(seen[v].load() == 1);
}

TEST_CASE("waiting storage: full storage raises waiting_storage_full", "[waiting_storage]") {
  ErrorWord error{};
  HostWaitingStorage ws(4, 8, &error);
  for (int i = 0; i < 4; ++i) REQUIRE(ws.view.reserve(std::uint64_t(i)) != no_slot);
  REQUIRE(ws.view.reserve(99) == no_slot);
  REQUIRE(error.code == static_cast<std::uint32_t>(ErrorCode::waiting_storage_full));
  REQUIRE(error.capacity == 4);
}

TEST_CASE("waiting storage: a custom insert policy decides the first probe", "[waiting_storage]") {
  ErrorWord error{};
  HostWaitingStorage ws(16, 8, &error);
  REQUIRE(ws.view.reserve(12345, FirstFitProbe{}) == 0);
  REQUIRE(ws.view.reserve(777, FirstFitProbe{}) == 1);
}

TEST_CASE("waiting storage: a slot goes free -> reserved -> filled -> free", "[waiting_storage]") {
  ErrorWord error{};
  HostWaitingStorage ws(4, 8, &error);
  const std::uint32_t slot = ws.view.reserve(7);
  REQUIRE(slot != no_slot);
  REQUIRE(ws.state[slot] == slot_reserved);
  const std::uint64_t value = 99;
  ws.view.write(slot, 3, &value, sizeof(value), 5);
  REQUIRE(ws.state[slot] == slot_filled);  // what the end-of-run report counts as parked
  REQUIRE(ws.view.parked_hint() == 1);
  std::uint64_t got = 0, tag = 0;
  REQUIRE(ws.view.extract(slot, &got, sizeof(got), &tag) == 3);
  REQUIRE(got == value);
  REQUIRE(tag == 5);
  REQUIRE(ws.state[slot] == slot_free);
  REQUIRE(ws.view.parked_hint() == 0);

  // read() leaves the slot taken (not reservable, not counted as parked) until free_after_fence.
  const std::uint32_t again = ws.view.reserve(7);
  ws.view.write(again, 1, &value, sizeof(value), 6);
  REQUIRE(ws.view.read(again, &got, sizeof(got), &tag) == 1);
  REQUIRE(tag == 6);
  REQUIRE(ws.view.parked_hint() == 0);
  REQUIRE(ws.state[again] == slot_filled);
  for (int i = 0; i < 3; ++i) REQUIRE(ws.view.reserve(std::uint64_t(again)) != again);
  ws.view.free_after_fence(again);
  REQUIRE(ws.state[again] == slot_free);
}
