// fan_tree: fan-out/fan-in trees of Fork and Leaf tasks (fan_tree_tasks.cuh).
//
//   latency     one tree (F = 32, D levels): nothing else runs, so the time per level is what
//               one fork -> leaves -> resolves -> release -> next fork round trip costs;
//   throughput  many independent trees at once (F = 32 and 256, D = 16): tasks per second
//               with the dependency machinery busy.
#include "bench_tasks.cuh"
#include "fan_tree_tasks.cuh"

namespace apiary_bench {
namespace {

using fan_tree::FanGraph;
using fan_tree::Fork;
using fan_tree::Leaf;

void bench_trees(const Options& o, const Sink& sink, const char* kind, std::uint32_t trees, std::uint32_t fan_out,
                 std::uint32_t depth) {
  apiary::Config config = bench_config(o);
  config.queue_capacities = {{Fork::name, std::max<std::uint64_t>(trees, 1024)},
                             {Leaf::name, std::max<std::uint64_t>(std::uint64_t(trees) * fan_out, 1024)}};
  config.dependency_capacity = trees * depth;
  // Half full at most: parking probes the waiting storage linearly from a hashed start.
  config.waiting_storage_capacity = std::max<std::uint32_t>(2 * trees, 1024);
  apiary::Runtime<FanGraph> rt{config};

  std::vector<Fork::Item> roots(trees);
  for (std::uint32_t t = 0; t < trees; ++t) roots[t] = Fork::Item{t, 0, depth, fan_out};
  const std::uint64_t forks = std::uint64_t(trees) * (depth + 1);
  const std::uint64_t leaves = std::uint64_t(trees) * depth * fan_out;

  Measurement m;
  m.benchmark = "fan_tree";
  m.config = {Field::str("kind", kind), Field::num("trees", trees), Field::num("fan_out", fan_out),
              Field::num("depth", depth), Field::num("worker_size", 32), Field::num("block_threads", o.block_threads)};
  m.tasks = forks + leaves;
  time_runs(
      rt, o.repeats, m.benchmark, [&](auto& r) { r.template seed<Fork>(roots); },
      [&](const apiary::Report& report) {
        std::string problem = expect_executed(report, Fork::name, forks);
        if (problem.empty()) problem = expect_executed(report, Leaf::name, leaves);
        return problem.empty() ? expect_clean(report) : problem;
      },
      m);
  const double ms = median(m.ms);
  m.extra = {Field::num("levels", depth), Field::num("us_per_level", ms * 1e3 / depth),
             Field::num("joins_per_second", double(depth) * trees / (ms * 1e-3))};
  m.baseline = "none";
  sink(m);
}

}  // namespace

void bench_fan_tree(const Options& o, const Sink& sink) {
  bench_trees(o, sink, "latency", 1, 32, o.quick ? 200 : 2000);
  bench_trees(o, sink, "throughput", o.quick ? 1024 : 8192, 32, 16);
  bench_trees(o, sink, "throughput", o.quick ? 128 : 1024, 256, 16);
}

}  // namespace apiary_bench
