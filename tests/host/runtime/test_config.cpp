#include <apiary/config.hpp>
#include <apiary/error.hpp>

#include <catch2/catch.hpp>

using namespace apiary;

TEST_CASE("config: every key is read", "[config]") {
  const Config c = Config::parse(R"({
    "scheduler": "mk", "queue_capacity": 1000, "queue_capacities": {"Leg": 64},
    "waiting_storage_capacity": 10, "dependency_capacity": 20, "watchdog_seconds": 2.5,
    "trace": true, "trace_capacity": 99, "trace_event_capacity": 98, "handoff": false,
    "megakernel": {"block_threads": 512, "blocks_per_sm": 2}, "device": 0})");
  REQUIRE(c.scheduler == Scheduler::megakernel);
  REQUIRE(c.queue_capacity == 1000);
  std::string key;
  REQUIRE(c.capacity_for("Leg", &key) == 64);
  REQUIRE(key == "queue_capacities.Leg");
  REQUIRE(c.capacity_for("Top", &key) == 1000);
  REQUIRE(key == "queue_capacity");
  REQUIRE(c.waiting_storage_capacity == 10);
  REQUIRE(c.dependency_capacity == 20);
  REQUIRE(c.watchdog_seconds == 2.5);
  REQUIRE(c.trace);
  REQUIRE(c.trace_capacity == 99);
  REQUIRE_FALSE(c.handoff);
  REQUIRE(Config{}.handoff);
  REQUIRE(c.megakernel.block_threads == 512);
  REQUIRE(c.megakernel.blocks_per_sm == 2);
}

TEST_CASE("config: device controller keys and scheduler names", "[config]") {
  const Config d;
  REQUIRE(d.device_controller.pending_launches == 2048);
  REQUIRE(d.device_controller.oversubscription == 1.5);
  REQUIRE(d.device_controller.linger_us == 20);
  const Config c = Config::parse(R"({"scheduler": "pdc_wave",
    "device_controller": {"pending_launches": 4096, "oversubscription": 2.0, "linger_us": 0}})");
  REQUIRE(c.scheduler == Scheduler::device_controller_wave);
  REQUIRE(c.device_controller.pending_launches == 4096);
  REQUIRE(c.device_controller.oversubscription == 2.0);
  REQUIRE(c.device_controller.linger_us == 0);
  REQUIRE_THROWS_WITH(Config::parse(R"({"device_controller": {"linger_us": 2000000}})"),
                      Catch::Contains("linger_us"));
  DeviceControllerConfig set_in_code;  // what the JSON reader refuses, check() refuses too
  set_in_code.linger_us = DeviceControllerConfig::max_linger_us;
  REQUIRE_NOTHROW(set_in_code.check("code"));
  set_in_code.linger_us = DeviceControllerConfig::max_linger_us + 1;
  REQUIRE_THROWS_WITH(set_in_code.check("code"), Catch::Contains("device_controller.linger_us"));
  REQUIRE(parse_scheduler("pdc") == Scheduler::device_controller);
  REQUIRE(parse_scheduler("device_controller") == Scheduler::device_controller);
  REQUIRE(parse_scheduler("device_controller_wave") == Scheduler::device_controller_wave);
  REQUIRE(to_string(Scheduler::device_controller_wave) == "device_controller_wave");
  REQUIRE(all_schedulers().size() == 5);
  REQUIRE_THROWS_WITH(Config::parse(R"({"device_controller": {"pending_launches": 0}})"),
                      Catch::Contains("pending_launches"));
  REQUIRE_THROWS_WITH(Config::parse(R"({"device_controller": {"pending": 1}})"),
                      Catch::Contains("unknown key 'pending'"));
  REQUIRE_THROWS_WITH(parse_scheduler("fastest"), Catch::Contains("pdc_wave"));
}

TEST_CASE("config: timesliced graph keys and scheduler names", "[config]") {
  const Config d;
  REQUIRE(d.timesliced_graph.rounds_per_graph == 4);
  REQUIRE(d.timesliced_graph.graphs_in_flight == 2);
  const Config c = Config::parse(R"({"scheduler": "tsk_graph",
    "timesliced_graph": {"rounds_per_graph": 8, "graphs_in_flight": 3}})");
  REQUIRE(c.scheduler == Scheduler::timesliced_graph);
  REQUIRE(c.timesliced_graph.rounds_per_graph == 8);
  REQUIRE(c.timesliced_graph.graphs_in_flight == 3);
  REQUIRE(parse_scheduler("timesliced_graph") == Scheduler::timesliced_graph);
  REQUIRE(to_string(Scheduler::timesliced_graph) == "timesliced_graph");
  REQUIRE_THROWS_WITH(Config::parse(R"({"timesliced_graph": {"rounds_per_graph": 0}})"),
                      Catch::Contains("rounds_per_graph") && Catch::Contains("out of range"));
  REQUIRE_THROWS_WITH(Config::parse(R"({"timesliced_graph": {"graphs_in_flight": 1.5}})"),
                      Catch::Contains("graphs_in_flight"));
  REQUIRE_THROWS_WITH(Config::parse(R"({"timesliced_graph": {"rounds": 2}})"),
                      Catch::Contains("unknown key 'rounds'"));
  REQUIRE_THROWS_WITH(Config::parse(R"({"timesliced_graph": 4})"), Catch::Contains("must be an object"));
  // Set in code, checked before a run.
  TimeslicedGraphConfig set;
  REQUIRE_NOTHROW(set.check("here"));
  set.rounds_per_graph = 0;
  REQUIRE_THROWS_WITH(set.check("here"), Catch::Contains("here: timesliced_graph.rounds_per_graph") &&
                                             Catch::Contains("out of range [1, 64]"));
  set.rounds_per_graph = 4;
  set.graphs_in_flight = 17;
  REQUIRE_THROWS_WITH(set.check("here"), Catch::Contains("graphs_in_flight") && Catch::Contains("[1, 16]"));
  REQUIRE_THROWS_WITH(parse_scheduler("fastest"), Catch::Contains("tsk_graph"));
}

TEST_CASE("scheduler lists: names, aliases, all, errors", "[config]") {
  REQUIRE(parse_schedulers("all") == all_schedulers());
  REQUIRE(parse_schedulers("mk,pdc_wave") ==
          std::vector<Scheduler>{Scheduler::megakernel, Scheduler::device_controller_wave});
  REQUIRE(parse_schedulers("tsk,,") == std::vector<Scheduler>{Scheduler::timesliced});
  REQUIRE_THROWS_WITH(parse_schedulers("mk,fastest"), Catch::Contains("scheduler 'fastest'"));
  REQUIRE_THROWS_WITH(parse_schedulers(","), Catch::Contains("names no scheduler"));
}

TEST_CASE("config: bad input names file, position or key", "[config]") {
  auto message = [](const char* text) {
    try {
      Config::parse(text, "run.json");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  REQUIRE_THAT(message("{\n  \"trace\": tru\n}"), Catch::Contains("run.json:2:"));
  REQUIRE_THAT(message(R"({"queue_capacty": 5})"), Catch::Contains("unknown key 'queue_capacty'"));
  REQUIRE_THAT(message(R"({"queue_capacity": -5})"), Catch::Contains("queue_capacity"));
  REQUIRE_THAT(message(R"({"queue_capacity": 1.5})"), Catch::Contains("integer"));
  REQUIRE_THAT(message(R"({"scheduler": "fastest"})"), Catch::Contains("megakernel"));
  REQUIRE_THAT(message(R"({"megakernel": {"block_threads": 100}})"), Catch::Contains("multiple of 32"));
  REQUIRE_THAT(message(R"([1, 2])"), Catch::Contains("JSON object"));
  // A number beyond a double is nlohmann's out_of_range, not a parse_error: it must still come
  // out as an InputError at its position.
  REQUIRE_THAT(message("{\n  \"watchdog_seconds\": 1e999\n}"),
               Catch::StartsWith("run.json:2:") && Catch::Contains("JSON number out of range"));
}

TEST_CASE("config: missing file is a clear error", "[config]") {
  REQUIRE_THROWS_WITH(Config::load("/nonexistent/apiary.json"), Catch::Contains("cannot open"));
}
