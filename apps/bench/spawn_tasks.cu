// empty_tasks_spawned: empty tasks made on the device. Host-seeded roots (worker size 32)
// each spawn `fan_out` empty children of worker size 32; every lane of a root spawns
// fan_out / 32 of them, so each spawn call of the warp reserves 32 queue slots with one
// atomic (the context's warp-aggregated enqueue). Measures spawn + dequeue + run together.
#include "bench_tasks.cuh"

namespace apiary_bench {
namespace {

using Child = Empty<32>;

struct Root {
  struct Item {
    std::uint32_t index;          // root number
    std::uint32_t per_lane;       // children each lane spawns
  };
  static constexpr unsigned threads = 32;
  static constexpr unsigned shared_bytes = 0;
  static constexpr const char* name = "Root";
  template <class Ctx>
  __device__ void operator()(apiary::Worker w, const Item& item, Ctx& ctx) const {
    const std::uint32_t first = (item.index * 32u + w.rank()) * item.per_lane;
    for (std::uint32_t j = 0; j < item.per_lane; ++j) ctx.template spawn<Child>(Child::Item{first + j});
  }
};

using SpawnGraph = apiary::PhaseQueue<apiary::Phaseless<Root, Child>>;

void bench_fan_out(const Options& o, const Sink& sink, std::uint32_t fan_out, std::uint32_t block_threads) {
  const std::uint64_t children = o.quick ? (1ull << 20) : (1ull << 24);
  const std::uint64_t roots = children / fan_out;
  std::vector<Root::Item> items(roots);
  for (std::uint64_t i = 0; i < roots; ++i) items[i] = Root::Item{std::uint32_t(i), fan_out / 32};

  apiary::Config config = bench_config(o);
  config.queue_capacities = {{Root::name, roots}, {Child::name, children}};  // room for all at once
  config.megakernel.block_threads = block_threads;
  apiary::Runtime<SpawnGraph> rt{config};
  Measurement m;
  m.benchmark = "empty_tasks_spawned";
  m.config = {Field::num("worker_size", 32), Field::num("block_threads", block_threads),
              Field::str("source", "device"), Field::num("fan_out", fan_out), Field::num("roots", double(roots))};
  m.tasks = roots + children;  // every task the run executes
  time_runs(
      rt, o.repeats, m.benchmark, [&](auto& r) { r.template seed<Root>(items); },
      [&](const apiary::Report& report) {
        std::string problem = expect_executed(report, Root::name, roots);
        return problem.empty() ? expect_executed(report, Child::name, children) : problem;
      },
      m);
  const double seconds = median(m.ms) * 1e-3;
  m.extra = {Field::num("children", double(children)), Field::num("children_per_second", double(children) / seconds)};
  sink(m);
}

}  // namespace

void bench_spawned_tasks(const Options& o, const Sink& sink) {
  for (const std::uint32_t fan_out : {32u, 256u})
    for (const std::uint32_t block_threads : block_threads_for(o)) bench_fan_out(o, sink, fan_out, block_threads);
}

}  // namespace apiary_bench
