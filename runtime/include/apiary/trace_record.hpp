// The records a traced run leaves behind: one TaskRecord per executed task and one
// DependencyEvent per park/resolve/release of an individual dependency. Plain data shared by
// the device writer (trace_buffer.cuh), the host exporter and the trace checker.
#pragma once

#include <cstdint>

namespace apiary {

// A task that was not released through a dependency carries this in TaskRecord::dependency.
inline constexpr std::uint64_t no_dependency = 0;
inline constexpr std::int16_t phaseless_phase = -1;

struct TaskRecord {
  std::uint64_t start_ns;     // %globaltimer when the worker started the task
  std::uint64_t end_ns;       // %globaltimer when it returned
  std::uint64_t dependency;   // id of the dependency that released the task, or no_dependency
  std::uint32_t task;         // this record's index: the task's identity inside the trace
  std::uint32_t queue;        // queue index = task type
  std::uint32_t sm;           // %smid
  std::uint32_t block;        // blockIdx.x of the worker block (scheduler-specific numbering)
  std::uint16_t slot;         // worker slot inside the block
  std::int16_t phase;         // phase that was current when the task started, -1 if phaseless type
  std::uint32_t phase_epoch;  // number of phase changes before the task started (cyclic graphs)
};
static_assert(sizeof(TaskRecord) == 48);

enum class DependencyEventKind : std::uint32_t {
  park = 0,     // spawn_when(dep, item, count): the task waits for `count` resolutions
  resolve = 1,  // resolve(dep)
  release = 2,  // the counter reached zero and the parked task moved to its queue
};

struct DependencyEvent {
  std::uint64_t time_ns;      // %globaltimer
  std::uint64_t dependency;   // dependency id (its device address)
  std::uint32_t kind;         // DependencyEventKind
  std::uint32_t task;         // record index of the task that acted (spawner, resolver), or ~0u
  std::int32_t count;         // park: number of resolutions awaited; otherwise 0
  std::uint32_t queue;        // park/release: queue of the waiting task; otherwise ~0u
};
static_assert(sizeof(DependencyEvent) == 32);

inline constexpr std::uint32_t no_task = ~0u;

}  // namespace apiary
