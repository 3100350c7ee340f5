// The work queue under many producers and consumers on CPU threads: nothing lost, nothing
// duplicated, each producer's items consumed in ticket (FIFO) order; overflow is reported.
#include "host_structures.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>

using namespace apiary;
using namespace apiary::testing;

namespace {
struct Item {
  std::uint32_t producer;
  std::uint32_t sequence;
};
struct Consumed {
  std::uint64_t ticket;
  Item item;
};
}  // namespace

TEST_CASE("queue: MPMC batches lose, duplicate and reorder nothing", "[queue][stress]") {
  ErrorWord error{};
  HostQueue q(4096, sizeof(Item), &error);
  const unsigned producers = stress_threads(), consumers = stress_threads();
  const std::uint64_t per_producer = scaled(1'000'000);
  const std::uint64_t total = per_producer * producers;
  std::atomic<std::uint64_t> consumed_count{0};
  std::vector<std::vector<Consumed>> consumed(consumers);
  ThreadFailures failures;

  run_threads(producers + consumers, [&](unsigned t) {
    const QueueView& v = q.view;
    if (t < producers) {
      std::uint64_t next = 0;
      while (next < per_producer) {
        const auto k = static_cast<std::uint32_t>(std::min<std::uint64_t>(1 + next % 7, per_producer - next));
        while (v.outstanding_hint() + std::int64_t(k) > std::int64_t(v.capacity()) - 64) std::this_thread::yield();  // back-pressure
        std::uint64_t first;
        APIARY_THREAD_CHECK(failures, v.reserve(k, first));
        for (std::uint32_t i = 0; i < k; ++i) {
          Item item{t, static_cast<std::uint32_t>(next + i)};
          APIARY_THREAD_CHECK(failures, v.wait_free(first + i));
          v.write(first + i, &item, sizeof(Item));
          v.publish(first + i);
        }
        v.commit(k);
        next += k;
      }
    } else {
      auto& mine = consumed[t - producers];
      while (consumed_count.load() < total) {
        std::uint64_t first;
        const std::uint32_t n = v.claim(16, first);
        if (n == 0) {
          std::this_thread::yield();
          continue;
        }
        for (std::uint32_t i = 0; i < n; ++i) {
          APIARY_THREAD_CHECK(failures, v.wait_published(first + i));
          Item item;
          v.read(first + i, &item, sizeof(Item));
          v.release(first + i);
          mine.push_back({first + i, item});
        }
        consumed_count.fetch_add(n);
      }
    }
  });

  INFO(failures.first);
  REQUIRE(failures.count == 0);
  REQUIRE(error.code == 0);
  std::vector<Consumed> all;
  for (auto& c : consumed) all.insert(all.end(), c.begin(), c.end());
  REQUIRE(all.size() == total);
  std::sort(all.begin(), all.end(), [](const Consumed& a, const Consumed& b) { return a.ticket < b.ticket; });
  std::vector<std::uint64_t> next_expected(producers, 0);
  for (std::size_t i = 0; i < all.size(); ++i) {
    REQUIRE(all[i].ticket == i);  // every ticket consumed once
    const Item& item = all[i].item;
    REQUIRE(item.producer < producers);
    REQUIRE(item.sequence == next_expected[item.producer]);  // per-producer FIFO, no loss or duplicate
    ++next_expected[item.producer];
  }
  REQUIRE(q.view.available_hint() == 0);
}

TEST_CASE("queue: overflow raises queue_full with the capacity", "[queue]") {
  ErrorWord error{};
  HostQueue q(8, sizeof(Item), &error, 3);
  for (std::uint32_t i = 0; i < 8; ++i) REQUIRE(q.view.push(Item{0, i}));
  REQUIRE_FALSE(q.view.push(Item{0, 8}));
  REQUIRE(error.code == static_cast<std::uint32_t>(ErrorCode::queue_full));
  REQUIRE(error.where == 3);
  REQUIRE(error.capacity == 8);
}

TEST_CASE("queue: capacity rounds up to a power of two and wraps around", "[queue]") {
  ErrorWord error{};
  HostQueue q(5, sizeof(Item), &error);
  REQUIRE(q.view.capacity() == 8);
  for (std::uint32_t round = 0; round < 100; ++round) {
    for (std::uint32_t i = 0; i < 6; ++i) REQUIRE(q.view.push(Item{round, i}));
    for (std::uint32_t i = 0; i < 6; ++i) {
      Item item{};
      REQUIRE(q.view.pop(item));
      REQUIRE(item.producer == round);
      REQUIRE(item.sequence == i);
    }
    Item none{};
    REQUIRE_FALSE(q.view.pop(none));
  }
  REQUIRE(error.code == 0);
}
