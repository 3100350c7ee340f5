// Chrome trace JSON round trip, its Perfetto-facing layout, CSV, malformed input.
#include "trace_fixtures.hpp"

#include <apiary/error.hpp>
#include <apiary/trace_export.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <sstream>

namespace fs = std::filesystem;
using apiary::Trace;
using nlohmann::json;

namespace {

// A fresh directory per test case (tests may run in parallel).
fs::path scratch_dir(const std::string& name) {
  std::random_device rd;
  fs::path dir = fs::temp_directory_path() / ("apiary-trace-test-" + name + "-" + std::to_string(rd()));
  fs::create_directories(dir);
  return dir;
}

// Names the first differing field, or returns "" when the traces are identical.
std::string difference(const Trace& a, const Trace& b) {
  if (a.device != b.device) return "device";
  if (a.scheduler != b.scheduler) return "scheduler";
  if (a.queue_names != b.queue_names) return "queue_names";
  if (a.queue_phase != b.queue_phase) return "queue_phase";
  if (a.num_phases != b.num_phases) return "num_phases";
  if (a.cyclic != b.cyclic) return "cyclic";
  if (a.num_sms != b.num_sms) return "num_sms";
  if (a.dropped_tasks != b.dropped_tasks) return "dropped_tasks";
  if (a.dropped_events != b.dropped_events) return "dropped_events";
  if (a.tasks.size() != b.tasks.size()) return "tasks.size";
  if (a.events.size() != b.events.size()) return "events.size";
  for (std::size_t i = 0; i < a.tasks.size(); ++i) {
    const auto& x = a.tasks[i];
    const auto& y = b.tasks[i];
    const std::string at = "tasks[" + std::to_string(i) + "].";
    if (x.start_ns != y.start_ns) return at + "start_ns";
    if (x.end_ns != y.end_ns) return at + "end_ns";
    if (x.dependency != y.dependency) return at + "dependency";
    if (x.task != y.task) return at + "task";
    if (x.queue != y.queue) return at + "queue";
    if (x.sm != y.sm) return at + "sm";
    if (x.block != y.block) return at + "block";
    if (x.slot != y.slot) return at + "slot";
    if (x.phase != y.phase) return at + "phase";
    if (x.phase_epoch != y.phase_epoch) return at + "phase_epoch";
  }
  for (std::size_t i = 0; i < a.events.size(); ++i) {
    const auto& x = a.events[i];
    const auto& y = b.events[i];
    const std::string at = "events[" + std::to_string(i) + "].";
    if (x.time_ns != y.time_ns) return at + "time_ns";
    if (x.dependency != y.dependency) return at + "dependency";
    if (x.kind != y.kind) return at + "kind";
    if (x.task != y.task) return at + "task";
    if (x.count != y.count) return at + "count";
    if (x.queue != y.queue) return at + "queue";
  }
  return "";
}

Trace round_trip(const Trace& trace) {
  std::stringstream buffer;
  apiary::write_chrome_trace(trace, buffer);
  return apiary::read_chrome_trace(buffer, "memory");
}

json exported(const Trace& trace) {
  std::stringstream buffer;
  apiary::write_chrome_trace(trace, buffer);
  return json::parse(buffer);
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

}  // namespace

TEST_CASE("Chrome trace round trip keeps every field of a random trace exact", "[trace][export]") {
  for (std::uint32_t seed = 1; seed <= 5; ++seed) {
    const Trace trace = apiary::test::random_trace(seed, 500, 300);
    CAPTURE(seed);
    REQUIRE(difference(trace, round_trip(trace)) == "");
  }
}

TEST_CASE("Chrome trace round trip through a file; empty trace", "[trace][export]") {
  const fs::path dir = scratch_dir("file");
  const Trace trace = apiary::test::dependency_trace().trace;
  apiary::save_chrome_trace(trace, dir / "t.json");
  REQUIRE(difference(trace, apiary::load_chrome_trace(dir / "t.json")) == "");

  const Trace empty;
  REQUIRE(difference(empty, round_trip(empty)) == "");
  fs::remove_all(dir);
}

TEST_CASE("Chrome trace layout: tracks per SM, X events in us, metadata", "[trace][export]") {
  const Trace trace = apiary::test::phased_trace().trace;
  const json doc = exported(trace);
  REQUIRE(doc.at("displayTimeUnit") == "ns");
  REQUIRE(doc.at("otherData").at("format") == "apiary-trace");
  REQUIRE(doc.at("otherData").at("time_origin_ns") == std::to_string(apiary::test::t0));

  std::map<std::int64_t, std::string> track_names;
  std::vector<json> tasks, boundaries;
  for (const auto& event : doc.at("traceEvents")) {
    if (event.at("ph") == "M" && event.at("name") == "thread_name")
      track_names[event.at("tid").get<std::int64_t>()] = event.at("args").at("name");
    if (event.at("ph") == "X") tasks.push_back(event);
    if (event.at("ph") == "i" && event.at("cat") == "phase boundary") boundaries.push_back(event);
  }
  REQUIRE(tasks.size() == trace.tasks.size());

  // Task 0: "init" on SM 0 from 0 to 100 ns -> ts 0 us, dur 0.1 us.
  REQUIRE(tasks[0].at("name") == "init");
  REQUIRE(tasks[0].at("cat") == "phase 0");
  REQUIRE(tasks[0].at("ts").get<double>() == 0.0);
  REQUIRE(tasks[0].at("dur").get<double>() == Approx(0.1));
  REQUIRE(tasks[0].at("args").at("dependency") == "0x0");
  REQUIRE(track_names.at(tasks[0].at("tid").get<std::int64_t>()) == "SM 0");
  // Task 1 overlaps task 0 on SM 0: a sub-track of SM 0.
  REQUIRE(track_names.at(tasks[1].at("tid").get<std::int64_t>()) == "SM 0 [1]");
  REQUIRE(tasks[3].at("cat") == "phaseless");
  REQUIRE(tasks[3].at("name") == "log");

  // No two tasks on one track overlap (Perfetto needs nested slices per track).
  std::map<std::int64_t, std::vector<std::pair<std::uint64_t, std::uint64_t>>> per_track;
  for (const auto& t : tasks)
    per_track[t.at("tid").get<std::int64_t>()].emplace_back(t.at("args").at("start_ns"),
                                                            t.at("args").at("end_ns"));
  for (auto& [tid, spans] : per_track) {
    std::sort(spans.begin(), spans.end());
    for (std::size_t i = 1; i < spans.size(); ++i) REQUIRE(spans[i - 1].second <= spans[i].first);
  }

  // One boundary per phase instance, at the instance's first start.
  REQUIRE(boundaries.size() == 3);
  REQUIRE(boundaries[1].at("name") == "phase 1 (epoch 1)");
  REQUIRE(boundaries[1].at("s") == "g");
  REQUIRE(boundaries[1].at("ts").get<double>() == Approx(0.1));
}

TEST_CASE("Dependency events are instant events on the acting task's track", "[trace][export]") {
  const Trace trace = apiary::test::dependency_trace().trace;
  const json doc = exported(trace);
  std::map<std::uint32_t, std::int64_t> task_tid;
  std::vector<json> deps;
  for (const auto& event : doc.at("traceEvents")) {
    if (event.at("ph") == "X") task_tid[event.at("args").at("task")] = event.at("tid");
    if (event.at("ph") == "i" && event.at("cat") == "dependency") deps.push_back(event);
  }
  REQUIRE(deps.size() == trace.events.size());
  REQUIRE(deps[0].at("name") == "resolve");
  REQUIRE(deps[0].at("s") == "t");
  REQUIRE(deps[0].at("tid") == task_tid.at(0));
  REQUIRE(deps[0].at("args").at("dependency") == "0x7f0000001000");
  REQUIRE(deps[0].at("args").at("queue").is_null());
  REQUIRE(deps[1].at("name") == "park");
  REQUIRE(deps[1].at("args").at("count") == 2);
}

TEST_CASE("Events of unknown tasks get their own track; track ids fit 32 bits", "[trace][export]") {
  auto b = apiary::test::dependency_trace();
  b.resolve(95, 0x99, apiary::no_task);
  b.trace.tasks[0].sm = 255;
  const json doc = exported(b.trace);
  std::map<std::int64_t, std::string> track_names;
  for (const auto& event : doc.at("traceEvents")) {
    if (event.contains("tid")) REQUIRE(event.at("tid").get<std::int64_t>() < (std::int64_t{1} << 31));
    if (event.at("ph") == "M" && event.at("name") == "thread_name")
      track_names[event.at("tid").get<std::int64_t>()] = event.at("args").at("name");
  }
  const json& last = doc.at("traceEvents").back();
  REQUIRE(last.at("args").at("task").is_null());
  REQUIRE(track_names.at(last.at("tid").get<std::int64_t>()) == "dependency events");
  REQUIRE(std::count_if(track_names.begin(), track_names.end(),
                        [](const auto& t) { return t.second == "SM 255"; }) == 1);
}

TEST_CASE("CSV: header and one row per task", "[trace][csv]") {
  apiary::test::TraceBuilder b({"plain", "with,comma"}, {0, -1}, 1);
  b.task(0, 0, 100, 2, 0);
  b.task(1, 50, 70, 3, 0, 0xabc);
  std::ostringstream out;
  apiary::write_trace_csv(b.trace, out);
  REQUIRE(out.str() ==
          "task,queue,queue_name,phase,epoch,sm,block,slot,start_ns,end_ns,duration_ns,dependency\n"
          "0,0,plain,0,0,2,4,0,0,100,100,0x0\n"
          "1,1,\"with,comma\",-1,0,3,6,1,50,70,20,0xabc\n");

  const fs::path dir = scratch_dir("csv");
  apiary::save_trace_csv(b.trace, dir / "t.csv");
  std::ifstream in(dir / "t.csv");
  std::stringstream text;
  text << in.rdbuf();
  REQUIRE(text.str() == out.str());
  fs::remove_all(dir);
}

TEST_CASE("Malformed trace files raise InputError naming the file and the problem", "[trace][errors]") {
  const fs::path dir = scratch_dir("bad");
  const fs::path file = dir / "bad.json";
  using Catch::Matchers::Contains;

  auto load_error = [&](const std::string& text) -> std::string {
    write_text(file, text);
    try {
      apiary::load_chrome_trace(file);
    } catch (const apiary::InputError& e) {
      return e.what();
    }
    return "no error";
  };

  // A valid document to corrupt one field at a time.
  const Trace trace = apiary::test::dependency_trace().trace;
  const json good = exported(trace);
  auto with = [&](const std::function<void(json&)>& edit) {
    json doc = good;
    edit(doc);
    return doc.dump();
  };
  std::size_t first_task = 0;
  while (good["traceEvents"][first_task]["ph"] != "X") ++first_task;

  SECTION("missing file") {
    REQUIRE_THROWS_AS(apiary::load_chrome_trace(dir / "nope.json"), apiary::InputError);
    REQUIRE_THROWS_WITH(apiary::load_chrome_trace(dir / "nope.json"),
                        Contains("nope.json") && Contains("cannot open"));
  }
  SECTION("not JSON") {
    const std::string error = load_error("{\"traceEvents\": [");
    REQUIRE_THAT(error, Contains(file.string() + ":1:") && Contains("JSON syntax error"));
    REQUIRE_THAT(load_error("{\"traceEvents\": [1e999]}"),
                 Contains(file.string() + ":1:") && Contains("JSON number out of range"));
  }
  SECTION("not an object") {
    REQUIRE_THAT(load_error("[]"), Contains(file.string()) && Contains("expected a Chrome trace JSON object"));
  }
  SECTION("foreign Chrome trace without otherData") {
    REQUIRE_THAT(load_error("{\"traceEvents\": []}"), Contains("missing field \"otherData\""));
  }
  SECTION("wrong format tag") {
    REQUIRE_THAT(load_error(with([](json& d) { d["otherData"]["format"] = "other"; })),
                 Contains("/otherData/format") && Contains("not an apiary trace"));
  }
  SECTION("unsupported version") {
    REQUIRE_THAT(load_error(with([](json& d) { d["otherData"]["version"] = 99; })),
                 Contains("unsupported trace version 99"));
  }
  SECTION("time as a string") {
    REQUIRE_THAT(load_error(with([&](json& d) { d["traceEvents"][first_task]["args"]["start_ns"] = "12"; })),
                 Contains("/traceEvents/" + std::to_string(first_task) + "/args/start_ns") &&
                     Contains("expected an integer"));
  }
  SECTION("missing task field") {
    REQUIRE_THAT(load_error(with([&](json& d) { d["traceEvents"][first_task]["args"].erase("sm"); })),
                 Contains("missing field \"sm\""));
  }
  SECTION("slot out of range") {
    REQUIRE_THAT(load_error(with([&](json& d) { d["traceEvents"][first_task]["args"]["slot"] = 70000; })),
                 Contains("/args/slot") && Contains("out of range"));
  }
  SECTION("negative unsigned field") {
    REQUIRE_THAT(load_error(with([&](json& d) { d["traceEvents"][first_task]["args"]["queue"] = -1; })),
                 Contains("/args/queue") && Contains("non-negative"));
  }
  SECTION("bad dependency id") {
    REQUIRE_THAT(load_error(with([&](json& d) { d["traceEvents"][first_task]["args"]["dependency"] = "12"; })),
                 Contains("expected a hex id"));
  }
  SECTION("bad time origin") {
    REQUIRE_THAT(load_error(with([](json& d) { d["otherData"]["time_origin_ns"] = "12x"; })),
                 Contains("/otherData/time_origin_ns"));
  }
  SECTION("truncated event list") {
    REQUIRE_THAT(load_error(with([&](json& d) { d["traceEvents"].erase(first_task); })),
                 Contains("task_count") && Contains("says 8 tasks but the file holds 7"));
  }
  fs::remove_all(dir);
}
