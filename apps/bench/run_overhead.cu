// run_overhead: what one run costs the host from the call to its report, with one empty
// task in it: seed<T>(1 item) + run(), host wall clock, per scheduler. A short graph (a
// solve of a few iterations, a small tree) pays this on every run, on top of its kernels.
// Compared with the least a host can do to run anything on the GPU and know it ended: one
// empty kernel launch and a stream synchronisation (`launch_wait`, measured in the same
// process, baselines group). `kernel_us` is the median Report::wall_ms of the runs: the
// scheduler's kernels alone, without the run's start and end.
#include "bench_tasks.cuh"

#include <chrono>

namespace apiary_bench {

void bench_run_overhead(const Options& o, const Sink& sink) {
  using Task = Empty<32>;
  const std::uint32_t runs = o.quick ? 100 : 1000;  // per repeat
  apiary::Config config = bench_config(o);
  apiary::Runtime<EmptyGraph<32>> rt{config};
  const std::vector<Task::Item> item = indexed_items<Task::Item>(1);
  Measurement m;
  m.benchmark = "run_overhead";
  m.config = {Field::num("worker_size", 32), Field::num("runs", runs), Field::str("clock", "host")};
  m.tasks = runs;  // ns_per_task: ns per run
  m.baseline = "launch_wait";
  auto one_run = [&] {
    rt.seed<Task>(item);
    const apiary::Report report = rt.run();
    if (!report.ok()) throw Failure(m.benchmark, "run did not finish:\n" + report.format());
    if (const std::string problem = expect_executed(report, Task::name, 1); !problem.empty())
      throw Failure(m.benchmark, problem + "\n" + report.format());
    return report;
  };
  std::vector<double> kernel_ms;
  for (int r = -1; r < o.repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    apiary::Report last;
    for (std::uint32_t i = 0; i < runs; ++i) {
      last = one_run();
      if (r >= 0) kernel_ms.push_back(last.wall_ms);
    }
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    m.launch = last.launch;
    if (r >= 0) m.ms.push_back(ms);  // the first pass warms up (module load, first launches)
  }
  m.extra = {Field::num("kernel_us", median(kernel_ms) * 1e3)};
  sink(m);
}

}  // namespace apiary_bench
