// phase_rounds: a cyclic two-phase ping-pong with one task per phase. Ping (phase 0) spawns
// Pong (phase 1), Pong spawns the next Ping, for `cycles` cycles: every task starts a new phase,
// so the time per phase change is the scheduler's phase-change (TSK/PDC: round) latency.
// Two modes: `spawn` (ctx.spawn: the next task goes through its queue) and `next`
// (ctx.spawn_next: a continuation, which under the megakernel waits in its spawner's block for
// its phase, phase_wait.hpp; elsewhere it is queued as by spawn).
#include "bench_tasks.cuh"

namespace apiary_bench {
namespace {

struct PingItem {
  std::uint32_t left;  // cycles still to run
};
template <bool Next>
struct Ping;
template <bool Next>
struct Pong {
  using Item = PingItem;
  static constexpr unsigned threads = 32;
  static constexpr unsigned shared_bytes = 0;
  static constexpr const char* name = "Pong";
  template <class Ctx>
  __device__ void operator()(apiary::Worker w, const Item& item, Ctx& ctx) const;
};
// The next task of the ping-pong, spawned or as a continuation.
template <bool Next, class U, class Ctx>
__device__ void pass(Ctx& ctx, const PingItem& item) {
  if constexpr (Next) ctx.template spawn_next<U>(item);
  else ctx.template spawn<U>(item);
}
template <bool Next>
struct Ping {
  using Item = PingItem;
  static constexpr unsigned threads = 32;
  static constexpr unsigned shared_bytes = 0;
  static constexpr const char* name = "Ping";
  template <class Ctx>
  __device__ void operator()(apiary::Worker w, const Item& item, Ctx& ctx) const {
    if (w.rank() == 0) pass<Next, Pong<Next>>(ctx, item);
  }
};
template <bool Next>
template <class Ctx>
__device__ void Pong<Next>::operator()(apiary::Worker w, const Item& item, Ctx& ctx) const {
  if (w.rank() == 0 && item.left > 1) pass<Next, Ping<Next>>(ctx, PingItem{item.left - 1});
}

template <bool Next>
using PingPongGraph = apiary::CyclicPhaseQueue<apiary::Phase<Ping<Next>>, apiary::Phase<Pong<Next>>>;

template <bool Next>
void run_phase_rounds(const Options& o, const Sink& sink) {
  const std::uint32_t cycles = o.quick ? 500 : 5000;
  apiary::Config config = bench_config(o);
  config.queue_capacity = 1024;
  apiary::Runtime<PingPongGraph<Next>> rt{config};
  Measurement m;
  m.benchmark = "phase_rounds";
  m.config = {Field::str("mode", Next ? "next" : "spawn"), Field::num("cycles", cycles), Field::num("worker_size", 32),
              Field::num("block_threads", o.block_threads)};
  m.tasks = 2ull * cycles;
  time_runs(
      rt, o.repeats, m.benchmark, [&](auto& r) { r.template seed<Ping<Next>>(std::vector<PingItem>{{cycles}}); },
      [&](const apiary::Report& report) {
        std::string problem = expect_executed(report, Ping<Next>::name, cycles);
        if (problem.empty()) problem = expect_executed(report, Pong<Next>::name, cycles);
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

}  // namespace

void bench_phase_rounds(const Options& o, const Sink& sink) {
  run_phase_rounds<false>(o, sink);
  run_phase_rounds<true>(o, sink);
}

}  // namespace apiary_bench
