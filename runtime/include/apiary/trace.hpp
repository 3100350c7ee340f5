// A scheduling trace on the host: what ran where and when, plus the graph layout needed to
// read it (queue names, phases). Produced by Runtime::run when tracing is on; exported by
// trace_export.hpp, verified by trace_check.hpp.
#pragma once

#include <apiary/trace_record.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace apiary {

struct Trace {
  std::string device;                    // e.g. "NVIDIA H100 80GB HBM3"
  std::string scheduler;                 // e.g. "megakernel"
  std::vector<std::string> queue_names;  // indexed by TaskRecord::queue
  std::vector<int> queue_phase;          // phase of each queue, -1 for phaseless
  int num_phases = 0;
  bool cyclic = false;
  std::uint32_t num_sms = 0;
  std::vector<TaskRecord> tasks;         // sorted by task index
  std::vector<DependencyEvent> events;   // in no particular order
  std::uint64_t dropped_tasks = 0;       // records that did not fit the trace buffer
  std::uint64_t dropped_events = 0;
};

}  // namespace apiary
