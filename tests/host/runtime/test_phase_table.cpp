#include <apiary/error.hpp>
#include <apiary/phase_table.hpp>

#include <catch2/catch.hpp>

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

TEST_CASE("phase table: bad layouts are rejected with the type's name", "[phases]") {
  REQUIRE_THROWS_WITH(PhaseTable({layout("Big", 0, 2048)}, false), Catch::Contains("'Big'") && Catch::Contains("1 to 1024"));
  REQUIRE_THROWS_WITH(PhaseTable({}, false), Catch::Contains("no task types"));
  REQUIRE_THROWS_WITH(PhaseTable({layout("A", 0)}, false).queue_index("Z"), Catch::Contains("has: A"));
}
