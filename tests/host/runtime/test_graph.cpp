// The C++ front end produces the same phase table as data (compile-time checks plus layout).
#include <apiary/graph.hpp>

#include <catch2/catch.hpp>

using namespace apiary;

namespace {
struct Leg {
  struct Item { int id; };
  static constexpr unsigned threads = 32;
  static constexpr unsigned shared_bytes = 0;
  static constexpr const char* name = "CreateLeg";
};
struct Top {
  struct Item { int id; float w; };
  static constexpr unsigned threads = 64;
  static constexpr unsigned shared_bytes = 128;
  static constexpr const char* name = "CreateTabletop";
};
struct Assemble {
  struct Item { int table; };
  static constexpr unsigned threads = 256;
  static constexpr unsigned shared_bytes = 0;
  static constexpr const char* name = "AssembleTable";
};
struct Log {
  struct Item { long x; };
  static constexpr unsigned threads = 1;
  static constexpr unsigned shared_bytes = 0;
  static constexpr const char* name = "Log";
};
struct NotATask {
  static constexpr unsigned threads = 2000;
};

using Table = PhaseQueue<Phaseless<Log>, Phase<Leg, Top>, Phase<Assemble>>;
static_assert(TaskType<Leg> && TaskType<Assemble>);
static_assert(!TaskType<NotATask>);
static_assert(GraphTraits<Table>::queue_of<Log> == 0);
static_assert(GraphTraits<Table>::queue_of<Top> == 2);
static_assert(GraphTraits<Table>::queue_of<Assemble> == 3);
static_assert(!GraphTraits<Table>::cyclic);
static_assert(GraphTraits<CyclicPhaseQueue<Phase<Leg>, Phase<Top>>>::cyclic);
}  // namespace

TEST_CASE("graph: PhaseQueue<...> yields the phase table layout", "[graph]") {
  auto layouts = GraphTraits<Table>::layouts();
  for (auto& q : layouts) q.capacity = 8;
  PhaseTable t(layouts, GraphTraits<Table>::cyclic);
  REQUIRE(t.num_queues() == 4);
  REQUIRE(t.queues()[0].phase == no_phase);
  REQUIRE(t.queues()[1].name == std::string("CreateLeg"));
  REQUIRE(t.queues()[2].shared_bytes == 128);
  REQUIRE(t.queues()[2].item_size == sizeof(Top::Item));
  REQUIRE(t.queues()[3].phase == 1);
  REQUIRE(t.queues()[3].worker_size == 256);
  REQUIRE(t.queues()[3].code == 3);
  REQUIRE(t.phases()[0].begin == 1);
  REQUIRE(t.phases()[0].end == 3);
}
