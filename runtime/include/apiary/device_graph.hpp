// Everything a kernel needs to run tasks of one graph: queue views, the phase table, run
// state, waiting storage, the runtime's dependency pool and the trace writer. Built by the
// host runtime (device_runtime.hpp) and passed to kernels by value.
#pragma once

#include <apiary/dependency.hpp>
#include <apiary/phase_table.hpp>
#include <apiary/queue.hpp>
#include <apiary/run_state.hpp>
#include <apiary/trace_writer.hpp>
#include <apiary/waiting_storage.hpp>

#include <cstdint>

namespace apiary {

struct DependencyPool {
  Dependency* deps = nullptr;
  std::uint32_t* next = nullptr;  // bump allocator cursor
  std::uint32_t capacity = 0;
};

struct DeviceGraph {
  QueueView queues[max_queues];
  PhaseTableView table;
  RunState* state = nullptr;
  WaitingStorageView waiting;
  DependencyPool pool;
  TraceWriter trace;
  const void* user_data = nullptr;  // Runtime::set_user_data: parameters every task can read

  APIARY_HD PhaseController controller() const { return PhaseController{state, &table}; }
};

}  // namespace apiary
