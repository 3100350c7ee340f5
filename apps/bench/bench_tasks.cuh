// Task types of the runtime benchmark and the loop that times a Runtime: seed, run, check.
#pragma once

#include "bench.hpp"

#include <apiary/apiary.cuh>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace apiary_bench {

// No seeded or spawned item carries this index. Tasks compare their item with it so that
// the item must really be read (an unused item would let the compiler drop the load the
// runtime makes on the task's behalf); the trap never fires.
inline constexpr std::uint32_t never_index = 0xffffffffu;

__device__ inline void touch(std::uint32_t index) {
  if (index == never_index) __trap();
}

consteval const char* empty_name(unsigned threads) {
  return threads == 1 ? "Empty1" : threads == 32 ? "Empty32" : threads == 256 ? "Empty256" : "Empty";
}

// The empty task: reads its item and returns.
template <unsigned Threads>
struct Empty {
  struct Item {
    std::uint32_t index;
  };
  static constexpr unsigned threads = Threads;
  static constexpr unsigned shared_bytes = 0;
  static constexpr const char* name = empty_name(Threads);
  template <class Ctx>
  __device__ void operator()(apiary::Worker, const Item& item, Ctx&) const {
    touch(item.index);
  }
};

template <unsigned Threads>
using EmptyGraph = apiary::PhaseQueue<apiary::Phaseless<Empty<Threads>>>;

// Items 0..n-1.
template <class Item>
std::vector<Item> indexed_items(std::uint64_t n) {
  std::vector<Item> items(n);
  for (std::uint64_t i = 0; i < n; ++i) items[i].index = static_cast<std::uint32_t>(i);
  return items;
}

// One run of the seeded Runtime and its check: `check(report)` returns an empty string when
// the run did what it should, else what went wrong. Throws Failure naming the benchmark.
template <class Graph, class Check>
apiary::Report checked_run(apiary::Runtime<Graph>& rt, const std::string& benchmark, Check&& check) {
  apiary::Report report;
  try {
    report = rt.run();
  } catch (const apiary::Error& e) {
    throw Failure(benchmark, std::string("run failed: ") + e.what());
  }
  if (!report.ok()) throw Failure(benchmark, "run did not finish:\n" + report.format());
  const std::string problem = check(report);
  if (!problem.empty()) throw Failure(benchmark, problem + "\n" + report.format());
  return report;
}

// One warm-up run, then `repeats` timed runs of the same Runtime: seed (host time, kept
// apart), run (kernel time from the runtime's CUDA events), check (checked_run).
template <class Graph, class Seed, class Check>
void time_runs(apiary::Runtime<Graph>& rt, int repeats, const std::string& benchmark, Seed&& seed, Check&& check,
               Measurement& m) {
  for (int r = -1; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    seed(rt);
    const auto t1 = std::chrono::steady_clock::now();
    const apiary::Report report = checked_run(rt, benchmark, check);
    m.launch = report.launch;
    m.rounds = report.rounds;
    m.launches = report.launches;
    if (r < 0) continue;  // warm-up: first-launch costs, module load, page faults
    m.ms.push_back(report.wall_ms);
    m.seed_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
}

// "" when `report` executed exactly `want` tasks of `type`, else a message saying so.
inline std::string expect_executed(const apiary::Report& report, const std::string& type, std::uint64_t want) {
  const std::uint64_t got = report.executed(type);
  if (got == want) return {};
  return type + ": executed " + std::to_string(got) + " tasks, expected " + std::to_string(want);
}

inline std::string expect_clean(const apiary::Report& report) {
  if (report.parked != 0) return std::to_string(report.parked) + " tasks left parked";
  if (report.unresolved_dependencies != 0)
    return std::to_string(report.unresolved_dependencies) + " dependencies left unresolved";
  return {};
}

// The megakernel block sizes swept where the benchmark asks for a sweep.
inline constexpr std::uint32_t swept_block_threads[] = {256, 512, 1024};

// The block sizes a benchmark runs under the current scheduler: the sweep under the megakernel,
// only 0 (automatic; other schedulers size their kernels per task type) otherwise.
inline std::vector<std::uint32_t> block_threads_for(const Options& o) {
  if (sweeps_block_threads(o)) return {std::begin(swept_block_threads), std::end(swept_block_threads)};
  return {0};
}

// A Config for the current scheduler.
inline apiary::Config bench_config(const Options& o) {
  apiary::Config config;
  config.scheduler = o.scheduler;
  config.megakernel.block_threads = o.block_threads;
  config.megakernel.blocks_per_sm = o.blocks_per_sm;
  config.handoff = o.handoff;
  config.timesliced_graph = o.timesliced_graph;
  config.device_controller = o.device_controller;
  return config;
}

}  // namespace apiary_bench
