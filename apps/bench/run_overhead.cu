// run_overhead: what one run costs the host from the call to its report, with one empty
// task in it: seed<T>(1 item) + run(), host wall clock, per scheduler. A short graph (a
// solve of a few iterations, a small tree) pays this on every run, on top of its kernels.
// Compared with the least a host can do to run anything on the GPU and know it ended: one
// empty kernel launch and a stream synchronisation (`launch_wait`, measured in the same
// process, baselines group). `kernel_us` is the median Report::wall_ms of the runs: the
// scheduler's kernels alone, without the run's start and end.
#include "bench_tasks.cuh"

namespace apiary_bench {

void bench_run_overhead(const Options& o, const Sink& sink) {
  using Task = Empty<32>;
  const std::uint32_t runs = o.quick ? 100 : 1000;  // per repeat
  apiary::Runtime<EmptyGraph<32>> rt{bench_config(o)};
  const std::vector<Task::Item> item = indexed_items<Task::Item>(1);
  Measurement m;
  m.benchmark = "run_overhead";
  m.config = {Field::num("worker_size", 32), Field::num("runs", runs), Field::str("clock", "host")};
  m.tasks = runs;  // ns_per_task: ns per run
  m.baseline = "launch_wait";
  std::vector<double> kernel_ms;  // every run's, the warm-up pass's included (the median hardly moves)
  m.ms = host_timed(o.repeats, [&] {
    for (std::uint32_t i = 0; i < runs; ++i) {
      rt.seed<Task>(item);
      const apiary::Report report =
          checked_run(rt, m.benchmark, [](const apiary::Report& r) { return expect_executed(r, Task::name, 1); });
      kernel_ms.push_back(report.wall_ms);
      m.launch = report.launch;
    }
  });
  m.extra = {Field::num("kernel_us", median(kernel_ms) * 1e3)};
  sink(m);
}

}  // namespace apiary_bench
