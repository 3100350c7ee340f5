// Verifies from a trace that the scheduler kept every phase order and every individual
// dependency.
//
// Checks (messages start with the check's name):
//   - "sanity": end >= start, task indices unique, queue indices in range, SM below num_sms,
//     dependency event kinds known, no dropped records (configurable: a trace with dropped
//     records cannot be checked completely).
//   - "wrong phase": a task of a phased queue ran with record.phase != phase of its queue; a
//     task of a phaseless queue carries a phase.
//   - "phase order": phase instances are (epoch, phase) pairs ordered by epoch, then phase; every
//     task of an earlier instance ended at or before the start of every task of a later one.
//     Phaseless queues are exempt. O(n log n): per instance the earliest start and latest end,
//     compared with the running latest end of all earlier instances.
//   - "dependency 0x...": per dependency id, its park events (each awaiting n_k resolutions),
//     its resolve and release events, and the tasks released through it
//     (TaskRecord::dependency == id). Assumption: a dependency is reused only sequentially
//     (park, resolves, release, then the next park), so the k-th park, the k-th release and the
//     k-th released task (all in time order) belong together, and the k-th wait consumes the next
//     n_k resolves in time order. Resolves may come before their park (early resolves). The
//     released task must start at or after its last resolve and its release; the release must
//     come at or after its last resolve; there must be enough resolves, one park and one release
//     per released task, and no resolves left over.
// %globaltimer is coarse (tens of ns to 1 us), so equal timestamps pass: all comparisons use <=.
#pragma once

#include <apiary/trace.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace apiary {

struct TraceCheckOptions {
  std::size_t max_messages = 50;     // violations listed in full; the rest are only counted
  bool dropped_is_violation = true;  // dropped records: a violation, or else only a warning
};

struct TraceCheckResult {
  bool ok = true;                       // no violations
  std::vector<std::string> violations;  // the first max_messages, in check order
  std::size_t violation_count = 0;      // all violations found, listed or not
  std::vector<std::string> warnings;    // facts that limit the check but are no violation
  std::size_t tasks = 0;                // what was checked
  std::size_t phase_instances = 0;
  std::size_t dependencies = 0;
};

TraceCheckResult check_trace(const Trace& trace, const TraceCheckOptions& options = {});

// "trace ok: ..." or "trace has N violations:" followed by one line per listed violation.
std::string format(const TraceCheckResult& result);

}  // namespace apiary
