// Chrome trace JSON and CSV export/import of scheduling traces (see trace_export.hpp).
#include <apiary/error.hpp>
#include <apiary/json_input.hpp>
#include <apiary/trace_export.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <queue>
#include <set>
#include <sstream>
#include <unordered_map>

namespace apiary {
namespace {

using nlohmann::json;

constexpr int trace_pid = 1;
// Track ids: SM s, sub-track k -> s * lanes_per_sm + k. Perfetto reads tids as 32-bit, so ids
// stay below 2^31: SM < 32767 (%smid is far smaller). Sub-tracks beyond lanes_per_sm - 1 share
// the last one (an SM never runs that many tasks at once).
constexpr std::int64_t lanes_per_sm = 1 << 16;
// Dependency events whose acting task is unknown go to a track after every SM.
constexpr std::int64_t dependency_track = std::int64_t{0x7fff} * lanes_per_sm;

std::string hex_id(std::uint64_t value) {
  char buffer[2 + 16];
  buffer[0] = '0';
  buffer[1] = 'x';
  auto [end, ec] = std::to_chars(buffer + 2, buffer + sizeof buffer, value, 16);
  return std::string(buffer, end);
}

std::string queue_label(const Trace& trace, std::uint32_t queue) {
  if (queue < trace.queue_names.size()) return trace.queue_names[queue];
  return "queue " + std::to_string(queue);
}

const char* event_kind_name(std::uint32_t kind) {
  switch (static_cast<DependencyEventKind>(kind)) {
    case DependencyEventKind::park: return "park";
    case DependencyEventKind::resolve: return "resolve";
    case DependencyEventKind::release: return "release";
  }
  return "unknown dependency event";
}

// Microseconds for Chrome's ts/dur. n/1000.0 prints as the shortest decimal that reads back to
// the same double, and Perfetto rounds ts*1000 to the nearest ns, so it sees the exact ns.
double to_us(std::uint64_t ns) { return static_cast<double>(ns) / 1000.0; }

// Assigns each task a sub-track of its SM so that tasks on one track never overlap: tasks are
// taken in start order and reuse the lowest-numbered sub-track that is free again (end <= start).
std::vector<std::int64_t> assign_tracks(const Trace& trace) {
  const auto& tasks = trace.tasks;
  std::vector<std::size_t> order(tasks.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const auto& x = tasks[a];
    const auto& y = tasks[b];
    if (x.sm != y.sm) return x.sm < y.sm;
    if (x.start_ns != y.start_ns) return x.start_ns < y.start_ns;
    return a < b;
  });

  std::vector<std::int64_t> track(tasks.size());
  using Busy = std::pair<std::uint64_t, std::int64_t>;  // (end, lane)
  std::priority_queue<Busy, std::vector<Busy>, std::greater<>> busy;
  std::set<std::int64_t> free_lanes;
  std::int64_t lanes = 0;
  std::uint32_t current_sm = 0;
  for (std::size_t pos = 0; pos < order.size(); ++pos) {
    const auto& task = tasks[order[pos]];
    if (pos == 0 || task.sm != current_sm) {
      current_sm = task.sm;
      busy = {};
      free_lanes.clear();
      lanes = 0;
    }
    while (!busy.empty() && busy.top().first <= task.start_ns) {
      free_lanes.insert(busy.top().second);
      busy.pop();
    }
    std::int64_t lane;
    if (!free_lanes.empty()) {
      lane = *free_lanes.begin();
      free_lanes.erase(free_lanes.begin());
    } else {
      lane = lanes++;
    }
    busy.emplace(std::max(task.end_ns, task.start_ns), lane);
    const std::int64_t sm = std::min<std::int64_t>(task.sm, dependency_track / lanes_per_sm - 1);
    track[order[pos]] = sm * lanes_per_sm +
                        std::min<std::int64_t>(lane, lanes_per_sm - 1);
  }
  return track;
}

std::string track_name(std::int64_t tid) {
  if (tid == dependency_track) return "dependency events";
  std::string name = "SM " + std::to_string(tid / lanes_per_sm);
  if (tid % lanes_per_sm != 0) name += " [" + std::to_string(tid % lanes_per_sm) + "]";
  return name;
}

void write_event(std::ostream& out, const json& event, bool& first) {
  out << (first ? "\n" : ",\n") << event.dump();
  first = false;
}

void write_metadata(const Trace& trace, const std::set<std::int64_t>& tids, std::ostream& out,
                    bool& first) {
  std::string process = "apiary";
  if (!trace.scheduler.empty()) process += " " + trace.scheduler;
  if (!trace.device.empty()) process += " on " + trace.device;
  write_event(out, {{"ph", "M"}, {"pid", trace_pid}, {"name", "process_name"},
                    {"args", {{"name", process}}}}, first);
  for (std::int64_t tid : tids) {
    write_event(out, {{"ph", "M"}, {"pid", trace_pid}, {"tid", tid}, {"name", "thread_name"},
                      {"args", {{"name", track_name(tid)}}}}, first);
    // Perfetto and chrome://tracing sort tracks by this index: SMs in order, sub-tracks after.
    write_event(out, {{"ph", "M"}, {"pid", trace_pid}, {"tid", tid}, {"name", "thread_sort_index"},
                      {"args", {{"sort_index", tid}}}}, first);
  }
}

json task_event(const Trace& trace, const TaskRecord& task, std::int64_t tid,
                std::uint64_t origin) {
  const std::uint64_t start = task.start_ns - origin;
  const std::uint64_t end = task.end_ns - origin;
  const std::uint64_t dur = end >= start ? end - start : 0;  // a bad record must still load
  json args = {{"task", task.task},          {"queue", task.queue},
               {"phase", task.phase},        {"epoch", task.phase_epoch},
               {"sm", task.sm},              {"block", task.block},
               {"slot", task.slot},          {"dependency", hex_id(task.dependency)},
               {"start_ns", start},          {"end_ns", end}};
  return {{"ph", "X"},
          {"pid", trace_pid},
          {"tid", tid},
          {"name", queue_label(trace, task.queue)},
          {"cat", task.phase >= 0 ? "phase " + std::to_string(task.phase) : "phaseless"},
          {"ts", to_us(start)},
          {"dur", to_us(dur)},
          {"args", std::move(args)}};
}

json dependency_event(const DependencyEvent& event, std::int64_t tid, std::uint64_t origin) {
  const std::uint64_t time = event.time_ns - origin;
  json args = {{"kind", event.kind},
               {"dependency", hex_id(event.dependency)},
               {"task", event.task == no_task ? json(nullptr) : json(event.task)},
               {"count", event.count},
               {"queue", event.queue == no_task ? json(nullptr) : json(event.queue)},
               {"time_ns", time}};
  return {{"ph", "i"},       {"s", "t"},         {"pid", trace_pid},
          {"tid", tid},      {"name", event_kind_name(event.kind)},
          {"cat", "dependency"}, {"ts", to_us(time)}, {"args", std::move(args)}};
}

// The start of every phase instance (epoch, phase): the earliest start of its tasks.
std::map<std::pair<std::uint32_t, int>, std::uint64_t> phase_instance_starts(const Trace& trace) {
  std::map<std::pair<std::uint32_t, int>, std::uint64_t> starts;
  for (const auto& task : trace.tasks) {
    if (task.phase < 0) continue;
    auto [it, inserted] = starts.try_emplace({task.phase_epoch, task.phase}, task.start_ns);
    if (!inserted) it->second = std::min(it->second, task.start_ns);
  }
  return starts;
}

json other_data(const Trace& trace, std::uint64_t origin) {
  return {{"format", chrome_trace_format},
          {"version", chrome_trace_version},
          {"device", trace.device},
          {"scheduler", trace.scheduler},
          {"queue_names", trace.queue_names},
          {"queue_phase", trace.queue_phase},
          {"num_phases", trace.num_phases},
          {"cyclic", trace.cyclic},
          {"num_sms", trace.num_sms},
          {"dropped_tasks", trace.dropped_tasks},
          {"dropped_events", trace.dropped_events},
          {"time_origin_ns", std::to_string(origin)},
          {"task_count", trace.tasks.size()},
          {"event_count", trace.events.size()}};
}

}  // namespace

std::uint64_t trace_time_origin(const Trace& trace) {
  std::uint64_t origin = std::numeric_limits<std::uint64_t>::max();
  for (const auto& task : trace.tasks) origin = std::min({origin, task.start_ns, task.end_ns});
  for (const auto& event : trace.events) origin = std::min(origin, event.time_ns);
  return trace.tasks.empty() && trace.events.empty() ? 0 : origin;
}

void write_chrome_trace(const Trace& trace, std::ostream& out) {
  const std::uint64_t origin = trace_time_origin(trace);
  const std::vector<std::int64_t> tracks = assign_tracks(trace);

  // Dependency events sit on the track of the task that acted, found by its record index.
  std::unordered_map<std::uint32_t, std::size_t> by_index;
  by_index.reserve(trace.tasks.size());
  for (std::size_t i = 0; i < trace.tasks.size(); ++i) by_index.emplace(trace.tasks[i].task, i);
  std::vector<std::int64_t> event_tracks(trace.events.size(), dependency_track);
  for (std::size_t i = 0; i < trace.events.size(); ++i) {
    auto it = by_index.find(trace.events[i].task);
    if (trace.events[i].task != no_task && it != by_index.end()) event_tracks[i] = tracks[it->second];
  }

  std::set<std::int64_t> tids(tracks.begin(), tracks.end());
  tids.insert(event_tracks.begin(), event_tracks.end());

  out << "{\"traceEvents\":[";
  bool first = true;
  write_metadata(trace, tids, out, first);
  for (const auto& [instance, start] : phase_instance_starts(trace)) {
    const auto& [epoch, phase] = instance;
    write_event(out, {{"ph", "i"}, {"s", "g"}, {"pid", trace_pid}, {"tid", 0},
                      {"name", "phase " + std::to_string(phase) + " (epoch " +
                                   std::to_string(epoch) + ")"},
                      {"cat", "phase boundary"}, {"ts", to_us(start - origin)},
                      {"args", {{"phase", phase}, {"epoch", epoch}}}}, first);
  }
  for (std::size_t i = 0; i < trace.tasks.size(); ++i)
    write_event(out, task_event(trace, trace.tasks[i], tracks[i], origin), first);
  for (std::size_t i = 0; i < trace.events.size(); ++i)
    write_event(out, dependency_event(trace.events[i], event_tracks[i], origin), first);
  out << "\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":" << other_data(trace, origin).dump()
      << "}\n";
}

void save_chrome_trace(const Trace& trace, const std::filesystem::path& path) {
  std::ofstream out(path);
  if (!out) throw InputError(path.string(), "cannot open the file for writing");
  write_chrome_trace(trace, out);
  out.flush();
  if (!out) throw InputError(path.string(), "writing the trace failed");
}

// ---------------------------------------------------------------------------------------------
// Import

namespace {

// Reads typed fields out of the JSON document, naming the file and the JSON path of anything
// missing or mistyped.
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const std::string& path, const std::string& what) const {
    throw InputError(file_, path.empty() ? what : path + ": " + what);
  }

  const json& field(const json& object, const std::string& path, const char* key) const {
    if (!object.is_object()) fail(path, "expected a JSON object");
    auto it = object.find(key);
    if (it == object.end()) fail(path, std::string("missing field \"") + key + "\"");
    return *it;
  }

  template <typename T>
  T integer(const json& object, const std::string& path, const char* key) const {
    const json& value = field(object, path, key);
    const std::string where = path + "/" + key;
    if (value.is_number_unsigned()) {
      auto v = value.get<std::uint64_t>();
      if (v > static_cast<std::uint64_t>(std::numeric_limits<T>::max()))
        fail(where, "value " + std::to_string(v) + " is out of range");
      return static_cast<T>(v);
    }
    if (value.is_number_integer()) {
      auto v = value.get<std::int64_t>();
      if constexpr (std::is_unsigned_v<T>) {
        if (v < 0) fail(where, "expected a non-negative integer, got " + std::to_string(v));
      } else {
        if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max())
          fail(where, "value " + std::to_string(v) + " is out of range");
      }
      return static_cast<T>(v);
    }
    fail(where, "expected an integer, got " + value.dump());
  }

  // An integer, or null standing for `null_value` (no_task for unknown tasks and queues).
  std::uint32_t integer_or_null(const json& object, const std::string& path, const char* key,
                                std::uint32_t null_value) const {
    if (field(object, path, key).is_null()) return null_value;
    return integer<std::uint32_t>(object, path, key);
  }

  std::string string(const json& object, const std::string& path, const char* key) const {
    const json& value = field(object, path, key);
    if (!value.is_string()) fail(path + "/" + key, "expected a string, got " + value.dump());
    return value.get<std::string>();
  }

  bool boolean(const json& object, const std::string& path, const char* key) const {
    const json& value = field(object, path, key);
    if (!value.is_boolean()) fail(path + "/" + key, "expected true or false, got " + value.dump());
    return value.get<bool>();
  }

  std::uint64_t decimal(const json& object, const std::string& path, const char* key) const {
    const std::string text = string(object, path, key);
    std::uint64_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size())
      fail(path + "/" + key, "expected a decimal unsigned integer in a string, got \"" + text + "\"");
    return value;
  }

  std::uint64_t hex(const json& object, const std::string& path, const char* key) const {
    const std::string text = string(object, path, key);
    std::uint64_t value = 0;
    const bool prefixed = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
    if (!prefixed) fail(path + "/" + key, "expected a hex id like \"0x1f\", got \"" + text + "\"");
    auto [end, ec] = std::from_chars(text.data() + 2, text.data() + text.size(), value, 16);
    if (ec != std::errc() || end != text.data() + text.size())
      fail(path + "/" + key, "expected a hex id like \"0x1f\", got \"" + text + "\"");
    return value;
  }

 private:
  std::string file_;
};

// Relative ns back to absolute, refusing values that would wrap around.
std::uint64_t absolute(const Reader& reader, std::uint64_t origin, std::uint64_t relative,
                       const std::string& path) {
  if (relative > std::numeric_limits<std::uint64_t>::max() - origin)
    reader.fail(path, "time overflows 64 bits when added to time_origin_ns");
  return origin + relative;
}

TaskRecord read_task(const Reader& r, const json& event, const std::string& path,
                     std::uint64_t origin) {
  const std::string args_path = path + "/args";
  const json& args = r.field(event, path, "args");
  TaskRecord task{};
  task.start_ns = absolute(r, origin, r.integer<std::uint64_t>(args, args_path, "start_ns"),
                           args_path + "/start_ns");
  task.end_ns = absolute(r, origin, r.integer<std::uint64_t>(args, args_path, "end_ns"),
                         args_path + "/end_ns");
  task.dependency = r.hex(args, args_path, "dependency");
  task.task = r.integer<std::uint32_t>(args, args_path, "task");
  task.queue = r.integer<std::uint32_t>(args, args_path, "queue");
  task.sm = r.integer<std::uint32_t>(args, args_path, "sm");
  task.block = r.integer<std::uint32_t>(args, args_path, "block");
  task.slot = r.integer<std::uint16_t>(args, args_path, "slot");
  task.phase = r.integer<std::int16_t>(args, args_path, "phase");
  task.phase_epoch = r.integer<std::uint32_t>(args, args_path, "epoch");
  return task;
}

DependencyEvent read_dependency_event(const Reader& r, const json& event, const std::string& path,
                                      std::uint64_t origin) {
  const std::string args_path = path + "/args";
  const json& args = r.field(event, path, "args");
  DependencyEvent out{};
  out.time_ns = absolute(r, origin, r.integer<std::uint64_t>(args, args_path, "time_ns"),
                         args_path + "/time_ns");
  out.dependency = r.hex(args, args_path, "dependency");
  out.kind = r.integer<std::uint32_t>(args, args_path, "kind");
  out.task = r.integer_or_null(args, args_path, "task", no_task);
  out.count = r.integer<std::int32_t>(args, args_path, "count");
  out.queue = r.integer_or_null(args, args_path, "queue", no_task);
  return out;
}

void read_other_data(const Reader& r, const json& other, Trace& trace) {
  const std::string path = "/otherData";
  const std::string format = r.string(other, path, "format");
  if (format != chrome_trace_format)
    r.fail(path + "/format", "not an apiary trace (format \"" + format + "\", expected \"" +
                                 chrome_trace_format + "\")");
  const int version = r.integer<int>(other, path, "version");
  if (version != chrome_trace_version)
    r.fail(path + "/version", "unsupported trace version " + std::to_string(version) +
                                  " (this build reads version " +
                                  std::to_string(chrome_trace_version) + ")");
  trace.device = r.string(other, path, "device");
  trace.scheduler = r.string(other, path, "scheduler");
  const json& names = r.field(other, path, "queue_names");
  if (!names.is_array()) r.fail(path + "/queue_names", "expected an array of strings");
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (!names[i].is_string())
      r.fail(path + "/queue_names/" + std::to_string(i), "expected a string, got " + names[i].dump());
    trace.queue_names.push_back(names[i].get<std::string>());
  }
  const json& phases = r.field(other, path, "queue_phase");
  if (!phases.is_array()) r.fail(path + "/queue_phase", "expected an array of integers");
  for (std::size_t i = 0; i < phases.size(); ++i) {
    if (!phases[i].is_number_integer())
      r.fail(path + "/queue_phase/" + std::to_string(i), "expected an integer, got " + phases[i].dump());
    trace.queue_phase.push_back(phases[i].get<int>());
  }
  trace.num_phases = r.integer<int>(other, path, "num_phases");
  trace.cyclic = r.boolean(other, path, "cyclic");
  trace.num_sms = r.integer<std::uint32_t>(other, path, "num_sms");
  trace.dropped_tasks = r.integer<std::uint64_t>(other, path, "dropped_tasks");
  trace.dropped_events = r.integer<std::uint64_t>(other, path, "dropped_events");
}

}  // namespace

Trace read_chrome_trace(std::istream& in, const std::string& name) {
  const Reader r(name);
  std::ostringstream text;
  text << in.rdbuf();
  const json document = parse_json(text.str(), name);
  if (!document.is_object())
    r.fail("", "expected a Chrome trace JSON object {\"traceEvents\": [...], \"otherData\": {...}}");
  const json& other = r.field(document, "", "otherData");
  Trace trace;
  read_other_data(r, other, trace);
  const std::uint64_t origin = r.decimal(other, "/otherData", "time_origin_ns");
  const auto task_count = r.integer<std::uint64_t>(other, "/otherData", "task_count");
  const auto event_count = r.integer<std::uint64_t>(other, "/otherData", "event_count");

  const json& events = r.field(document, "", "traceEvents");
  if (!events.is_array()) r.fail("/traceEvents", "expected an array");
  for (std::size_t i = 0; i < events.size(); ++i) {
    const json& event = events[i];
    const std::string path = "/traceEvents/" + std::to_string(i);
    const std::string ph = r.string(event, path, "ph");
    // Tasks are the only complete events; dependency events are the instants of that category.
    // Metadata and phase boundaries are derived data and are rebuilt on export.
    if (ph == "X") {
      trace.tasks.push_back(read_task(r, event, path, origin));
    } else if (ph == "i" && event.contains("cat") && event["cat"] == "dependency") {
      trace.events.push_back(read_dependency_event(r, event, path, origin));
    }
  }
  // Counts catch files that were cut short or edited.
  if (trace.tasks.size() != task_count)
    r.fail("/otherData/task_count", "says " + std::to_string(task_count) + " tasks but the file holds " +
                                        std::to_string(trace.tasks.size()) + " task events");
  if (trace.events.size() != event_count)
    r.fail("/otherData/event_count", "says " + std::to_string(event_count) +
                                         " dependency events but the file holds " +
                                         std::to_string(trace.events.size()));
  return trace;
}

Trace load_chrome_trace(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path.string(), "cannot open the trace file");
  return read_chrome_trace(in, path.string());
}

// ---------------------------------------------------------------------------------------------
// CSV

namespace {

// RFC 4180 quoting, only where needed.
std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

}  // namespace

void write_trace_csv(const Trace& trace, std::ostream& out) {
  const std::uint64_t origin = trace_time_origin(trace);
  out << "task,queue,queue_name,phase,epoch,sm,block,slot,start_ns,end_ns,duration_ns,dependency\n";
  for (const auto& task : trace.tasks) {
    const std::uint64_t start = task.start_ns - origin;
    const std::uint64_t end = task.end_ns - origin;
    // A negative duration (corrupt record) is written as such rather than wrapped around.
    const std::int64_t duration = static_cast<std::int64_t>(task.end_ns - task.start_ns);
    out << task.task << ',' << task.queue << ',' << csv_field(queue_label(trace, task.queue)) << ','
        << task.phase << ',' << task.phase_epoch << ',' << task.sm << ',' << task.block << ','
        << task.slot << ',' << start << ',' << end << ',' << duration << ','
        << hex_id(task.dependency) << '\n';
  }
}

void save_trace_csv(const Trace& trace, const std::filesystem::path& path) {
  std::ofstream out(path);
  if (!out) throw InputError(path.string(), "cannot open the file for writing");
  write_trace_csv(trace, out);
  out.flush();
  if (!out) throw InputError(path.string(), "writing the CSV failed");
}

}  // namespace apiary
