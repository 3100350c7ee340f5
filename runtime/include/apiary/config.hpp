// Runtime configuration: capacities, watchdog, tracing, scheduler choice. Loaded from JSON
// (every key optional; unknown keys are errors) or set in code.
//
//   {
//     "scheduler": "megakernel",
//     "queue_capacity": 1048576,          // default capacity of every queue
//     "queue_capacities": {"AssembleTable": 4096},   // per task type
//     "waiting_storage_capacity": 65536,
//     "dependency_capacity": 65536,       // runtime-owned dependency pool
//     "watchdog_seconds": 10,
//     "host_input_capacity": 65536,       // host-submitted tasks in flight (Runtime::submit)
//     "trace": false, "trace_capacity": 1048576, "trace_event_capacity": 1048576,
//     "handoff": true,                    // a block runs its continuations itself (handoff.hpp)
//     "megakernel": {"block_threads": 0, "blocks_per_sm": 0},   // 0 = automatic
//     "device_controller": {"pending_launches": 2048, "oversubscription": 1.5, "linger_us": 20},
//     "timesliced_graph": {"rounds_per_graph": 4, "graphs_in_flight": 2},
//     "device": 0
//   }
#pragma once

#include <apiary/scheduler.hpp>

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace apiary {

struct MegakernelConfig {
  std::uint32_t block_threads = 0;   // 0: max(256, largest worker size rounded to 32)
  std::uint32_t blocks_per_sm = 0;   // 0: as many as fit (occupancy)
};

// The persistent device controller (PDC).
struct DeviceControllerConfig {
  // cudaLimitDevRuntimePendingLaunchCount: device-side launches that may be outstanding.
  std::uint32_t pending_launches = 2048;
  // Active worker warps kept at most: #SMs x max resident threads per SM x this / 32.
  double oversubscription = 1.5;
  // Spin mode: how long a worker block that found its phaseless queue empty polls it for more
  // tasks before it leaves (while phaseless tasks are pending elsewhere and no launched block
  // waits for room), in microseconds; 0: it leaves at once. A block that leaves costs the
  // controller a new launch when tasks come (docs/schedulers.md, "Blocks that wait for more").
  static constexpr std::uint32_t max_linger_us = 1'000'000;  // the worker's bound is 32-bit ns
  std::uint32_t linger_us = 20;
  // Throws InputError naming `where` and the key when a value is out of range (the JSON reader
  // refuses such values too, code may set them).
  void check(const std::string& where) const;
};

// The timesliced scheduler's graph mode (Scheduler::timesliced_graph): the host launches a CUDA
// graph of `rounds_per_graph` rounds, and keeps `graphs_in_flight` of them queued ahead of the
// device. Rounds run after the end of the run do nothing; there are at most
// rounds_per_graph x graphs_in_flight - 1 of them (a few microseconds each).
struct TimeslicedGraphConfig {
  static constexpr std::uint32_t max_rounds_per_graph = 64;
  static constexpr std::uint32_t max_graphs_in_flight = 16;
  std::uint32_t rounds_per_graph = 4;
  std::uint32_t graphs_in_flight = 2;
  // Throws InputError naming `where` and the key when a value is out of range (0 rounds would
  // never end a run; the JSON reader refuses such values too, code may set them).
  void check(const std::string& where) const;
};

struct Config {
  Scheduler scheduler = Scheduler::megakernel;
  std::uint64_t queue_capacity = 1u << 20;
  std::map<std::string, std::uint64_t> queue_capacities;
  std::uint32_t waiting_storage_capacity = 1u << 16;  // tasks parked at once (waiting_storage.hpp adds a slot per thread)
  std::uint32_t dependency_capacity = 1u << 16;  // ctx.new_dependency() calls every run may make (dependency_pool.hpp)
  double watchdog_seconds = 10.0;
  std::uint32_t host_input_capacity = 1u << 16;  // tasks submitted by the host, in flight
  bool trace = false;
  std::uint64_t trace_capacity = 1u << 20;
  std::uint64_t trace_event_capacity = 1u << 20;
  // A continuation (ctx.spawn_next) or a task released by ctx.resolve, enqueued alone (not by
  // several lanes at once) into a queue its block can run next, stays in the block and runs
  // right after the batch, skipping the queue round trip (runtime/include/apiary/handoff.hpp).
  // Off: every task goes through its queue.
  bool handoff = true;
  MegakernelConfig megakernel;
  DeviceControllerConfig device_controller;
  TimeslicedGraphConfig timesliced_graph;
  int device = 0;

  // Capacity of the queue of task type `name` and the config key that sets it.
  std::uint64_t capacity_for(const std::string& name, std::string* key = nullptr) const;

  static Config load(const std::filesystem::path& file);
  // `source` names the origin in error messages (a file name).
  static Config from_json(const nlohmann::json& j, const std::string& source = "config");
  static Config parse(std::string_view text, const std::string& source = "config");
};

}  // namespace apiary
