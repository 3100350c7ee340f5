// empty_tasks: host-seeded empty tasks of one worker size, for each swept megakernel block
// size. Instantiated once per worker size (empty_tasks_<size>.cu) so nvcc builds them in
// parallel.
#pragma once

#include "bench_tasks.cuh"

namespace apiary_bench {

template <unsigned Threads>
void bench_empty_tasks(const Options& o, const Sink& sink) {
  using Task = Empty<Threads>;
  const std::uint64_t n = o.quick ? (1ull << 20) : (1ull << 24);
  const std::vector<typename Task::Item> items = indexed_items<typename Task::Item>(n);
  for (const std::uint32_t block_threads : block_threads_for(o)) {
    if (block_threads != 0 && block_threads < Threads) continue;
    apiary::Config config = bench_config(o);
    config.queue_capacity = n;  // every task is queued before the run starts
    config.megakernel.block_threads = block_threads;
    apiary::Runtime<EmptyGraph<Threads>> rt{config};
    Measurement m;
    m.benchmark = "empty_tasks";
    m.config = {Field::num("worker_size", Threads), Field::num("block_threads", block_threads),
                Field::str("source", "host")};
    m.tasks = n;
    time_runs(
        rt, o.repeats, m.benchmark, [&](auto& r) { r.template seed<Task>(items); },
        [&](const apiary::Report& report) { return expect_executed(report, Task::name, n); }, m);
    sink(m);
  }
}

}  // namespace apiary_bench
