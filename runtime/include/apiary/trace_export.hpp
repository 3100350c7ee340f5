// Export and import of scheduling traces.
//
// Chrome trace JSON (object format) opens in Perfetto (ui.perfetto.dev) and chrome://tracing:
//   - one process per run, named "apiary <scheduler> on <device>";
//   - one track per SM ("SM 12"); tasks that overlap on one SM (several worker blocks or slots)
//     go to extra sub-tracks "SM 12 [1]", "SM 12 [2]" ... because a track must hold properly
//     nested slices only;
//   - each task is an "X" event: name = queue (task type) name, cat = "phase N" or "phaseless",
//     ts/dur in microseconds relative to the earliest timestamp of the trace, args with every
//     record field as an exact integer (start_ns/end_ns relative to otherData.time_origin_ns);
//   - each dependency event is an instant event ("i", scope "t", cat "dependency") on the track
//     of the task that acted, or on the "dependency events" track when that task is unknown;
//   - each phase instance start is a global instant event (cat "phase boundary").
// "otherData" holds the graph layout and run facts (queue names and phases, num_phases, cyclic,
// device, scheduler, num_sms, dropped counts, the time origin), so load_chrome_trace restores the
// Trace exactly. The time origin is a decimal string because JavaScript numbers cannot hold
// 64-bit %globaltimer values exactly.
//
// CSV: one row per task, times in ns relative to the earliest timestamp of the trace.
#pragma once

#include <apiary/trace.hpp>

#include <filesystem>
#include <iosfwd>

namespace apiary {

// Tag and version written to otherData; load_chrome_trace rejects other values.
inline constexpr const char* chrome_trace_format = "apiary-trace";
inline constexpr int chrome_trace_version = 1;

void write_chrome_trace(const Trace& trace, std::ostream& out);
// Throws InputError when the file cannot be written.
void save_chrome_trace(const Trace& trace, const std::filesystem::path& path);

// Reads a file written by save_chrome_trace. Throws InputError(file, what) when the file is
// missing, is not JSON, or lacks/mistypes a field; `what` names the JSON path of the problem.
Trace load_chrome_trace(const std::filesystem::path& path);
// Same, from a stream; `name` is used in error messages.
Trace read_chrome_trace(std::istream& in, const std::string& name);

// Columns: task,queue,queue_name,phase,epoch,sm,block,slot,start_ns,end_ns,duration_ns,dependency
void write_trace_csv(const Trace& trace, std::ostream& out);
void save_trace_csv(const Trace& trace, const std::filesystem::path& path);

// The earliest timestamp of the trace (tasks and dependency events), 0 for an empty trace.
// Exported times are relative to it.
std::uint64_t trace_time_origin(const Trace& trace);

}  // namespace apiary
