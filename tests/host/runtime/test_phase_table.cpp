#include <apiary/error.hpp>
#include <apiary/phase_table.hpp>

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace apiary;

namespace {
QueueLayout layout(const char* name, std::int32_t phase, std::uint32_t threads = 32) {
  QueueLayout q;
  q.name = name;
  q.item_size = 8;
  q.capacity = 16;
  q.worker_size = threads;
  q.phase = phase;
  q.capacity_key = "queue_capacity";
  return q;
}
}  // namespace

TEST_CASE("phase table: the thesis's Table 4.1", "[phases]") {
  // Listing 4.1: Phase1 = {TaskType1, TaskType2}, Phase2 = {TaskType3, TaskType4, TaskType5}.
  PhaseTable t({layout("TaskType1", 0), layout("TaskType2", 0), layout("TaskType3", 1), layout("TaskType4", 1),
                layout("TaskType5", 1)},
               false);
  REQUIRE(t.phaseless().begin == 0);
  REQUIRE(t.phaseless().end == 0);
  REQUIRE(t.num_phases() == 2);
  REQUIRE(t.phases()[0].begin == 0);
  REQUIRE(t.phases()[0].end == 2);
  REQUIRE(t.phases()[1].begin == 2);
  REQUIRE(t.phases()[1].end == 5);
  REQUIRE(t.queue_index("TaskType4") == 3);
  const PhaseTableView v = t.view();
  REQUIRE(v.pending_slot(0) == 1);
  REQUIRE(v.pending_slot(4) == 2);
  REQUIRE_THAT(t.format(), Catch::Contains("TaskType3 (2)"));
}

TEST_CASE("phase table: phaseless queues come first, empty phases are kept (skipped at run time)", "[phases]") {
  PhaseTable t({layout("B", 2), layout("L", no_phase), layout("A", 0)}, true);
  REQUIRE(t.queues()[0].name == "L");
  REQUIRE(t.queues()[1].name == "A");
  REQUIRE(t.queues()[2].name == "B");
  REQUIRE(t.phaseless().size() == 1);
  REQUIRE(t.num_phases() == 3);
  REQUIRE(t.phases()[1].size() == 0);
  REQUIRE(t.cyclic());
}

TEST_CASE("phase table: the queues that run in a phase, one at a time and as a mask", "[phases]") {
  // Two phaseless types, an empty phase 1, and 64 queues in all (the mask's full width).
  std::vector<QueueLayout> queues{layout("Free0", no_phase), layout("Free1", no_phase), layout("A", 0),
                                  layout("B", 0), layout("C", 2)};
  for (std::size_t i = 0; queues.size() < max_queues; ++i) {
    const std::string name = "D" + std::to_string(i);
    queues.push_back(layout(name.c_str(), 3));
  }
  const PhaseTableView v = PhaseTable(queues, false).view();
  for (std::int32_t phase = no_phase; phase <= 3; ++phase) {
    INFO("phase " << phase);
    const std::uint64_t mask = v.queues_running_in(phase);
    for (std::uint32_t q = 0; q < v.num_queues; ++q) REQUIRE(((mask >> q) & 1u) == (v.runs_in(q, phase) ? 1u : 0u));
  }
  REQUIRE(v.queues_running_in(no_phase) == 0b11);
  REQUIRE(v.queues_running_in(1) == 0b11);  // empty phase: only the phaseless queues
  REQUIRE(v.queues_running_in(3) == (~std::uint64_t(0) << 5 | 0b11));
}

TEST_CASE("phase table: bad layouts are rejected with the type's name", "[phases]") {
  REQUIRE_THROWS_WITH(PhaseTable({layout("Big", 0, 2048)}, false), Catch::Contains("'Big'") && Catch::Contains("1 to 1024"));
  REQUIRE_THROWS_WITH(PhaseTable({}, false), Catch::Contains("no task types"));
  REQUIRE_THROWS_WITH(PhaseTable({layout("A", 0)}, false).queue_index("Z"), Catch::Contains("has: A"));
}

#include <apiary/run_state.hpp>

TEST_CASE("phase controller: empty phases are skipped, cyclic graphs wrap, the end is detected", "[phases]") {
  PhaseTable t({layout("A", 0), layout("C", 2), layout("D", 3)}, true);  // phase 1 has no task type
  const PhaseTableView view = t.view();
  RunState state{};
  PhaseController pc{&state, &view};
  state.phase_word = PhaseWord{0, 0}.pack();
  state.pending_total.value = 5;
  state.pending[3].value = 5;  // tasks in phase 2 only
  pc.try_advance();
  REQUIRE(pc.current().phase == 2);
  REQUIRE(pc.current().epoch == 1);
  state.pending[3].value = 0;
  state.pending[1].value = 5;  // phase 0 again: a cyclic graph wraps around (skipping 3)
  pc.try_advance();
  REQUIRE(pc.current().phase == 0);
  REQUIRE(pc.current().epoch == 2);
  state.pending[1].value = 0;
  state.pending_total.value = 0;
  REQUIRE_FALSE(pc.on_idle([] { return 0; }));
  REQUIRE(pc.status() == RunStatus::finished);
}

TEST_CASE("phase controller: on_idle moves to the next phase in order, skips empty ones and waits for phaseless tasks",
          "[phases]") {
  PhaseTable t({layout("P", -1), layout("A", 0), layout("B", 1), layout("C", 2)}, true);
  const PhaseTableView view = t.view();
  RunState state{};
  PhaseController pc{&state, &view};
  auto idle = [&] { return pc.on_idle([] { return 0; }); };
  state.phase_word = PhaseWord{0, 7}.pack();
  state.pending_total.value = 3;
  state.pending[1].value = 1;  // phase 0 still has a task: stays
  state.pending[2].value = 2;
  REQUIRE(idle());
  REQUIRE(pc.current().phase == 0);
  state.pending[1].value = 0;
  state.pending[0].value = 1;  // a phaseless task may still spawn into phase 0: stays
  REQUIRE(idle());
  REQUIRE(pc.current().phase == 0);
  state.pending[0].value = 0;  // the next phase in order has work: one step
  REQUIRE(idle());
  REQUIRE(pc.current().phase == 1);
  REQUIRE(pc.current().epoch == 8);
  state.pending[2].value = 0;  // phase 2 is empty, phase 0 has work again: wraps past it
  state.pending[1].value = 2;
  REQUIRE(idle());
  REQUIRE(pc.current().phase == 0);
  REQUIRE(pc.current().epoch == 9);
  state.pending[1].value = 0;
  state.pending_total.value = 0;
  state.host_open = 1;  // nothing pending, host input open: goes on without deciding
  REQUIRE(idle());
  REQUIRE(pc.status() == RunStatus::running);
  state.host_open = 0;
  REQUIRE_FALSE(idle());
  REQUIRE(pc.status() == RunStatus::finished);
}

TEST_CASE("phase controller: on_idle hands its caller the phase word it saw begin, never a stopped one", "[phases]") {
  PhaseTable t({layout("P", -1), layout("A", 0), layout("B", 1), layout("C", 2)}, true);
  const PhaseTableView view = t.view();
  RunState state{};
  PhaseController pc{&state, &view};
  auto idle = [&](std::uint64_t& hint) { return pc.on_idle([] { return 0; }, &hint); };
  state.phase_word = PhaseWord{0, 7}.pack();
  state.pending_total.value = 2;
  state.pending[1].value = 1;  // phase 0 still has a task: no change, no hint
  state.pending[2].value = 1;
  std::uint64_t hint = 0;
  REQUIRE(idle(hint));
  REQUIRE(hint == 0);
  state.pending[1].value = 0;  // phase 1 begins: the hint is its word
  state.pending_total.value = 1;
  REQUIRE(idle(hint));
  REQUIRE(hint == PhaseWord{1, 8}.pack());
  REQUIRE(hint == load_relaxed(state.phase_word));
  // A step that read an older word loses its exchange to the change above: it returns the
  // word that change wrote.
  REQUIRE(pc.advance_live(PhaseWord{0, 7}.pack()) == PhaseWord{1, 8}.pack());
  // A step whose exchange fails on a stop returns the marked word, which on_idle never hands
  // on; a step that reads a marked word changes nothing.
  const std::uint64_t before = load_relaxed(state.phase_word);
  state.pending[2].value = 0;
  state.pending[3].value = 1;
  state.pending_total.value = 1;
  pc.stop();
  REQUIRE(PhaseWord::stopped(pc.advance_live(before)));
  hint = 0;
  REQUIRE_FALSE(idle(hint));  // the stop ends the run for the caller
  REQUIRE(hint == 0);
  REQUIRE(pc.current().phase == 1);
}

TEST_CASE("phase controller: on_idle in the last phase of an acyclic graph reports work left in an earlier one",
          "[phases]") {
  PhaseTable t({layout("A", 0), layout("B", 1)}, false);
  const PhaseTableView view = t.view();
  RunState state{};
  PhaseController pc{&state, &view};
  state.phase_word = PhaseWord{1, 1}.pack();
  state.pending_total.value = 1;
  state.pending[1].value = 1;  // a task of phase 0, which already ended
  pc.on_idle([] { return 0; });
  REQUIRE(pc.status() == RunStatus::failed);
  REQUIRE(state.error.code == std::uint32_t(ErrorCode::phase_already_ended));
  REQUIRE_FALSE(pc.on_idle([] { return 0; }));
}

TEST_CASE("phase controller: no phase change follows a stop, whenever the step read the phase word", "[phases][stop]") {
  // Phase 0 holds one running task (it stops, then its batch finishes); one task is queued in
  // the next phase in order (advance_live's exchange) or in the one after it (the ordered
  // step's exchange, skipping an empty phase). It must never run.
  PhaseTable t({layout("P", -1), layout("A", 0), layout("B", 1), layout("C", 2)}, true);
  const PhaseTableView view = t.view();
  RunState state{};
  PhaseController pc{&state, &view};
  const std::uint32_t queued = GENERATE(2u, 3u);
  INFO("queued in phase " << queued - 1);
  state.phase_word = PhaseWord{0, 5}.pack();
  pc.add_pending(1, 1);       // A, running
  pc.add_pending(queued, 1);  // B or C, queued
  const std::uint64_t before = load_relaxed(state.phase_word);  // an idle step's read before the stop
  pc.stop();
  pc.finish(1, 1);

  SECTION("a live step that read the phase word before the stop") { pc.advance_live(before); }
  SECTION("steps that read it after the stop") {
    pc.try_advance();
    pc.advance_live(load_relaxed(state.phase_word));
    IdleCounters alone;  // a controller that runs alone, had it missed the status
    alone.pending_total = 1;
    alone.work = std::uint64_t(1) << queued;
    alone.phase_word = load_relaxed(state.phase_word);
    std::uint64_t phase_after = 0;
    REQUIRE(pc.on_idle_alone(alone, phase_after));       // it read "running", so it goes on...
    REQUIRE(PhaseWord::unpack(phase_after).phase == 0);  // ...in the same phase
  }
  REQUIRE_FALSE(pc.on_idle([] { return 0; }));
  REQUIRE(pc.status() == RunStatus::stopped);
  REQUIRE(pc.current().phase == 0);  // no later phase began
  REQUIRE(pc.current().epoch == 5);  // the mark is not part of the epoch
  REQUIRE(PhaseWord::stopped(load_relaxed(state.phase_word)));
}

TEST_CASE("phase word: the epoch wraps within its 31 bits, never into the stop mark", "[phases]") {
  const PhaseWord last{3, PhaseWord::epoch_mask};
  REQUIRE(PhaseWord::unpack(last.pack()).epoch == PhaseWord::epoch_mask);
  const std::uint64_t wrapped = PhaseWord{4, last.epoch + 1}.pack();
  REQUIRE_FALSE(PhaseWord::stopped(wrapped));
  REQUIRE(PhaseWord::unpack(wrapped).epoch == 0);
  REQUIRE(PhaseWord::unpack(wrapped).phase == 4);
  REQUIRE(PhaseWord::unpack(PhaseWord{no_phase, 9}.pack() | PhaseWord::stop_mark).phase == no_phase);
  REQUIRE(PhaseWord::unpack(PhaseWord{no_phase, 9}.pack() | PhaseWord::stop_mark).epoch == 9);
}

TEST_CASE("phase controller: parked tasks with nothing pending end the run as a stall", "[phases]") {
  PhaseTable t({layout("A", 0)}, false);
  const PhaseTableView view = t.view();
  RunState state{};
  PhaseController pc{&state, &view};
  REQUIRE_FALSE(pc.on_idle([] { return 3; }));
  REQUIRE(pc.status() == RunStatus::failed);
  REQUIRE(state.error.code == static_cast<std::uint32_t>(ErrorCode::parked_without_producer));
  REQUIRE(state.error.detail == 3);
}
