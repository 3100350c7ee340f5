// A short numeric summary of a scheduling trace: tasks per type and per SM, time span and
// utilisation. Used by `apiary-trace summary`.
#pragma once

#include <apiary/trace.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace apiary {

struct TraceSummary {
  std::size_t tasks = 0;
  std::vector<std::size_t> tasks_per_queue;         // indexed by queue; unknown queues omitted
  std::map<std::uint32_t, std::size_t> tasks_per_sm;  // SMs that ran at least one task
  std::uint32_t sms = 0;          // num_sms of the trace, or the SMs seen where it is unknown (0)
  std::uint64_t span_ns = 0;      // earliest task start to latest task end
  std::uint64_t busy_ns = 0;      // summed over SMs: time with at least one task running
  std::uint64_t task_ns = 0;      // summed task durations (counts concurrent tasks separately)
  double utilisation = 0;         // busy_ns / (sms * span_ns)
  double mean_concurrency = 0;    // task_ns / (sms * span_ns): tasks in flight per SM on average
};

TraceSummary summarize_trace(const Trace& trace);

// Human-readable, several lines.
std::string format(const Trace& trace, const TraceSummary& summary);

}  // namespace apiary
