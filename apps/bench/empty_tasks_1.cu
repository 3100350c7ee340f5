// empty_tasks for worker size 1 (see empty_tasks.cuh).
#include "empty_tasks.cuh"

namespace apiary_bench {
void bench_empty_tasks_1(const Options& o, const Sink& sink) { bench_empty_tasks<1>(o, sink); }
}  // namespace apiary_bench
