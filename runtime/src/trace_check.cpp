// Trace checker: phase order, individual dependencies, record sanity (see trace_check.hpp).
#include <apiary/trace_check.hpp>
#include <apiary/trace_export.hpp>

#include <algorithm>
#include <charconv>
#include <map>
#include <sstream>
#include <unordered_map>

namespace apiary {
namespace {

std::string hex_id(std::uint64_t value) {
  char buffer[2 + 16] = {'0', 'x'};
  auto [end, ec] = std::to_chars(buffer + 2, buffer + sizeof buffer, value, 16);
  return std::string(buffer, end);
}

// The tasks and events of one dependency id, each list in time order.
struct DependencyHistory {
  std::vector<const DependencyEvent*> parks, resolves, releases;
  std::vector<const TaskRecord*> released;  // tasks with TaskRecord::dependency == id
};

// Aggregates of one phase instance (epoch, phase).
struct PhaseInstance {
  const TaskRecord* first_start = nullptr;  // task that started first
  const TaskRecord* last_end = nullptr;     // task that ended last
  const TaskRecord* prior_last_end = nullptr;  // latest-ending task of all earlier instances
  std::size_t early_tasks = 0;              // tasks that started before prior_last_end ended
};

class Checker {
 public:
  Checker(const Trace& trace, const TraceCheckOptions& options)
      : trace_(trace), options_(options), origin_(trace_time_origin(trace)) {
    by_index_.reserve(trace.tasks.size());
    for (const auto& task : trace.tasks) by_index_.emplace(task.task, &task);
  }

  TraceCheckResult run() {
    result_.tasks = trace_.tasks.size();
    check_sanity();
    check_phases();
    check_dependencies();
    result_.ok = result_.violation_count == 0;
    return std::move(result_);
  }

 private:
  void violation(std::string message) {
    ++result_.violation_count;
    if (result_.violations.size() < options_.max_messages)
      result_.violations.push_back(std::move(message));
  }

  std::string at(std::uint64_t time) const { return "t=" + std::to_string(time - origin_) + " ns"; }

  std::string queue_name(std::uint32_t queue) const {
    if (queue < trace_.queue_names.size()) return "'" + trace_.queue_names[queue] + "'";
    return "#" + std::to_string(queue);
  }

  std::string describe(const TaskRecord& task) const {
    return "task " + std::to_string(task.task) + " (" + queue_name(task.queue) + ", SM " +
           std::to_string(task.sm) + ")";
  }

  std::string describe_actor(std::uint32_t index) const {
    if (index == no_task) return "an unknown task";
    auto it = by_index_.find(index);
    return it == by_index_.end() ? "task " + std::to_string(index) + " (no record)"
                                 : describe(*it->second);
  }

  static std::string instance_name(const TaskRecord& task) {
    return "phase " + std::to_string(task.phase) + " (epoch " + std::to_string(task.phase_epoch) + ")";
  }

  bool queue_known(std::uint32_t queue) const {
    return queue < trace_.queue_names.size() && queue < trace_.queue_phase.size();
  }

  // ----- sanity -------------------------------------------------------------------------------

  void check_sanity() {
    check_dropped();
    check_layout();
    for (const auto& task : trace_.tasks) {
      if (task.end_ns < task.start_ns)
        violation("sanity: " + describe(task) + " ends at " + at(task.end_ns) +
                  " before it starts at " + at(task.start_ns));
      if (task.queue >= trace_.queue_names.size())
        violation("sanity: task " + std::to_string(task.task) + " has queue " +
                  std::to_string(task.queue) + " but the trace names " +
                  std::to_string(trace_.queue_names.size()) + " queues");
      if (trace_.num_sms != 0 && task.sm >= trace_.num_sms)
        violation("sanity: " + describe(task) + " ran on SM " + std::to_string(task.sm) +
                  " but the device has " + std::to_string(trace_.num_sms) + " SMs");
    }
    check_unique_indices();
    for (const auto& event : trace_.events)
      if (event.kind > static_cast<std::uint32_t>(DependencyEventKind::release))
        violation("sanity: dependency event at " + at(event.time_ns) + " on dependency " +
                  hex_id(event.dependency) + " has unknown kind " + std::to_string(event.kind));
  }

  void check_dropped() {
    if (trace_.dropped_tasks == 0 && trace_.dropped_events == 0) return;
    std::string message = "sanity: " + std::to_string(trace_.dropped_tasks) +
                          " task records and " + std::to_string(trace_.dropped_events) +
                          " dependency events were dropped (trace buffer full), so the trace "
                          "cannot be checked completely; raise the config keys trace_capacity / "
                          "trace_event_capacity";
    if (options_.dropped_is_violation) {
      violation(std::move(message));
    } else {
      result_.warnings.push_back(std::move(message));
    }
  }

  void check_layout() {
    if (trace_.queue_phase.size() != trace_.queue_names.size())
      violation("sanity: the trace names " + std::to_string(trace_.queue_names.size()) +
                " queues but gives phases for " + std::to_string(trace_.queue_phase.size()));
    for (std::size_t q = 0; q < trace_.queue_phase.size(); ++q) {
      const int phase = trace_.queue_phase[q];
      if (phase < phaseless_phase || phase >= trace_.num_phases)
        violation("sanity: queue " + queue_name(static_cast<std::uint32_t>(q)) + " has phase " +
                  std::to_string(phase) + " but the graph has " +
                  std::to_string(trace_.num_phases) + " phases");
    }
  }

  void check_unique_indices() {
    std::vector<std::uint32_t> indices;
    indices.reserve(trace_.tasks.size());
    for (const auto& task : trace_.tasks) indices.push_back(task.task);
    std::sort(indices.begin(), indices.end());
    for (std::size_t i = 0; i < indices.size();) {
      std::size_t j = i;
      while (j < indices.size() && indices[j] == indices[i]) ++j;
      if (j - i > 1)
        violation("sanity: task index " + std::to_string(indices[i]) + " appears " +
                  std::to_string(j - i) + " times");
      i = j;
    }
  }

  // ----- phases -------------------------------------------------------------------------------

  void check_phases() {
    // Instances ordered by epoch, then phase: right whether the epoch counts every phase change
    // or only completed cycles of a cyclic graph.
    std::map<std::pair<std::uint32_t, int>, PhaseInstance> instances;
    for (const auto& task : trace_.tasks) {
      if (!queue_known(task.queue)) continue;  // reported by sanity
      const int queue_phase = trace_.queue_phase[task.queue];
      if (queue_phase < 0) {
        if (task.phase != phaseless_phase)
          violation("wrong phase: " + describe(task) + " of a phaseless queue carries phase " +
                    std::to_string(task.phase) + " (expected -1)");
        continue;  // phaseless tasks are exempt from phase order
      }
      if (task.phase != queue_phase)
        violation("wrong phase: " + describe(task) + " ran in phase " + std::to_string(task.phase) +
                  " but its queue belongs to phase " + std::to_string(queue_phase));
      if (task.phase < 0) continue;
      auto& instance = instances[{task.phase_epoch, task.phase}];
      if (!instance.first_start || task.start_ns < instance.first_start->start_ns)
        instance.first_start = &task;
      if (!instance.last_end || task.end_ns > instance.last_end->end_ns) instance.last_end = &task;
    }
    result_.phase_instances = instances.size();

    // Every instance must start at or after the latest end of all earlier instances.
    const TaskRecord* latest_end = nullptr;
    for (auto& [key, instance] : instances) {
      instance.prior_last_end = latest_end;
      if (!latest_end || instance.last_end->end_ns > latest_end->end_ns)
        latest_end = instance.last_end;
    }
    for (const auto& task : trace_.tasks) {
      if (!queue_known(task.queue) || trace_.queue_phase[task.queue] < 0 || task.phase < 0) continue;
      auto& instance = instances[{task.phase_epoch, task.phase}];
      if (instance.prior_last_end && task.start_ns < instance.prior_last_end->end_ns)
        ++instance.early_tasks;
    }
    for (const auto& [key, instance] : instances) {
      if (instance.early_tasks == 0) continue;
      const TaskRecord& early = *instance.first_start;
      const TaskRecord& late = *instance.prior_last_end;
      violation("phase order: " + std::to_string(instance.early_tasks) + " task(s) of " +
                instance_name(early) + " started before " + instance_name(late) +
                " had finished; first: " + describe(early) + " started at " + at(early.start_ns) +
                " but " + describe(late) + " ended at " + at(late.end_ns));
    }
  }

  // ----- dependencies -------------------------------------------------------------------------

  void check_dependencies() {
    std::unordered_map<std::uint64_t, DependencyHistory> histories;
    for (const auto& event : trace_.events) {
      auto& history = histories[event.dependency];
      switch (static_cast<DependencyEventKind>(event.kind)) {
        case DependencyEventKind::park: history.parks.push_back(&event); break;
        case DependencyEventKind::resolve: history.resolves.push_back(&event); break;
        case DependencyEventKind::release: history.releases.push_back(&event); break;
        default: break;  // reported by sanity
      }
    }
    for (const auto& task : trace_.tasks)
      if (task.dependency != no_dependency) histories[task.dependency].released.push_back(&task);

    // Deterministic report order: by dependency id.
    std::vector<std::uint64_t> ids;
    ids.reserve(histories.size());
    for (const auto& [id, history] : histories) ids.push_back(id);
    std::sort(ids.begin(), ids.end());
    result_.dependencies = ids.size();

    std::size_t with_leftovers = 0;
    std::string first_leftover;
    for (std::uint64_t id : ids) {
      auto& history = histories[id];
      sort_history(history);
      const std::size_t leftover = check_dependency(id, history);
      if (leftover > 0 && with_leftovers++ == 0)
        first_leftover = "dependency " + hex_id(id) + ": " + std::to_string(leftover) +
                         " resolve(s) from " + at(history.resolves[history.resolves.size() - leftover]->time_ns);
    }
    // Resolving a dependency that nothing waits on is allowed, so this is only a warning.
    if (with_leftovers > 0)
      result_.warnings.push_back(std::to_string(with_leftovers) +
                                 " dependencies have resolves that no wait consumed, e.g. " +
                                 first_leftover);
  }

  static void sort_history(DependencyHistory& history) {
    // Ties keep record order (stable), which is the order the device wrote them in.
    auto by_time = [](const DependencyEvent* a, const DependencyEvent* b) { return a->time_ns < b->time_ns; };
    std::stable_sort(history.parks.begin(), history.parks.end(), by_time);
    std::stable_sort(history.resolves.begin(), history.resolves.end(), by_time);
    std::stable_sort(history.releases.begin(), history.releases.end(), by_time);
    std::stable_sort(history.released.begin(), history.released.end(),
                     [](const TaskRecord* a, const TaskRecord* b) { return a->start_ns < b->start_ns; });
  }

  // Checks one dependency under the sequential-reuse assumption; returns the number of resolves
  // that no wait consumed.
  std::size_t check_dependency(std::uint64_t id, const DependencyHistory& h) {
    const std::string name = "dependency " + hex_id(id) + ": ";
    if (h.parks.size() != h.released.size())
      violation(name + std::to_string(h.parks.size()) + " park event(s) but " +
                std::to_string(h.released.size()) + " task(s) released through it");
    if (h.releases.size() != h.released.size())
      violation(name + std::to_string(h.releases.size()) + " release event(s) but " +
                std::to_string(h.released.size()) + " task(s) released through it");

    std::size_t next_resolve = 0;
    for (std::size_t k = 0; k < h.parks.size(); ++k) {
      const DependencyEvent& park = *h.parks[k];
      const TaskRecord* task = k < h.released.size() ? h.released[k] : nullptr;
      const DependencyEvent* release = k < h.releases.size() ? h.releases[k] : nullptr;
      const std::string waiter = task ? describe(*task) : "wait #" + std::to_string(k + 1);
      if (park.count < 0) {
        violation(name + "park at " + at(park.time_ns) + " awaits a negative count " +
                  std::to_string(park.count));
        continue;
      }
      const auto needed = static_cast<std::size_t>(park.count);
      if (next_resolve + needed > h.resolves.size()) {
        violation(name + "too few resolves: " + waiter + " awaited " + std::to_string(needed) +
                  " resolution(s) (park at " + at(park.time_ns) + ") but only " +
                  std::to_string(h.resolves.size() - next_resolve) + " resolve event(s) were left (" +
                  std::to_string(h.resolves.size()) + " in total)");
        next_resolve = h.resolves.size();
        continue;
      }
      next_resolve += needed;
      const DependencyEvent* last = needed > 0 ? h.resolves[next_resolve - 1] : nullptr;
      check_wait(name, park, last, release, task);
    }
    return h.resolves.size() - next_resolve;
  }

  // The time order of one wait: park -> task start, last resolve -> release -> task start.
  void check_wait(const std::string& name, const DependencyEvent& park, const DependencyEvent* last,
                  const DependencyEvent* release, const TaskRecord* task) {
    if (release && last && release->time_ns < last->time_ns)
      violation(name + "release at " + at(release->time_ns) + " came before its last resolve at " +
                at(last->time_ns) + " (by " + describe_actor(last->task) + ")");
    if (!task) return;
    if (last && task->start_ns < last->time_ns)
      violation(name + describe(*task) + " started at " + at(task->start_ns) +
                " before its last resolve at " + at(last->time_ns) + " (by " +
                describe_actor(last->task) + ")");
    if (release && task->start_ns < release->time_ns)
      violation(name + describe(*task) + " started at " + at(task->start_ns) +
                " before its release at " + at(release->time_ns));
    if (task->start_ns < park.time_ns)
      violation(name + describe(*task) + " started at " + at(task->start_ns) +
                " before it was parked at " + at(park.time_ns));
    if (park.queue != task->queue)
      violation(name + "park at " + at(park.time_ns) + " was for queue " + queue_name(park.queue) +
                " but released " + describe(*task));
    if (release && release->queue != task->queue)
      violation(name + "release at " + at(release->time_ns) + " was for queue " +
                queue_name(release->queue) + " but released " + describe(*task));
  }

  const Trace& trace_;
  const TraceCheckOptions& options_;
  const std::uint64_t origin_;
  std::unordered_map<std::uint32_t, const TaskRecord*> by_index_;
  TraceCheckResult result_;
};

}  // namespace

TraceCheckResult check_trace(const Trace& trace, const TraceCheckOptions& options) {
  return Checker(trace, options).run();
}

std::string format(const TraceCheckResult& result) {
  std::ostringstream out;
  const std::string checked = std::to_string(result.tasks) + " tasks, " +
                              std::to_string(result.phase_instances) + " phase instances, " +
                              std::to_string(result.dependencies) + " dependencies";
  if (result.ok) {
    out << "trace ok: " << checked << " checked\n";
  } else {
    out << "trace has " << result.violation_count << " violation(s) (" << checked
        << "; times in ns since the first timestamp):\n";
    for (const auto& violation : result.violations) out << "  " << violation << '\n';
    if (result.violation_count > result.violations.size())
      out << "  ... and " << result.violation_count - result.violations.size() << " more\n";
  }
  for (const auto& warning : result.warnings) out << "warning: " << warning << '\n';
  return out.str();
}

}  // namespace apiary
