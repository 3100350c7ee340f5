#include <apiary/report.hpp>

#include <iomanip>
#include <sstream>

namespace apiary {

std::string_view to_string(RunStatus s) {
  switch (s) {
    case RunStatus::running: return "running";
    case RunStatus::finished: return "finished";
    case RunStatus::stopped: return "stopped by a task";
    case RunStatus::aborted: return "aborted";
    case RunStatus::failed: return "failed";
  }
  return "unknown";
}

std::uint64_t Report::executed(const std::string& type) const {
  for (const auto& q : queues)
    if (q.name == type) return q.executed;
  return 0;
}

std::string Report::format() const {
  std::ostringstream out;
  out << "run " << to_string(status) << " on " << (device.empty() ? "?" : device) << " with " << scheduler << "\n";
  if (!launch.empty()) out << "  launch: " << launch << "\n";
  if (rounds > 0) out << "  rounds: " << rounds << ", worker kernel launches: " << launches << "\n";
  out << "  " << total_executed << " tasks in " << std::fixed << std::setprecision(3) << wall_ms << " ms";
  if (wall_ms > 0) out << " (" << std::setprecision(1) << tasks_per_second() / 1e6 << " M tasks/s)";
  out << ", " << phase_changes << " phase changes\n";
  out << "  task type            phase   executed     queued     parked   capacity\n";
  for (const auto& q : queues) {
    out << "  " << std::left << std::setw(20) << q.name << std::right << std::setw(6)
        << (q.phase < 0 ? std::string("-") : std::to_string(q.phase)) << std::setw(11) << q.executed << std::setw(11)
        << q.queued << std::setw(11) << q.parked << std::setw(11) << q.capacity << "\n";
  }
  if (status != RunStatus::finished && status != RunStatus::stopped) {
    // What a stalled run left where: which tickets no worker could claim, which blocks were
    // still draining (the watchdog's abort names no culprit of its own).
    for (const auto& q : queues) {
      if (q.queued == 0 && q.claimable == 0 && q.draining_blocks == 0) continue;
      out << "  " << q.name << " at the end: " << q.queued << " reserved and not claimed, " << q.claimable
          << " of them claimable, " << q.draining_blocks << " worker block(s) draining it\n";
    }
  }
  if (parked > 0) out << "  parked tasks in the waiting storage: " << parked << "\n";
  if (unresolved_dependencies > 0) {
    out << "  unresolved dependencies (runtime pool): " << unresolved_dependencies << "\n";
    for (const auto& e : unresolved_examples) out << "    " << e << "\n";
  }
  for (const auto& e : errors) out << "  error: " << e << "\n";
  return out.str();
}

}  // namespace apiary
