// Everything a kernel needs to run tasks of one graph: queue views, the phase table, run
// state, waiting storage, the runtime's dependency pool and the trace writer. Built by the
// host runtime (device_runtime.hpp) and passed to kernels by value.
#pragma once

#include <apiary/dependency.hpp>
#include <apiary/dependency_pool.hpp>
#include <apiary/host_input.hpp>
#include <apiary/phase_table.hpp>
#include <apiary/queue.hpp>
#include <apiary/run_state.hpp>
#include <apiary/trace_writer.hpp>
#include <apiary/waiting_storage.hpp>

#include <cstdint>

namespace apiary {

struct DeviceGraph {
  QueueView queues[max_queues];
  PhaseTableView table;
  RunState* state = nullptr;
  WaitingStorageView waiting;
  DependencyPool pool;
  TraceWriter trace;
  const void* user_data = nullptr;  // Runtime::set_user_data: parameters every task can read
  HostMailbox* mailbox = nullptr;   // host task injection (nullptr unless host input is open)

  APIARY_HD PhaseController controller() const;

  // Moves every posted host task into its queue; ends host input once the host closed it and
  // everything was taken. Called by one device thread at a time, outside any task.
  APIARY_HD void drain_host_input() const {
    if (mailbox == nullptr) return;
    const std::uint64_t closed = SystemAtomic<std::uint64_t>(mailbox->closed).load(mo::acquire);
    const std::uint64_t posted = SystemAtomic<std::uint64_t>(mailbox->posted).load(mo::acquire);
    std::uint64_t taken = SystemAtomic<std::uint64_t>(mailbox->taken).load(mo::relaxed);
    const PhaseController pc{state, &table};
    for (; taken < posted; ++taken) {
      const HostTask& task = mailbox->slots[taken % mailbox->capacity];
      pc.add_pending(task.queue, 1);
      if (!queues[task.queue].push_words(task.words, task.bytes)) return;
    }
    SystemAtomic<std::uint64_t>(mailbox->taken).store(taken, mo::release);
    if (closed != 0 && load_relaxed(state->host_open) != 0) store_release(state->host_open, 0u);
  }

};

APIARY_HD inline PhaseController DeviceGraph::controller() const { return PhaseController{state, &table}; }

}  // namespace apiary
