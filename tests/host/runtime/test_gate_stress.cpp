// Gates (gate.hpp) and gated waits in a block's hand-off slot (handoff.hpp), on CPU threads:
// the slot's state machine, and a barrier of many rounds whose waiters poll the arrival count
// itself, the protocol of Jacobi's stages_inline (apps/jacobi/src/task_graph.cuh) and of the
// GPU test "gated continuations". ThreadSanitizer (the stress label) checks that the gate's
// acquire orders every arrival's plain writes before the next round's reads.
#include "host_structures.hpp"

#include <apiary/gate.hpp>
#include <apiary/handoff.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <deque>
#include <mutex>
#include <random>

using namespace apiary;
using namespace apiary::testing;

namespace {
struct Job {
  std::uint32_t t, r;
};
using Slot = Handoff<8>;
constexpr std::uint32_t job_queue = 3;

Slot empty_slot() {
  Slot s;
  s.reset();
  s.accept = std::uint64_t(1) << job_queue;
  s.hold_accept = std::uint64_t(1) << job_queue;
  return s;
}
Job slot_job(const Slot& s) {
  Job j;
  std::memcpy(&j, s.item, sizeof j);
  return j;
}
}  // namespace

TEST_CASE("gate: a gated task is ready once the masked count reaches the target, and not before",
          "[gate][handoff]") {
  std::uint32_t word = 0;
  const Gate gate{&word, 0xffffu, 3};
  REQUIRE_FALSE(gate_open(gate));
  Slot slot = empty_slot();
  REQUIRE(slot.try_hold(job_queue));
  const Job job{5, 7};
  slot.put_gated(job_queue, &job, sizeof job, gate);
  REQUIRE(slot.full());
  REQUIRE(slot.held());
  REQUIRE(slot.fresh == 1);
  REQUIRE(slot.tag == no_dependency);
  word = 2 + (5u << 16);  // bits above the mask do not count
  REQUIRE_FALSE(slot.ready());
  REQUIRE(slot.held());
  word = 3 + (1u << 16);
  REQUIRE(slot.ready());
  REQUIRE_FALSE(slot.held());  // no longer waits; runs as the block's next batch
  REQUIRE(slot.was_held == 0);  // traced releases are for dependencies only
  REQUIRE(slot.ready());
  REQUIRE(slot_job(slot).t == 5);
  REQUIRE(slot_job(slot).r == 7);
  slot.clear();
  REQUIRE_FALSE(slot.full());
  // A plain hand-off after a gated one waits for nothing.
  REQUIRE(slot.try_take(job_queue));
  slot.put(job_queue, &job, sizeof job, no_dependency);
  REQUIRE_FALSE(slot.held());
  REQUIRE(slot.ready());
  // A gated task given back unrun (the run stopped) leaves the slot without a wait.
  slot.clear();
  word = 0;
  REQUIRE(slot.try_hold(job_queue));
  slot.put_gated(job_queue, &job, sizeof job, gate);
  REQUIRE_FALSE(slot.ready());
  slot.forget_wait();
  slot.clear();
  REQUIRE_FALSE(slot.held());
  REQUIRE_FALSE(slot.try_hold(job_queue + 1));  // queues the scheduler did not accept are not held
}

TEST_CASE("gate: a gated local hop waits for the gate a bounded number of polls", "[gate][handoff]") {
  std::uint32_t word = 0;
  const Gate gate{&word, 0xffffu, 2};
  Slot slot = empty_slot();
  const Job job{1, 2};
  REQUIRE(slot.try_hold(job_queue));
  slot.put_gated(job_queue, &job, sizeof job, gate);
  REQUIRE_FALSE(slot.local_hop_possible(job_queue));  // it waits
  REQUIRE(slot.gated_hop_possible(job_queue));
  REQUIRE_FALSE(slot.gated_hop_possible(job_queue + 1));
  // Closed: the wait gives up with the task still held, for the scheduler's loop.
  REQUIRE_FALSE(slot.await_gate());
  REQUIRE(slot.held());
  REQUIRE(slot.gated_hop_possible(job_queue));
  // Open: the task no longer waits and may run as a local hop.
  word = 2;
  REQUIRE(slot.await_gate());
  REQUIRE_FALSE(slot.held());
  REQUIRE(slot.local_hop_possible(job_queue));
  REQUIRE_FALSE(slot.gated_hop_possible(job_queue));
  REQUIRE(slot_job(slot).t == 1);
  // Neither kind of hop after ctx.stop() in the block.
  slot.clear();
  word = 0;
  REQUIRE(slot.try_hold(job_queue));
  slot.put_gated(job_queue, &job, sizeof job, gate);
  slot.stopping = 1;
  REQUIRE_FALSE(slot.gated_hop_possible(job_queue));
}

TEST_CASE("gate: rounds of tasks whose successors wait at the arrival count start after every arrival",
          "[gate][handoff][stress]") {
  const unsigned threads = stress_threads();
  const std::uint32_t tasks = 64, rounds = static_cast<std::uint32_t>(std::max<std::uint64_t>(50, scaled(3000)));
  constexpr std::uint32_t unit = 1u << 16;  // arrivals whose successor was not held
  std::uint32_t arrivals[3] = {0, 0, 0};
  std::vector<std::uint32_t> unheld(2 * tasks);
  std::vector<std::uint32_t> data(2 * tasks, ~0u);  // plain: ordered by the gate alone
  std::vector<std::atomic<std::uint32_t>> runs(std::size_t(tasks) * rounds);
  std::atomic<std::uint64_t> executed{0}, held_count{0}, spawned_count{0}, gated_hops{0};
  std::mutex queue_mutex;
  std::deque<Job> queue;
  for (std::uint32_t t = 0; t < tasks; ++t) queue.push_back(Job{t, 0});
  ThreadFailures failures;
  const std::uint64_t total = std::uint64_t(tasks) * rounds;

  auto push = [&](Job j) {
    std::lock_guard<std::mutex> lock(queue_mutex);
    queue.push_back(j);
  };
  auto pop = [&](Job& j) {
    std::lock_guard<std::mutex> lock(queue_mutex);
    if (queue.empty()) return false;
    j = queue.front();
    queue.pop_front();
    return true;
  };
  // Task (t, r) on a "block" with hand-off slot `slot`; `may_hold`: its slot is not taken.
  auto run_task = [&](Job job, Slot& slot, bool may_hold) {
    const std::uint32_t t = job.t, r = job.r;
    APIARY_THREAD_CHECK(failures, runs[t * rounds + r].fetch_add(1) == 0);
    if (r > 0)
      for (std::uint32_t u = 0; u < tasks; ++u) APIARY_THREAD_CHECK(failures, data[((r - 1) & 1) * tasks + u] == r - 1);
    data[(r & 1) * tasks + t] = r;
    executed.fetch_add(1);
    if (r + 1 == rounds) return;
    if (t == 0) store_relaxed(arrivals[(r + 1) % 3], 0u);
    const Job next{t, r + 1};
    const bool held = may_hold && slot.try_hold(job_queue);
    if (held) {
      slot.put_gated(job_queue, &next, sizeof next, Gate{&arrivals[r % 3], unit - 1, tasks});
      held_count.fetch_add(1);
    }
    store_relaxed(unheld[(r & 1) * tasks + t], held ? 0u : 1u);
    const std::uint32_t before = DeviceAtomic<std::uint32_t>(arrivals[r % 3]).fetch_add(held ? 1u : 1u + unit, mo::acq_rel);
    if ((before & (unit - 1)) != tasks - 1) return;
    for (std::uint32_t u = 0; u < tasks; ++u)
      if (u != t && load_relaxed(unheld[(r & 1) * tasks + u]) != 0) {
        spawned_count.fetch_add(1);
        push(Job{u, r + 1});
      }
    if (!held) {  // its own last, after every flag was read
      spawned_count.fetch_add(1);
      push(next);
    }
  };

  run_threads(threads, [&](unsigned id) {
    std::mt19937 rng(Catch::rngSeed() + id);
    Slot slot = empty_slot();
    while (executed.load() < total && failures.count == 0) {
      if (slot.full() && slot.ready()) {
        Job j = slot_job(slot);
        slot.clear();
        run_task(j, slot, rng() % 4 != 0);  // now and then the slot counts as taken: spawned instead
        // Gated local hops (take_local_hop): on odd threads the task held at the gate runs here
        // once the gate opens within await_gate's polls, else the loop above takes it.
        while (id % 2 == 1 && slot.gated_hop_possible(job_queue) && slot.await_gate()) {
          gated_hops.fetch_add(1, std::memory_order_relaxed);
          j = slot_job(slot);
          slot.clear();
          run_task(j, slot, rng() % 4 != 0);
        }
        continue;
      }
      Job j;
      if (!pop(j)) {
        std::this_thread::yield();
        continue;
      }
      // A task from the queue may hold only if this block's slot is free.
      run_task(j, slot, !slot.full() && rng() % 4 != 0);
    }
  });

  INFO(failures.first);
  INFO("gated local hops " << gated_hops.load());
  REQUIRE(failures.count == 0);
  REQUIRE(executed.load() == total);
  for (const auto& n : runs) REQUIRE(n.load() == 1);
  REQUIRE(held_count.load() > 0);
  REQUIRE(spawned_count.load() > 0);
  REQUIRE(held_count.load() + spawned_count.load() == std::uint64_t(tasks) * (rounds - 1));  // each successor once
}
