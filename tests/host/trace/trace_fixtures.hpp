// Hand-made and random traces for the trace export/check/plot tests.
#pragma once

#include <apiary/trace.hpp>

#include <algorithm>
#include <cstdint>
#include <queue>
#include <random>
#include <string>
#include <vector>

namespace apiary::test {

// Far from 0 so that 64-bit exactness matters (a double holds only 53 bits).
inline constexpr std::uint64_t t0 = 1'700'000'000'123'456'789ULL;

// Builds traces one task/event at a time; task indices are assigned in order.
class TraceBuilder {
 public:
  TraceBuilder(std::vector<std::string> names, std::vector<int> phases, int num_phases,
               bool cyclic = false) {
    trace.device = "test device";
    trace.scheduler = "test scheduler";
    trace.queue_names = std::move(names);
    trace.queue_phase = std::move(phases);
    trace.num_phases = num_phases;
    trace.cyclic = cyclic;
    trace.num_sms = 4;
  }

  // A task of `queue` from t0+start to t0+end; its phase is its queue's phase.
  TaskRecord& task(std::uint32_t queue, std::uint64_t start, std::uint64_t end, std::uint32_t sm = 0,
                   std::uint32_t epoch = 0, std::uint64_t dependency = 0) {
    TaskRecord record{};
    record.start_ns = t0 + start;
    record.end_ns = t0 + end;
    record.dependency = dependency;
    record.task = static_cast<std::uint32_t>(trace.tasks.size());
    record.queue = queue;
    record.sm = sm;
    record.block = sm * 2;
    record.slot = static_cast<std::uint16_t>(trace.tasks.size() % 4);
    record.phase = static_cast<std::int16_t>(trace.queue_phase.at(queue));
    record.phase_epoch = epoch;
    trace.tasks.push_back(record);
    return trace.tasks.back();
  }

  void park(std::uint64_t time, std::uint64_t dependency, std::uint32_t by_task, std::int32_t count,
            std::uint32_t queue) {
    trace.events.push_back({t0 + time, dependency,
                            static_cast<std::uint32_t>(DependencyEventKind::park), by_task, count,
                            queue});
  }
  void resolve(std::uint64_t time, std::uint64_t dependency, std::uint32_t by_task) {
    trace.events.push_back({t0 + time, dependency,
                            static_cast<std::uint32_t>(DependencyEventKind::resolve), by_task, 0,
                            no_task});
  }
  void release(std::uint64_t time, std::uint64_t dependency, std::uint32_t by_task,
               std::uint32_t queue) {
    trace.events.push_back({t0 + time, dependency,
                            static_cast<std::uint32_t>(DependencyEventKind::release), by_task, 0,
                            queue});
  }

  Trace trace;
};

// Three phases plus a phaseless queue, on 2 SMs with overlapping tasks; phase boundaries touch
// (end == next start), which must pass because %globaltimer is coarse.
inline TraceBuilder phased_trace() {
  TraceBuilder b({"init", "relax", "emit", "finish", "log"}, {0, 1, 1, 2, -1}, 3);
  b.task(0, 0, 100, 0, 0);
  b.task(0, 10, 90, 0, 0);  // overlaps the first on SM 0 (another worker slot)
  b.task(0, 5, 80, 1, 0);
  b.task(4, 50, 150, 1, 0);  // phaseless: runs across the boundary
  b.task(1, 100, 200, 0, 1);
  b.task(2, 120, 180, 1, 1);
  b.task(1, 130, 210, 1, 1);
  b.task(3, 210, 300, 0, 2);
  b.task(3, 220, 260, 1, 2);
  return b;
}

// A cyclic graph: phases 0,1,0,1 with epochs 0..3.
inline TraceBuilder cyclic_trace() {
  TraceBuilder b({"a", "b"}, {0, 1}, 2, /*cyclic=*/true);
  std::uint64_t t = 0;
  for (std::uint32_t epoch = 0; epoch < 4; ++epoch) {
    const std::uint32_t queue = epoch % 2;
    b.task(queue, t, t + 40, 0, epoch);
    b.task(queue, t + 5, t + 50, 1, epoch);
    t += 50;
  }
  return b;
}

inline constexpr std::uint64_t dep_a = 0x7f00'0000'1000ULL;
inline constexpr std::uint64_t dep_b = 0x7f00'0000'2040ULL;

// Individual dependencies: dep_a is resolved once before its park (early resolve) and once
// after; dep_b is used twice in sequence (1 then 2 resolutions). Released tasks start exactly
// at their last resolve/release where possible.
inline TraceBuilder dependency_trace() {
  TraceBuilder b({"producer", "consumer"}, {-1, -1}, 0);
  b.task(0, 0, 10, 0);  // 0: resolves dep_a early
  b.resolve(5, dep_a, 0);
  b.task(0, 8, 30, 1);  // 1: parks the consumer on dep_a (2 resolutions)
  b.park(10, dep_a, 1, 2, 1);
  b.task(0, 15, 25, 2);  // 2: resolves dep_a the second time: release
  b.resolve(20, dep_a, 2);
  b.release(20, dep_a, 2, 1);
  b.task(1, 20, 40, 3, 0, dep_a);  // 3: the released consumer

  b.task(0, 30, 45, 0);  // 4: parks on dep_b (1), resolves it
  b.park(31, dep_b, 4, 1, 1);
  b.resolve(40, dep_b, 4);
  b.release(40, dep_b, 4, 1);
  b.task(1, 45, 50, 1, 0, dep_b);  // 5
  b.task(0, 50, 75, 2);            // 6: parks again on dep_b (2), resolves both
  b.park(50, dep_b, 6, 2, 1);
  b.resolve(60, dep_b, 6);
  b.resolve(70, dep_b, 6);
  b.release(70, dep_b, 6, 1);
  b.task(1, 80, 90, 0, 0, dep_b);  // 7
  return b;
}

// A simulated run of the thesis's generic test (section 7.1): type 0 ("expand") spawns one
// task each of types 1 and 2 ("left", "right"); type 3 ("combine") task i waits for left i and
// right i. With `phases`, types run in phases 0 | 1,2 | 3 behind barriers; otherwise combine i
// waits on its own dependency (park by expand i, resolves by left i and right i). Tasks go
// greedily to the earliest free worker (sms x slots workers). The result passes check_trace.
inline Trace simulated_trace(bool phases, std::uint32_t sms, std::uint32_t slots, std::size_t per_type,
                             std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<std::uint64_t> jitter(0, 400);
  const std::uint64_t base_cost[4] = {800, 1500, 1100, 600};
  Trace trace;
  trace.device = "simulated";
  trace.scheduler = phases ? "phases" : "individual dependencies";
  trace.queue_names = {"expand", "left", "right", "combine"};
  trace.queue_phase = phases ? std::vector<int>{0, 1, 1, 2} : std::vector<int>{-1, -1, -1, -1};
  trace.num_phases = phases ? 3 : 0;
  trace.num_sms = sms;
  trace.tasks.resize(4 * per_type);
  auto index = [&](std::uint32_t type, std::size_t i) { return type * per_type + i; };
  for (std::uint32_t type = 0; type < 4; ++type)
    for (std::size_t i = 0; i < per_type; ++i) {
      TaskRecord& r = trace.tasks[index(type, i)];
      r.task = static_cast<std::uint32_t>(index(type, i));
      r.queue = type;
      r.phase = static_cast<std::int16_t>(trace.queue_phase[type]);
      r.phase_epoch = phases ? static_cast<std::uint32_t>(trace.queue_phase[type]) : 0;
      r.dependency = phases || type != 3 ? no_dependency : 0x7f00'0000'0000ULL + 64 * i;
    }

  // Event-driven list scheduling: pop the earliest ready task, run it on the earliest free worker.
  using Ready = std::pair<std::uint64_t, std::size_t>;  // (ready time, task index)
  std::priority_queue<Ready, std::vector<Ready>, std::greater<>> ready;
  std::priority_queue<std::pair<std::uint64_t, std::uint32_t>,
                      std::vector<std::pair<std::uint64_t, std::uint32_t>>, std::greater<>> workers;
  for (std::uint32_t w = 0; w < sms * slots; ++w) workers.emplace(t0, w);
  std::vector<std::uint64_t> combine_ready(per_type, 0);
  std::vector<int> combine_waiting(per_type, 2);
  auto run = [&](std::size_t t, std::uint64_t when) {
    auto [free_at, worker] = workers.top();
    workers.pop();
    TaskRecord& r = trace.tasks[t];
    r.start_ns = std::max(free_at, when);
    r.end_ns = r.start_ns + base_cost[r.queue] + jitter(rng);
    r.sm = worker / slots;
    r.block = r.sm;
    r.slot = static_cast<std::uint16_t>(worker % slots);
    workers.emplace(r.end_ns, worker);
    return r.end_ns;
  };
  auto event = [&](DependencyEventKind kind, std::uint64_t time, std::size_t i, std::size_t by,
                   std::int32_t count, std::uint32_t queue) {
    trace.events.push_back({time, trace.tasks[index(3, i)].dependency,
                            static_cast<std::uint32_t>(kind), static_cast<std::uint32_t>(by), count,
                            queue});
  };
  if (!phases)
    for (std::size_t i = 0; i < per_type; ++i) ready.emplace(t0, index(0, i));
  std::uint64_t barrier = t0;
  for (int phase = 0; phase < (phases ? 3 : 1); ++phase) {
    if (phases) {  // every task of the phase is ready at the barrier
      for (std::uint32_t type = 0; type < 4; ++type)
        if (trace.queue_phase[type] == phase)
          for (std::size_t i = 0; i < per_type; ++i) ready.emplace(barrier, index(type, i));
    }
    std::uint64_t phase_end = barrier;
    while (!ready.empty()) {
      auto [when, t] = ready.top();
      ready.pop();
      const std::uint64_t end = run(t, when);
      phase_end = std::max(phase_end, end);
      const std::uint32_t type = trace.tasks[t].queue;
      const std::size_t i = t % per_type;
      if (phases) continue;
      if (type == 0) {
        event(DependencyEventKind::park, end, i, t, 2, 3);
        ready.emplace(end, index(1, i));
        ready.emplace(end, index(2, i));
      } else if (type == 1 || type == 2) {
        event(DependencyEventKind::resolve, end, i, t, 0, no_task);
        combine_ready[i] = std::max(combine_ready[i], end);
        if (--combine_waiting[i] == 0) {
          event(DependencyEventKind::release, combine_ready[i], i, t, 0, 3);
          ready.emplace(combine_ready[i], index(3, i));
        }
      }
    }
    barrier = phase_end;
  }
  return trace;
}

// Random values in every field over their full ranges (export must be exact, not sensible).
inline Trace random_trace(std::uint32_t seed, std::size_t tasks, std::size_t events) {
  std::mt19937_64 rng(seed);
  auto u64 = [&] { return rng(); };
  auto below = [&](std::uint64_t n) { return rng() % n; };
  Trace trace;
  trace.device = "NVIDIA H100 80GB HBM3, \"quoted\" \xc3\xa9";
  trace.scheduler = "megakernel";
  const std::size_t queues = 1 + below(6);
  for (std::size_t q = 0; q < queues; ++q) {
    trace.queue_names.push_back("queue,\"" + std::to_string(q) + "\"\n");
    trace.queue_phase.push_back(static_cast<int>(below(4)) - 1);
  }
  trace.num_phases = 3;
  trace.cyclic = below(2) == 1;
  trace.num_sms = static_cast<std::uint32_t>(below(200));
  trace.dropped_tasks = u64();
  trace.dropped_events = u64();
  const std::uint64_t base = u64() / 2;
  for (std::size_t i = 0; i < tasks; ++i) {
    TaskRecord r{};
    r.start_ns = base + below(std::uint64_t{1} << 40);
    r.end_ns = base + below(std::uint64_t{1} << 40);  // may be before start: must still export
    r.dependency = below(3) == 0 ? 0 : u64();
    r.task = static_cast<std::uint32_t>(u64());
    r.queue = static_cast<std::uint32_t>(below(queues + 2));  // sometimes out of range
    r.sm = static_cast<std::uint32_t>(below(300));
    r.block = static_cast<std::uint32_t>(u64());
    r.slot = static_cast<std::uint16_t>(u64());
    r.phase = static_cast<std::int16_t>(u64());
    r.phase_epoch = static_cast<std::uint32_t>(u64());
    trace.tasks.push_back(r);
  }
  for (std::size_t i = 0; i < events; ++i) {
    DependencyEvent e{};
    e.time_ns = base + below(std::uint64_t{1} << 40);
    e.dependency = u64();
    e.kind = static_cast<std::uint32_t>(below(5));  // 3, 4: unknown kinds
    e.task = below(4) == 0 ? no_task : static_cast<std::uint32_t>(u64());
    e.count = static_cast<std::int32_t>(static_cast<std::uint32_t>(u64()));
    e.queue = below(2) == 0 ? no_task : static_cast<std::uint32_t>(u64());
    trace.events.push_back(e);
  }
  return trace;
}

}  // namespace apiary::test
