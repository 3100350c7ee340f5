// Trace summary (see trace_summary.hpp).
#include <apiary/trace_summary.hpp>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <sstream>

namespace apiary {
namespace {

// Length of the union of [start, end) intervals, i.e. the time at least one was running.
std::uint64_t union_length(std::vector<std::pair<std::uint64_t, std::uint64_t>>& intervals) {
  std::sort(intervals.begin(), intervals.end());
  std::uint64_t total = 0;
  std::uint64_t covered_until = 0;
  for (const auto& [start, end] : intervals) {
    const std::uint64_t from = std::max(start, covered_until);
    if (end > from) total += end - from;
    covered_until = std::max(covered_until, end);
  }
  return total;
}

}  // namespace

TraceSummary summarize_trace(const Trace& trace) {
  TraceSummary summary;
  summary.tasks = trace.tasks.size();
  summary.tasks_per_queue.assign(trace.queue_names.size(), 0);
  std::map<std::uint32_t, std::vector<std::pair<std::uint64_t, std::uint64_t>>> intervals;
  std::uint64_t first = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t last = 0;
  for (const auto& task : trace.tasks) {
    if (task.queue < summary.tasks_per_queue.size()) ++summary.tasks_per_queue[task.queue];
    ++summary.tasks_per_sm[task.sm];
    const std::uint64_t end = std::max(task.start_ns, task.end_ns);  // corrupt records count 0
    intervals[task.sm].emplace_back(task.start_ns, end);
    summary.task_ns += end - task.start_ns;
    first = std::min(first, task.start_ns);
    last = std::max(last, end);
  }
  if (trace.tasks.empty()) return summary;
  summary.span_ns = last - first;
  for (auto& [sm, list] : intervals) summary.busy_ns += union_length(list);
  summary.sms = trace.num_sms != 0 ? trace.num_sms : static_cast<std::uint32_t>(intervals.size());
  const double capacity = static_cast<double>(summary.sms) * static_cast<double>(summary.span_ns);
  if (capacity > 0) {
    summary.utilisation = static_cast<double>(summary.busy_ns) / capacity;
    summary.mean_concurrency = static_cast<double>(summary.task_ns) / capacity;
  }
  return summary;
}

std::string format(const Trace& trace, const TraceSummary& summary) {
  std::ostringstream out;
  char number[64];
  out << "device: " << (trace.device.empty() ? "(unknown)" : trace.device)
      << ", scheduler: " << (trace.scheduler.empty() ? "(unknown)" : trace.scheduler) << '\n';
  out << "tasks: " << summary.tasks << ", span: " << summary.span_ns << " ns";
  std::snprintf(number, sizeof number, "%.4f", summary.utilisation);
  out << ", utilisation: " << number << " (busy SM time / (" << summary.sms << " SMs x span))";
  std::snprintf(number, sizeof number, "%.3f", summary.mean_concurrency);
  out << ", mean tasks in flight per SM: " << number << '\n';
  if (trace.dropped_tasks != 0 || trace.dropped_events != 0)
    out << "dropped: " << trace.dropped_tasks << " task records, " << trace.dropped_events
        << " dependency events\n";
  out << "tasks per type:\n";
  for (std::size_t q = 0; q < summary.tasks_per_queue.size(); ++q) {
    const int phase = q < trace.queue_phase.size() ? trace.queue_phase[q] : phaseless_phase;
    out << "  " << q << ' ' << trace.queue_names[q] << " ("
        << (phase >= 0 ? "phase " + std::to_string(phase) : std::string("phaseless"))
        << "): " << summary.tasks_per_queue[q] << '\n';
  }
  out << "tasks per SM:\n";
  for (const auto& [sm, count] : summary.tasks_per_sm) out << "  SM " << sm << ": " << count << '\n';
  return out.str();
}

}  // namespace apiary
