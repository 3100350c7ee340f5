// The idle step from counters read at once (PhaseController::on_idle_alone, the timesliced
// graph mode's control step) against on_idle, which reads them one after the other: on the
// same quiescent run state both must decide alike (go on or not, phase, status, error) for
// every kind of graph (no phases, phases, cyclic phases) and state (work in any phase or none,
// host input open, parked tasks, a raised error, a run that already ended). on_idle takes the
// phase change in fewer memory round trips where the next phase in order has work and falls
// back to ordered reads otherwise; every such path is covered here.
#include <apiary/run_state.hpp>

#include <catch2/catch.hpp>

#include <cstring>
#include <random>

using namespace apiary;

namespace {

struct Case {
  RunState state{};
  PhaseTableView table{};
  std::int64_t parked = 0;
};

Case random_case(std::mt19937_64& rng) {
  Case c;
  auto pick = [&](std::uint64_t n) { return std::uniform_int_distribution<std::uint64_t>(0, n - 1)(rng); };
  c.table.num_phases = std::uint32_t(pick(max_phases + 1) < 4 ? pick(max_phases + 1) : pick(6));
  c.table.cyclic = pick(2) == 1;
  // Slot 0 counts phaseless tasks, so it is non-zero only where the graph has phaseless queues
  // (on_idle reads it only then).
  if (pick(2) == 1) c.table.phaseless = QueueRange{0, 1};
  std::uint64_t total = 0;
  for (std::uint32_t s = 0; s <= c.table.num_phases; ++s) {
    const bool may_count = s != 0 || c.table.phaseless.size() != 0;
    c.state.pending[s].value = may_count && pick(3) == 0 ? pick(5) : 0;  // mostly empty phases
    total += c.state.pending[s].value;
  }
  // pending_total is the sum while the run is consistent; a few cases disagree on purpose.
  c.state.pending_total.value = pick(10) == 0 ? pick(3) : total;
  const std::int32_t phase =
      c.table.num_phases == 0 || pick(8) == 0 ? no_phase : std::int32_t(pick(c.table.num_phases));
  c.state.phase_word = PhaseWord{phase, std::uint32_t(pick(1000))}.pack();
  c.state.status = pick(6) == 0 ? std::uint32_t(pick(5)) : 0;
  c.state.error.code = pick(10) == 0 ? std::uint32_t(1 + pick(3)) : 0;
  c.state.host_open = pick(4) == 0 ? 1u : 0u;
  c.parked = pick(4) == 0 ? std::int64_t(pick(4)) : 0;
  return c;
}

IdleCounters read_at_once(RunState& s, std::uint32_t num_phases, std::int64_t parked) {
  IdleCounters c;
  c.status_word = s.status;
  c.error_code = s.error.code;
  c.host_open = s.host_open;
  c.pending_total = s.pending_total.value;
  c.phase_word = s.phase_word;
  c.parked = parked;
  for (std::uint32_t slot = 0; slot <= num_phases; ++slot)
    if (s.pending[slot].value != 0) c.work |= std::uint64_t(1) << slot;
  return c;
}

}  // namespace

TEST_CASE("the idle step from counters read at once decides as on_idle", "[phase][idle]") {
  std::mt19937_64 rng(Catch::rngSeed() + 20261126);
  std::uint64_t went_on = 0, advanced = 0, ended = 0, failed = 0;
  for (int i = 0; i < 200000; ++i) {
    Case one = random_case(rng);
    Case other = one;
    const bool live = PhaseController{&one.state, &one.table}.on_idle([&] { return one.parked; });
    std::uint64_t phase_after = 0;
    const IdleCounters counters = read_at_once(other.state, other.table.num_phases, other.parked);
    const bool at_once = PhaseController{&other.state, &other.table}.on_idle_alone(counters, phase_after);
    INFO("case " << i << ": phases " << one.table.num_phases << (one.table.cyclic ? " cyclic" : "")
                 << ", phase word " << counters.phase_word << ", status " << counters.status_word << ", error "
                 << counters.error_code << ", host open " << counters.host_open << ", total "
                 << counters.pending_total << ", work " << counters.work << ", parked " << counters.parked);
    REQUIRE(at_once == live);
    REQUIRE(other.state.phase_word == one.state.phase_word);
    REQUIRE(phase_after == other.state.phase_word);
    REQUIRE(other.state.status == one.state.status);
    REQUIRE(std::memcmp(&other.state.error, &one.state.error, sizeof(ErrorWord)) == 0);
    went_on += live;
    advanced += one.state.phase_word != counters.phase_word;
    ended += one.state.status == std::uint32_t(RunStatus::finished) && counters.status_word == 0;
    failed += one.state.status == std::uint32_t(RunStatus::failed) && counters.status_word == 0;
  }
  // Every branch was taken many times.
  CHECK(went_on > 10000);
  CHECK(advanced > 10000);
  CHECK(ended > 1000);
  CHECK(failed > 1000);
}
