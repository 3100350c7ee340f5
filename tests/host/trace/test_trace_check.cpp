// Trace checker: valid traces pass; each kind of violation is found with a precise message.
#include "trace_fixtures.hpp"

#include <apiary/trace_check.hpp>
#include <apiary/trace_summary.hpp>

#include <catch2/catch.hpp>

using apiary::check_trace;
using apiary::test::dep_a;
using apiary::test::dep_b;
using apiary::test::TraceBuilder;
using Catch::Matchers::Contains;

namespace {

// The only violation of a trace that must have exactly one.
std::string single_violation(const apiary::Trace& trace) {
  const auto result = check_trace(trace);
  INFO(apiary::format(result));
  REQUIRE_FALSE(result.ok);
  REQUIRE(result.violation_count == 1);
  REQUIRE(result.violations.size() == 1);
  return result.violations[0];
}

void require_ok(const apiary::Trace& trace) {
  const auto result = check_trace(trace);
  INFO(apiary::format(result));
  REQUIRE(result.ok);
  REQUIRE(result.violation_count == 0);
  REQUIRE(result.warnings.empty());
}

}  // namespace

TEST_CASE("Valid traces pass the checker", "[trace][check]") {
  SECTION("phases, touching boundaries, phaseless task across a boundary") {
    require_ok(apiary::test::phased_trace().trace);
    const auto result = check_trace(apiary::test::phased_trace().trace);
    REQUIRE(result.phase_instances == 3);
    REQUIRE(apiary::format(result) == "trace ok: 9 tasks, 3 phase instances, 0 dependencies checked\n");
  }
  SECTION("cyclic epochs: phase 0 again after phase 1") {
    require_ok(apiary::test::cyclic_trace().trace);
    REQUIRE(check_trace(apiary::test::cyclic_trace().trace).phase_instances == 4);
  }
  SECTION("dependencies: early resolve, sequential reuse, start == last resolve") {
    require_ok(apiary::test::dependency_trace().trace);
    REQUIRE(check_trace(apiary::test::dependency_trace().trace).dependencies == 2);
  }
  SECTION("empty trace") { require_ok(apiary::Trace{}); }
}

TEST_CASE("Phase order: a phase-2 task starting before a phase-1 task ended", "[trace][check]") {
  auto b = apiary::test::phased_trace();
  b.trace.tasks[8].start_ns = apiary::test::t0 + 205;  // 'finish' on SM 1; 'relax' task 6 ends at 210
  REQUIRE(single_violation(b.trace) ==
          "phase order: 1 task(s) of phase 2 (epoch 2) started before phase 1 (epoch 1) had "
          "finished; first: task 8 ('finish', SM 1) started at t=205 ns but task 6 ('relax', SM 1) "
          "ended at t=210 ns");
}

TEST_CASE("Phase order across cyclic epochs", "[trace][check]") {
  auto b = apiary::test::cyclic_trace();
  // Epoch 2 (phase 0 again) starts before epoch 1 (phase 1) ended at t=100.
  b.trace.tasks[4].start_ns = apiary::test::t0 + 90;
  b.trace.tasks[5].start_ns = apiary::test::t0 + 95;
  REQUIRE_THAT(single_violation(b.trace),
               Contains("2 task(s) of phase 0 (epoch 2) started before phase 1 (epoch 1)") &&
                   Contains("task 4 ('a', SM 0) started at t=90 ns"));
}

TEST_CASE("Wrong phase in a record", "[trace][check]") {
  auto b = apiary::test::phased_trace();
  b.trace.tasks[5].phase = 2;  // 'emit' belongs to phase 1
  // Moved into phase 2's instance by its record it also breaks order, so look for both.
  const auto result = check_trace(b.trace);
  REQUIRE_FALSE(result.ok);
  REQUIRE(result.violations.at(0) ==
          "wrong phase: task 5 ('emit', SM 1) ran in phase 2 but its queue belongs to phase 1");

  auto c = apiary::test::phased_trace();
  c.trace.tasks[3].phase = 1;  // phaseless 'log'
  REQUIRE(single_violation(c.trace) ==
          "wrong phase: task 3 ('log', SM 1) of a phaseless queue carries phase 1 (expected -1)");
}

TEST_CASE("Dependency: released task starting before its last resolve", "[trace][check]") {
  auto b = apiary::test::dependency_trace();
  // Consumer task 7 waits for resolves at 60 and 70 on dep_b; let it start at 65 and move the
  // release before it so that only the resolve order is broken.
  b.trace.tasks[7].start_ns = apiary::test::t0 + 65;
  b.trace.events.back().time_ns = apiary::test::t0 + 70;
  const auto result = check_trace(b.trace);
  INFO(apiary::format(result));
  REQUIRE_FALSE(result.ok);
  REQUIRE(result.violations.at(0) ==
          "dependency 0x7f0000002040: task 7 ('consumer', SM 0) started at t=65 ns before its last "
          "resolve at t=70 ns (by task 6 ('producer', SM 2))");
  REQUIRE_THAT(result.violations.at(1), Contains("before its release at t=70 ns"));
}

TEST_CASE("Dependency: too few resolves", "[trace][check]") {
  auto b = apiary::test::dependency_trace();
  // Drop the early resolve of dep_a: its consumer awaited 2 but only 1 resolve exists.
  b.trace.events.erase(b.trace.events.begin());
  REQUIRE(single_violation(b.trace) ==
          "dependency 0x7f0000001000: too few resolves: task 3 ('consumer', SM 3) awaited 2 "
          "resolution(s) (park at t=10 ns) but only 1 resolve event(s) were left (1 in total)");
}

TEST_CASE("Dependency: release before the last resolve; park/task count mismatch", "[trace][check]") {
  auto b = apiary::test::dependency_trace();
  b.trace.events[3].time_ns = apiary::test::t0 + 19;  // release of dep_a, last resolve at 20
  REQUIRE(single_violation(b.trace) ==
          "dependency 0x7f0000001000: release at t=19 ns came before its last resolve at t=20 ns "
          "(by task 2 ('producer', SM 2))");

  auto c = apiary::test::dependency_trace();
  c.trace.tasks[5].dependency = 0;  // task 5 no longer counts as released through dep_b
  const auto result = check_trace(c.trace);
  REQUIRE_FALSE(result.ok);
  REQUIRE(result.violations.at(0) == "dependency 0x7f0000002040: 2 park event(s) but 1 task(s) released through it");
}

TEST_CASE("Unconsumed resolves are a warning, not a violation", "[trace][check]") {
  auto b = apiary::test::dependency_trace();
  b.resolve(100, 0x1234, 7);
  const auto result = check_trace(b.trace);
  REQUIRE(result.ok);
  REQUIRE(result.warnings.size() == 1);
  REQUIRE_THAT(result.warnings[0], Contains("1 dependencies have resolves that no wait consumed") &&
                                       Contains("dependency 0x1234: 1 resolve(s) from t=100 ns"));
}

TEST_CASE("Sanity checks", "[trace][check]") {
  SECTION("end before start") {
    auto b = apiary::test::phased_trace();
    b.trace.tasks[4].end_ns = b.trace.tasks[4].start_ns - 1;
    REQUIRE(single_violation(b.trace) ==
            "sanity: task 4 ('relax', SM 0) ends at t=99 ns before it starts at t=100 ns");
  }
  SECTION("duplicate task index") {
    auto b = apiary::test::phased_trace();
    b.trace.tasks[2].task = 1;
    REQUIRE(single_violation(b.trace) == "sanity: task index 1 appears 2 times");
  }
  SECTION("queue out of range") {
    auto b = apiary::test::phased_trace();
    b.trace.tasks[0].queue = 9;
    REQUIRE(single_violation(b.trace) == "sanity: task 0 has queue 9 but the trace names 5 queues");
  }
  SECTION("SM out of range") {
    auto b = apiary::test::phased_trace();
    b.trace.tasks[0].sm = 4;
    REQUIRE(single_violation(b.trace) == "sanity: task 0 ('init', SM 4) ran on SM 4 but the device has 4 SMs");
  }
  SECTION("dropped records: violation by default, warning on request") {
    auto b = apiary::test::phased_trace();
    b.trace.dropped_tasks = 3;
    REQUIRE_THAT(single_violation(b.trace), Contains("3 task records and 0 dependency events were dropped") &&
                                                Contains("cannot be checked completely"));
    apiary::TraceCheckOptions lenient;
    lenient.dropped_is_violation = false;
    const auto result = check_trace(b.trace, lenient);
    REQUIRE(result.ok);
    REQUIRE(result.warnings.size() == 1);
    REQUIRE_THAT(apiary::format(result), Contains("warning: sanity: 3 task records"));
  }
}

TEST_CASE("Violation messages are capped but all are counted", "[trace][check]") {
  auto b = apiary::test::phased_trace();
  for (auto& task : b.trace.tasks) task.end_ns = task.start_ns - 1;
  apiary::TraceCheckOptions options;
  options.max_messages = 3;
  const auto result = check_trace(b.trace, options);
  REQUIRE(result.violations.size() == 3);
  REQUIRE(result.violation_count >= 9);
  REQUIRE_THAT(apiary::format(result), Contains("... and " + std::to_string(result.violation_count - 3) + " more"));
}

TEST_CASE("Summary: tasks per type and SM, span, utilisation", "[trace][summary]") {
  TraceBuilder b({"x", "y"}, {-1, -1}, 0);
  b.trace.num_sms = 2;
  b.task(0, 0, 100, 0);
  b.task(1, 50, 150, 0);  // overlaps: SM 0 busy 0..150
  b.task(0, 100, 200, 1);  // SM 1 busy 100..200
  const auto summary = apiary::summarize_trace(b.trace);
  REQUIRE(summary.tasks == 3);
  REQUIRE(summary.tasks_per_queue == std::vector<std::size_t>{2, 1});
  REQUIRE(summary.tasks_per_sm.at(0) == 2);
  REQUIRE(summary.span_ns == 200);
  REQUIRE(summary.busy_ns == 250);
  REQUIRE(summary.task_ns == 300);
  REQUIRE(summary.utilisation == Approx(250.0 / 400.0));
  REQUIRE(summary.mean_concurrency == Approx(300.0 / 400.0));
  REQUIRE_THAT(apiary::format(b.trace, summary), Contains("utilisation: 0.6250") && Contains("SM 1: 1"));
}

TEST_CASE("Simulated runs (phases and individual dependencies) pass; perturbed ones fail", "[trace][check]") {
  for (bool phases : {true, false}) {
    CAPTURE(phases);
    apiary::Trace trace = apiary::test::simulated_trace(phases, 4, 3, 200, 7);
    require_ok(trace);
    // Start the first 'combine' task (index 600) 1 ns earlier than anything it waits for.
    auto& combine = trace.tasks[600];
    combine.start_ns = apiary::test::t0;
    const auto result = check_trace(trace);
    REQUIRE_FALSE(result.ok);
    REQUIRE_THAT(result.violations.at(0), Contains(phases ? "phase order" : "before its last resolve"));
  }
}
