// Individual dependencies under concurrency: spawn_when and resolve calls for many
// dependencies interleave arbitrarily on 8 threads (resolutions often arrive before the
// spawn). Every waiting task is released exactly once, only after all its resolutions, and
// nothing stays in the waiting storage.
#include "host_structures.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <random>

using namespace apiary;
using namespace apiary::testing;

namespace {
struct Waiter {
  std::uint32_t dep;
  std::uint32_t expected;
};
struct Op {
  std::uint32_t dep;
  bool spawn;
};
// Parks at a chosen slot (a reused dependency sees its slot bits shrink and grow).
struct StartAt {
  std::uint32_t slot;
  std::uint32_t start(std::uint64_t, std::uint32_t) const { return slot; }
};
// spawn_when for waiter `w` of dependency `d`: parks it in `ws` (queue 7) or, when every
// resolution came first, calls `direct`. The stress tests' one way to park.
template <class Direct>
SpawnWhenOutcome park_waiter(HostWaitingStorage& ws, Dependency& dep, std::uint32_t d, const Waiter& w,
                             Direct&& direct) {
  return spawn_when(
      dep, std::int32_t(w.expected),
      [&] {
        const std::uint32_t slot = ws.view.reserve(d);
        if (slot != no_slot) ws.view.write(slot, 7, &w, sizeof(w), d);
        return slot;
      },
      [&](std::uint32_t slot) { ws.view.discard(slot); }, direct);
}
}  // namespace

TEST_CASE("dependency: concurrent spawn_when and resolve release each task once, after all resolutions",
          "[dependency][stress]") {
  const unsigned threads = stress_threads();
  const auto deps = static_cast<std::uint32_t>(scaled(1'500'000));
  std::mt19937_64 rng(Catch::rngSeed() + 17);

  std::vector<std::uint32_t> needed(deps);
  std::vector<Op> ops;
  for (std::uint32_t d = 0; d < deps; ++d) {
    needed[d] = 1 + static_cast<std::uint32_t>(rng() % 8);
    ops.push_back({d, true});
    for (std::uint32_t r = 0; r < needed[d]; ++r) ops.push_back({d, false});
  }
  std::shuffle(ops.begin(), ops.end(), rng);  // resolutions before and after spawns

  ErrorWord error{};
  HostWaitingStorage ws(deps + deps / 4, sizeof(Waiter), &error);
  HostQueue ready(deps, sizeof(Waiter), &error);
  std::vector<Dependency> dependency(deps);
  std::vector<std::atomic<std::uint32_t>> resolved(deps);
  std::vector<std::atomic<std::uint32_t>> released(deps);
  ThreadFailures failures;

  auto release = [&](std::uint32_t slot) {
    Waiter w{};
    const std::uint32_t queue = ws.view.extract(slot, &w, sizeof(w));
    APIARY_THREAD_CHECK(failures, queue == 7);
    APIARY_THREAD_CHECK(failures, resolved[w.dep].load() == w.expected);  // all resolutions happened first
    APIARY_THREAD_CHECK(failures, released[w.dep].fetch_add(1) == 0);
    APIARY_THREAD_CHECK(failures, ready.view.push(w));
  };

  const std::size_t chunk = (ops.size() + threads - 1) / threads;
  run_threads(threads, [&](unsigned t) {
    const std::size_t begin = t * chunk, end = std::min(ops.size(), begin + chunk);
    for (std::size_t i = begin; i < end; ++i) {
      const std::uint32_t d = ops[i].dep;
      if (ops[i].spawn) {
        const Waiter w{d, needed[d]};
        park_waiter(ws, dependency[d], d, w, [&] {
          APIARY_THREAD_CHECK(failures, resolved[d].load() == needed[d]);
          APIARY_THREAD_CHECK(failures, released[d].fetch_add(1) == 0);
          APIARY_THREAD_CHECK(failures, ready.view.push(w));
        });
      } else {
        resolved[d].fetch_add(1);
        resolve(dependency[d], release);
      }
    }
  });

  INFO(failures.first);
  REQUIRE(failures.count == 0);
  REQUIRE(error.code == 0);
  REQUIRE(ws.view.parked_hint() == 0);
  REQUIRE(ready.view.available_hint() == std::int64_t(deps));
  for (std::uint32_t d = 0; d < deps; ++d) {
    REQUIRE(released[d].load() == 1);
    REQUIRE(dependency[d].counter() == 0);  // reusable
  }
}

TEST_CASE("dependency: resolutions before the spawn: it enqueues directly, without a slot", "[dependency]") {
  ErrorWord error{};
  HostWaitingStorage ws(4, 8, &error);
  Dependency dep;
  int released = 0, direct = 0, parks = 0;
  auto release = [&](std::uint32_t) { ++released; };
  auto discard = [&](std::uint32_t slot) { ws.view.discard(slot); };
  const std::uint64_t v = 42;
  std::function<void()> while_parking = [] {};
  auto park = [&] {
    ++parks;
    const std::uint32_t slot = ws.view.reserve(1, StartAt{3});
    ws.view.write(slot, 0, &v, sizeof(v), 0);
    while_parking();
    return slot;
  };

  SECTION("all of them before the spawn looks") {
    REQUIRE_FALSE(resolve(dep, release));
    REQUIRE_FALSE(resolve(dep, release));
    REQUIRE(dep.counter() == -2);
    REQUIRE(spawn_when(dep, 2, park, discard, [&] { ++direct; }) == SpawnWhenOutcome::direct);
    REQUIRE(parks == 0);
  }
  SECTION("the last ones while it parks: it takes the slot back") {
    REQUIRE_FALSE(resolve(dep, release));
    while_parking = [&] {
      REQUIRE_FALSE(resolve(dep, release));
      REQUIRE(dep.counter() == -2);
    };
    REQUIRE(spawn_when(dep, 2, park, discard, [&] { ++direct; }) == SpawnWhenOutcome::direct);
    REQUIRE(parks == 1);
    REQUIRE(ws.state[3] == slot_free);
  }
  REQUIRE(direct == 1);
  REQUIRE(released == 0);
  REQUIRE(dep.counter() == 0);
  REQUIRE(ws.view.parked_hint() == 0);
  REQUIRE(error.code == 0);
}

TEST_CASE("dependency: the last resolution releases a parked task; retain adds expected resolutions",
          "[dependency]") {
  ErrorWord error{};
  HostWaitingStorage ws(4, 8, &error);
  Dependency dep;
  int released = 0;
  std::uint64_t v = 0;
  auto release = [&](std::uint32_t slot) {
    ws.view.extract(slot, &v, sizeof(v));
    ++released;
  };
  auto park = [&] {
    const std::uint64_t v = 42;
    const auto slot = ws.view.reserve(0);
    ws.view.write(slot, 0, &v, 8, 0);
    return slot;
  };
  auto discard = [&](std::uint32_t slot) { ws.view.discard(slot); };
  REQUIRE(spawn_when(dep, 1, park, discard, [] {}) == SpawnWhenOutcome::parked);
  REQUIRE(ws.view.parked_hint() == 1);
  retain(dep, 2);  // the holder hands its count to two children
  REQUIRE_FALSE(resolve(dep, release));
  REQUIRE_FALSE(resolve(dep, release));
  REQUIRE(released == 0);
  REQUIRE(resolve(dep, release));
  REQUIRE(released == 1);
  REQUIRE(v == 42);
  REQUIRE(ws.view.parked_hint() == 0);
  REQUIRE(dep.counter() == 0);
}

TEST_CASE("dependency: a reused dependency keeps counter and slot apart in its word", "[dependency]") {
  ErrorWord error{};
  HostWaitingStorage ws(8, 8, &error);
  Dependency dep;
  std::uint64_t got = 0;
  auto release = [&](std::uint32_t slot) { ws.view.extract(slot, &got, sizeof(got)); };
  for (const std::uint32_t at : {5u, 2u, 7u, 0u, 7u, 1u}) {
    const std::uint64_t value = 100 + at;
    REQUIRE_FALSE(resolve(dep, release));  // one resolution before the spawn: the counter goes negative
    REQUIRE(dep.counter() == -1);
    auto park = [&] {
      const std::uint32_t slot = ws.view.reserve(0, StartAt{at});
      ws.view.write(slot, 0, &value, sizeof(value), 0);
      return slot;
    };
    REQUIRE(spawn_when(dep, 3, park, [&](std::uint32_t slot) { ws.view.discard(slot); }, [] {}) ==
            SpawnWhenOutcome::parked);
    REQUIRE(dep.counter() == 2);
    REQUIRE(Dependency::slot_of(dep.word) == at);
    REQUIRE_FALSE(resolve(dep, release));
    REQUIRE(resolve(dep, release));
    REQUIRE(got == value);
    REQUIRE(dep.counter() == 0);
    REQUIRE(ws.view.parked_hint() == 0);
  }
  REQUIRE(error.code == 0);
}

// Held waits (ctx.spawn_next_when under the megakernel, dependency.hpp): the waiting task stays
// with its holder, which polls; no resolution may release anything.
TEST_CASE("dependency: a held wait is ready after exactly n resolutions, before or after the hold, retain included",
          "[dependency]") {
  Dependency dep;
  int released = 0;
  auto release = [&](std::uint32_t) { ++released; };
  SECTION("resolutions after the hold") {
    REQUIRE_FALSE(hold(dep, 2));
    REQUIRE_FALSE(held_ready(dep));
    REQUIRE_FALSE(resolve(dep, release));
    REQUIRE_FALSE(held_ready(dep));
    REQUIRE_FALSE(resolve_after_fence(dep, release));
    REQUIRE(held_ready(dep));
  }
  SECTION("all of them before the hold") {
    REQUIRE_FALSE(resolve(dep, release));
    REQUIRE_FALSE(resolve(dep, release));
    REQUIRE(hold(dep, 2));  // ready at once, the offset given back
  }
  SECTION("retain: the holder hands its count to two children") {
    REQUIRE_FALSE(hold(dep, 1));
    retain(dep, 2);
    for (int i = 0; i < 2; ++i) {
      REQUIRE_FALSE(resolve(dep, release));
      REQUIRE_FALSE(held_ready(dep));
    }
    REQUIRE_FALSE(resolve(dep, release));
    REQUIRE(held_ready(dep));
  }
  REQUIRE(released == 0);
  REQUIRE(dep.counter() == 0);  // reusable: a parked wait works on it next
  REQUIRE_FALSE(resolve(dep, release));
  REQUIRE(dep.counter() == -1);
}

// A held wait begins after its holder's task, for the resolutions that task did not supply
// itself (Context counts those; Handoff::begin_hold): hold()'s reply says whether the others
// came already, before the wait began.
TEST_CASE("dependency: a held wait begun after some resolutions came is ready exactly when the rest came",
          "[dependency]") {
  Dependency dep;
  int released = 0;
  auto release = [&](std::uint32_t) { ++released; };
  SECTION("one before the hold, one after, both kinds") {
    REQUIRE_FALSE(resolve_after_fence(dep, release));
    REQUIRE_FALSE(hold(dep, 2));
    REQUIRE_FALSE(held_ready(dep));
    REQUIRE_FALSE(resolve(dep, release));
    REQUIRE(held_ready(dep));
  }
  SECTION("reused: a parked wait, then a held one, on the same word") {
    ErrorWord error{};
    HostWaitingStorage ws(2, 8, &error);
    auto park = [&] {
      const std::uint64_t v = 7;
      const auto slot = ws.view.reserve(0);
      ws.view.write(slot, 0, &v, 8, 0);
      return slot;
    };
    REQUIRE(spawn_when(dep, 1, park, [&](std::uint32_t slot) { ws.view.discard(slot); }, [] {}) ==
            SpawnWhenOutcome::parked);
    REQUIRE(resolve(dep, [&](std::uint32_t slot) { ws.view.discard(slot); }));
    REQUIRE_FALSE(resolve(dep, release));
    REQUIRE(hold(dep, 1));
  }
  REQUIRE(released == 0);  // a held wait is never released by a resolution
  REQUIRE(dep.counter() == 0);
  REQUIRE_FALSE(held_ready(dep));
}

TEST_CASE("dependency: concurrent held and parked waits with resolve_after_fence: each ready or released once, "
          "after all resolutions",
          "[dependency][stress]") {
  const unsigned threads = stress_threads();
  const auto deps = static_cast<std::uint32_t>(scaled(1'000'000));
  // Whether a holder may supply some of its wait's resolutions itself (Context::resolve of the
  // dependency its task held on: counted by the task, the wait begun after it for the rest).
  const bool holders_resolve = GENERATE(false, true);
  std::mt19937_64 rng(Catch::rngSeed() + 29);
  enum class Kind : std::uint8_t { hold, park, resolve };
  struct HoldOp {
    std::uint32_t dep;
    Kind kind;
  };
  std::vector<std::uint32_t> needed(deps), supplied(deps);
  std::vector<bool> held(deps);
  std::vector<HoldOp> ops;
  for (std::uint32_t d = 0; d < deps; ++d) {
    needed[d] = 1 + static_cast<std::uint32_t>(rng() % 8);
    held[d] = rng() % 2 == 0;
    // Between none and all of them (all: the wait is complete when it begins).
    supplied[d] = held[d] && holders_resolve ? static_cast<std::uint32_t>(rng() % (needed[d] + 1)) : 0;
    ops.push_back({d, held[d] ? Kind::hold : Kind::park});
    for (std::uint32_t r = supplied[d]; r < needed[d]; ++r) ops.push_back({d, Kind::resolve});
  }
  std::shuffle(ops.begin(), ops.end(), rng);

  ErrorWord error{};
  HostWaitingStorage ws(deps + deps / 4, sizeof(Waiter), &error);
  std::vector<Dependency> dependency(deps);
  std::vector<std::atomic<std::uint32_t>> resolved(deps);
  std::vector<std::atomic<std::uint32_t>> ran(deps);
  std::vector<std::atomic<bool>> ran_at_hold(deps);
  ThreadFailures failures;

  auto run = [&](std::uint32_t d) {
    APIARY_THREAD_CHECK(failures, resolved[d].load() == needed[d]);  // all resolutions happened first
    APIARY_THREAD_CHECK(failures, ran[d].fetch_add(1) == 0);
  };
  auto release = [&](std::uint32_t slot) {
    Waiter w{};
    ws.view.extract(slot, &w, sizeof(w));
    APIARY_THREAD_CHECK(failures, !held[w.dep]);  // held waits are never released by a resolution
    run(w.dep);
  };
  const std::size_t chunk = (ops.size() + threads - 1) / threads;
  run_threads(threads, [&](unsigned t) {
    const std::size_t begin = t * chunk, end = std::min(ops.size(), begin + chunk);
    for (std::size_t i = begin; i < end; ++i) {
      const std::uint32_t d = ops[i].dep;
      switch (ops[i].kind) {
        case Kind::hold: {  // what Handoff::begin_hold does after the holding task
          resolved[d].fetch_add(supplied[d]);
          const auto remaining = std::int32_t(needed[d] - supplied[d]);
          bool ready = remaining == 0 || hold(dependency[d], remaining);
          if (!ready) ready = held_ready(dependency[d]);  // the block's first poll; the rest after the run
          if (ready) {
            ran_at_hold[d] = true;
            run(d);
          }
          break;
        }
        case Kind::park: {
          park_waiter(ws, dependency[d], d, Waiter{d, needed[d]}, [&] { run(d); });
          break;
        }
        case Kind::resolve:
          resolved[d].fetch_add(1);
          resolve_after_fence(dependency[d], release);
          break;
      }
    }
  });

  INFO(failures.first);
  REQUIRE(failures.count == 0);
  REQUIRE(error.code == 0);
  REQUIRE(ws.view.parked_hint() == 0);
  for (std::uint32_t d = 0; d < deps; ++d) {
    if (held[d] && !ran_at_hold[d]) {
      REQUIRE(held_ready(dependency[d]));  // every resolution is in: the holder's next poll runs it
      run(d);
    }
    REQUIRE(ran[d].load() == 1);
    REQUIRE(dependency[d].counter() == 0);  // reusable
  }
  REQUIRE(failures.count == 0);
}
