// phase_rounds: a cyclic two-phase ping-pong with one task per phase. Ping (phase 0) spawns
// Pong (phase 1), Pong spawns the next Ping, for `cycles` cycles: every task starts a new phase,
// so the time per phase change is the scheduler's phase-change (TSK/PDC: round) latency.
#include "bench_tasks.cuh"

namespace apiary_bench {
namespace {

struct PingItem {
  std::uint32_t left;  // cycles still to run
};
struct Ping;
struct Pong {
  using Item = PingItem;
  static constexpr unsigned threads = 32;
  static constexpr unsigned shared_bytes = 0;
  static constexpr const char* name = "Pong";
  template <class Ctx>
  __device__ void operator()(apiary::Worker w, const Item& item, Ctx& ctx) const;
};
struct Ping {
  using Item = PingItem;
  static constexpr unsigned threads = 32;
  static constexpr unsigned shared_bytes = 0;
  static constexpr const char* name = "Ping";
  template <class Ctx>
  __device__ void operator()(apiary::Worker w, const Item& item, Ctx& ctx) const {
    if (w.rank() == 0) ctx.template spawn<Pong>(item);
  }
};
template <class Ctx>
__device__ void Pong::operator()(apiary::Worker w, const Item& item, Ctx& ctx) const {
  if (w.rank() == 0 && item.left > 1) ctx.template spawn<Ping>(PingItem{item.left - 1});
}

using PingPongGraph = apiary::CyclicPhaseQueue<apiary::Phase<Ping>, apiary::Phase<Pong>>;

}  // namespace

void bench_phase_rounds(const Options& o, const Sink& sink) {
  const std::uint32_t cycles = o.quick ? 500 : 5000;
  apiary::Config config = bench_config(o);
  config.queue_capacity = 1024;
  apiary::Runtime<PingPongGraph> rt{config};
  Measurement m;
  m.benchmark = "phase_rounds";
  m.config = {Field::num("cycles", cycles), Field::num("worker_size", 32), Field::num("block_threads", o.block_threads)};
  m.tasks = 2ull * cycles;
  time_runs(
      rt, o.repeats, m.benchmark, [&](auto& r) { r.template seed<Ping>(std::vector<PingItem>{{cycles}}); },
      [&](const apiary::Report& report) {
        std::string problem = expect_executed(report, Ping::name, cycles);
        if (problem.empty()) problem = expect_executed(report, Pong::name, cycles);
        if (problem.empty() && report.phase_changes != 2 * cycles - 1)
          problem = "expected " + std::to_string(2 * cycles - 1) + " phase changes, saw " +
                    std::to_string(report.phase_changes);
        return problem.empty() ? expect_clean(report) : problem;
      },
      m);
  const double ms = median(m.ms);
  m.extra = {Field::num("phase_changes", 2.0 * cycles - 1), Field::num("us_per_phase_change", ms * 1e3 / (2.0 * cycles - 1))};
  m.baseline = "none";
  sink(m);
}

}  // namespace apiary_bench
