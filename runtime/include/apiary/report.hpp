// What a run reports: tasks executed per type, time, phases, and how it ended.
#pragma once

#include <apiary/run_state.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace apiary {

struct QueueReport {
  std::string name;
  std::int32_t phase = no_phase;
  std::uint64_t executed = 0;   // tasks run from this queue
  std::uint64_t queued = 0;     // left in the queue at the end (fill level)
  std::uint64_t parked = 0;     // waiting in the waiting storage at the end
  std::uint64_t capacity = 0;
  // Where a run that did not finish left the queue: of the `queued` tickets, those published
  // and committed, that a worker could have claimed (the queue's `available` count; the rest
  // were reserved by producers that never committed them), and the worker blocks of per-queue
  // kernels (timesliced, device controller) that had not left it.
  std::int64_t claimable = 0;
  std::uint32_t draining_blocks = 0;
};

struct Report {
  std::string scheduler;
  std::string device;
  RunStatus status = RunStatus::running;
  std::vector<QueueReport> queues;
  std::uint64_t total_executed = 0;
  double wall_ms = 0;                 // kernel time (CUDA events), launch to completion
  std::uint32_t phase_changes = 0;    // phase advances, including cyclic restarts
  std::uint64_t parked = 0;           // tasks left in the waiting storage
  std::uint64_t unresolved_dependencies = 0;   // runtime-pool dependencies with a non-zero counter
  std::vector<std::string> unresolved_examples;  // "dependency #i: counter c"
  std::string launch;                 // grid/block/shared memory used
  std::uint64_t rounds = 0;           // timesliced: controller rounds
  std::uint64_t launches = 0;         // timesliced: worker kernel launches
  std::vector<std::string> errors;

  bool ok() const { return errors.empty() && (status == RunStatus::finished || status == RunStatus::stopped); }
  std::uint64_t executed(const std::string& type) const;
  double tasks_per_second() const { return wall_ms > 0 ? double(total_executed) / (wall_ms * 1e-3) : 0; }
  // Human-readable, multi-line: status, per-type counts and fill levels, errors.
  std::string format() const;
};

std::string_view to_string(RunStatus s);

}  // namespace apiary
