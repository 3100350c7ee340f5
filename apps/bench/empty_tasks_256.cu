// empty_tasks for worker size 256 (see empty_tasks.cuh).
#include "empty_tasks.cuh"

namespace apiary_bench {
void bench_empty_tasks_256(const Options& o, const Sink& sink) { bench_empty_tasks<256>(o, sink); }
}  // namespace apiary_bench
