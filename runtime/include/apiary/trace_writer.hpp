// The device-side writer of trace records: append-only buffers with an atomic cursor.
// Disabled (records == nullptr) unless Config::trace is set; then every recording call
// returns at its first branch.
#pragma once

#include <apiary/platform.hpp>
#include <apiary/trace_record.hpp>

#include <cstdint>

namespace apiary {

struct TraceCursors {
  alignas(128) std::uint64_t tasks;
  alignas(128) std::uint64_t events;
};

struct TraceWriter {
  TaskRecord* records = nullptr;
  DependencyEvent* events = nullptr;
  TraceCursors* cursors = nullptr;
  std::uint64_t record_capacity = 0;
  std::uint64_t event_capacity = 0;

  APIARY_HD bool enabled() const { return records != nullptr; }

  // Reserves the record of a starting task; its index is the task's identity in the trace.
  // Indices past the capacity are counted (dropped) but not written.
  APIARY_HD std::uint32_t begin_task() const {
    return static_cast<std::uint32_t>(DeviceAtomic<std::uint64_t>(cursors->tasks).fetch_add(1, mo::relaxed));
  }
  APIARY_HD void write_task(std::uint32_t index, const TaskRecord& record) const {
    if (index < record_capacity) records[index] = record;
  }
  APIARY_HD void event(const DependencyEvent& e) const {
    if (!enabled()) return;
    const std::uint64_t i = DeviceAtomic<std::uint64_t>(cursors->events).fetch_add(1, mo::relaxed);
    if (i < event_capacity) events[i] = e;
  }
};

#if defined(__CUDACC__)
__device__ inline std::uint64_t global_timer_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ inline std::uint32_t sm_id() {
  std::uint32_t id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}
#endif

}  // namespace apiary
