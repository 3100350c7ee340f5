// GPU tests of the runtime and the megakernel scheduler: every result is checked against a
// CPU reference; failures must end with a clear error, never a hang.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "../../../apps/bench/fan_tree_tasks.cuh"
#include "../../../apps/examples/table.cuh"
#include "gpu_test.hpp"

#include <apiary/apiary.cuh>
#include <apiary/device_buffer.hpp>

#include <cuda/std/optional>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <limits>
#include <random>
#include <thread>

using namespace apiary;

namespace runtime_gpu_tests {

template <class T>
std::vector<T> download(const DeviceBuffer<T>& d) {
  std::vector<T> h(d.size());
  APIARY_CUDA_CHECK(cudaMemcpy(h.data(), d.get(), d.bytes(), cudaMemcpyDeviceToHost));
  return h;
}
template <class T>
void upload(DeviceBuffer<T>& d, const std::vector<T>& h) {
  APIARY_CUDA_CHECK(cudaMemcpy(d.get(), h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
}

// Every graph runs under every scheduler: the test case repeats once per scheduler.
Scheduler each_scheduler() {
  const Scheduler s = GENERATE(Scheduler::megakernel, Scheduler::timesliced, Scheduler::timesliced_graph,
                               Scheduler::device_controller, Scheduler::device_controller_wave);
  UNSCOPED_INFO("scheduler: " << to_string(s));
  return s;
}

// ---- the thesis's table example ------------------------------------------------------

template <class Graph, bool Individual>
void check_tables(std::uint32_t tables, Scheduler scheduler) {
  using namespace table_example;
  DeviceBuffer<float> parts(std::size_t(tables) * parts_per_table), result(tables);
  upload(parts, std::vector<float>(parts.size(), std::numeric_limits<float>::quiet_NaN()));
  upload(result, std::vector<float>(tables, std::numeric_limits<float>::quiet_NaN()));
  Config config;
  config.trace = true;
  config.dependency_capacity = tables;
  Runtime<Graph> rt{config};
  std::vector<PartJob> tops(tables);
  for (std::uint32_t t = 0; t < tables; ++t) tops[t] = PartJob{Workshop{parts.get(), result.get()}, t, legs_per_table};
  rt.template seed<CreateTabletop<Individual>>(tops);
  const Report report = rt.run(scheduler);
  INFO(report.format());
  REQUIRE(report.ok());
  REQUIRE(report.executed("CreateLeg") == 4ull * tables);
  REQUIRE(report.executed("AssembleTable") == tables);
  REQUIRE(download(result) == reference_tables(tables));
  const TraceCheckResult check = check_trace(rt.trace());
  INFO(format(check));
  REQUIRE(check.ok);
  REQUIRE(rt.trace().tasks.size() == 6ull * tables);
}

TEST_CASE("table example with phases matches the CPU reference and its trace checks", "[gpu][table]") {
  check_tables<table_example::PhasedGraph, false>(5000, each_scheduler());
}
TEST_CASE("table example with individual dependencies matches the CPU reference and its trace checks",
          "[gpu][table]") {
  check_tables<table_example::DependencyGraph, true>(5000, each_scheduler());
}

// ---- worker sizes: barriers, ranks, shared memory --------------------------------------

struct SumJob {
  std::uint32_t index;
  std::uint32_t seed;
  std::uint32_t* out;
};

// Tree reduction over the worker's threads in shared memory: needs a correct per-worker
// barrier on every round.
template <unsigned N>
struct SumTask {
  using Item = SumJob;
  static constexpr unsigned threads = N;
  static constexpr unsigned shared_bytes = N * sizeof(std::uint32_t);
  static constexpr const char* name = N == 1 ? "Sum1" : N == 7 ? "Sum7" : N == 12 ? "Sum12" : N == 32 ? "Sum32"
                                     : N == 48 ? "Sum48" : N == 96 ? "Sum96" : N == 256 ? "Sum256" : "Sum1024";
  template <class Ctx>
  __device__ void operator()(Worker w, const Item& job, Ctx&) const {
    std::uint32_t* s = w.shared<std::uint32_t>();
    s[w.rank()] = job.seed * 2654435761u + w.rank() * 40503u + (w.size() == N ? 0u : 1000000u);
    w.sync();
    for (std::uint32_t stride = 1; stride < N; stride *= 2) {
      std::uint32_t add = 0;
      if (w.rank() % (2 * stride) == 0 && w.rank() + stride < N) add = s[w.rank() + stride];
      w.sync();
      s[w.rank()] += add;
      w.sync();
    }
    if (w.rank() == 0) job.out[job.index] = s[0];
  }
};

std::uint32_t sum_reference(std::uint32_t seed, unsigned n) {
  std::uint32_t total = 0;
  for (unsigned r = 0; r < n; ++r) total += seed * 2654435761u + r * 40503u;
  return total;
}

using SumGraph = PhaseQueue<Phaseless<SumTask<1>, SumTask<7>, SumTask<12>, SumTask<32>, SumTask<48>, SumTask<96>,
                                      SumTask<256>, SumTask<1024>>>;

template <unsigned N>
void seed_sums(Runtime<SumGraph>& rt, std::uint32_t* out, std::uint32_t base, std::uint32_t count,
               std::vector<std::uint32_t>& want, std::mt19937& rng) {
  std::vector<SumJob> jobs(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    jobs[i] = SumJob{base + i, static_cast<std::uint32_t>(rng()), out};
    want[base + i] = sum_reference(jobs[i].seed, N);
  }
  rt.seed<SumTask<N>>(jobs);
}

TEST_CASE("every worker size gets a correct barrier, rank space and shared memory", "[gpu][worker]") {
  const Scheduler scheduler = each_scheduler();
  const std::uint32_t per_type = 3000;
  DeviceBuffer<std::uint32_t> out(8 * per_type);
  upload(out, std::vector<std::uint32_t>(out.size(), 0xdeadbeefu));
  std::vector<std::uint32_t> want(out.size());
  std::mt19937 rng(Catch::rngSeed());
  Runtime<SumGraph> rt{Config{}};
  seed_sums<1>(rt, out.get(), 0 * per_type, per_type, want, rng);
  seed_sums<7>(rt, out.get(), 1 * per_type, per_type, want, rng);
  seed_sums<12>(rt, out.get(), 2 * per_type, per_type, want, rng);
  seed_sums<32>(rt, out.get(), 3 * per_type, per_type, want, rng);
  seed_sums<48>(rt, out.get(), 4 * per_type, per_type, want, rng);
  seed_sums<96>(rt, out.get(), 5 * per_type, per_type, want, rng);
  seed_sums<256>(rt, out.get(), 6 * per_type, per_type, want, rng);
  seed_sums<1024>(rt, out.get(), 7 * per_type, per_type, want, rng);
  const Report report = rt.run(scheduler);
  INFO(report.format());
  REQUIRE(report.total_executed == 8ull * per_type);
  REQUIRE(download(out) == want);
}

TEST_CASE("resident_workers is one full wave: the grid the scheduler launches times the task's worker slots",
          "[gpu][launch]") {
  const Scheduler scheduler = each_scheduler();
  const std::uint32_t cap = GENERATE(0u, 1u);  // megakernel.blocks_per_sm: automatic, or one block per SM
  Config config;
  config.megakernel.blocks_per_sm = cap;
  const ResidentBlocks plan = Runtime<SumGraph>::resident_blocks(config, scheduler);
  const DeviceInfo device = query_device(config.device);
  REQUIRE(plan.sm_count == device.sm_count);
  REQUIRE(plan.per_sm >= 1);
  if (cap != 0 && scheduler == Scheduler::megakernel) REQUIRE(plan.per_sm == cap);
  // SumGraph's widest worker has 1024 threads, so a block has 1024 threads: one Sum1024
  // worker, four Sum256 workers, 32 warp-sized ones.
  REQUIRE(plan.layout.block_threads == 1024);
  REQUIRE(Runtime<SumGraph>::resident_workers<SumTask<1024>>(config, scheduler) == plan.blocks());
  REQUIRE(Runtime<SumGraph>::resident_workers<SumTask<256>>(config, scheduler) == 4ull * plan.blocks());
  REQUIRE(Runtime<SumGraph>::resident_workers<SumTask<32>>(config, scheduler) == 32ull * plan.blocks());

  // The run launches exactly that grid (the largest grid, for the per-queue kernels).
  const std::uint64_t wave = Runtime<SumGraph>::resident_workers<SumTask<256>>(config, scheduler);
  DeviceBuffer<std::uint32_t> out(wave);
  std::vector<std::uint32_t> want(wave);
  std::mt19937 rng(Catch::rngSeed());
  Runtime<SumGraph> rt{config};
  seed_sums<256>(rt, out.get(), 0, static_cast<std::uint32_t>(wave), want, rng);
  const Report report = rt.run(scheduler);
  INFO(report.format());
  REQUIRE(report.ok());
  REQUIRE(download(out) == want);
  REQUIRE(report.launch.find(": " + std::to_string(plan.blocks()) + " blocks x 1024 threads") != std::string::npos);
}

// The megakernel asks for the shared memory its blocks take and leaves the rest of the SM to L1
// (fit_shared_carveout, in the plan; a run sets it again); the preference stays with the kernel,
// and a plan made after a run with fewer blocks per SM must still count the blocks the device
// holds.
TEST_CASE("the megakernel's carveout fits its blocks per SM, and a later plan counts the device's occupancy",
          "[gpu][launch]") {
  const ResidentBlocks full = Runtime<SumGraph>::resident_blocks(Config{}, Scheduler::megakernel);
  Config capped_config;
  capped_config.megakernel.blocks_per_sm = 1;
  const ResidentBlocks capped = Runtime<SumGraph>::resident_blocks(capped_config, Scheduler::megakernel);
  REQUIRE(capped.per_sm == 1);

  const std::uint64_t wave = Runtime<SumGraph>::resident_workers<SumTask<256>>(capped_config, Scheduler::megakernel);
  DeviceBuffer<std::uint32_t> out(wave);
  std::vector<std::uint32_t> want(wave);
  std::mt19937 rng(Catch::rngSeed());
  Runtime<SumGraph> rt{capped_config};
  seed_sums<256>(rt, out.get(), 0, static_cast<std::uint32_t>(wave), want, rng);
  const Report report = rt.run(Scheduler::megakernel);
  INFO(report.format());
  REQUIRE(report.ok());
  REQUIRE(download(out) == want);

  cudaFuncAttributes attributes{};
  APIARY_CUDA_CHECK(cudaFuncGetAttributes(&attributes, detail::megakernel_entry<SumGraph>));
  const DeviceInfo device = query_device(0);
  const int fitted = carveout_percent_for(
      resident_shared_bytes(1, attributes.sharedSizeBytes + capped.shared, device.reserved_shared_per_block),
      device.max_shared_per_sm);
  CHECK(attributes.preferredShmemCarveout == fitted);
  CHECK(capped.shared_carveout == fitted);
  REQUIRE(fitted < 100);  // one block of this graph leaves the SM room for L1

  const ResidentBlocks again = Runtime<SumGraph>::resident_blocks(Config{}, Scheduler::megakernel);
  REQUIRE(again.per_sm == full.per_sm);
  REQUIRE(again.shared == full.shared);
  APIARY_CUDA_CHECK(cudaFuncGetAttributes(&attributes, detail::megakernel_entry<SumGraph>));
  CHECK(attributes.preferredShmemCarveout == again.shared_carveout);

  // The runtime keeps its plan; its next run asks for that plan's carveout again.
  seed_sums<256>(rt, out.get(), 0, static_cast<std::uint32_t>(wave), want, rng);
  const Report second = rt.run(Scheduler::megakernel);
  INFO(second.format());
  REQUIRE(second.ok());
  REQUIRE(download(out) == want);
  APIARY_CUDA_CHECK(cudaFuncGetAttributes(&attributes, detail::megakernel_entry<SumGraph>));
  CHECK(attributes.preferredShmemCarveout == fitted);
}

// ---- cyclic phases -------------------------------------------------------------------

struct CounterJob {
  std::uint32_t index;
  std::uint32_t target;
  std::uint32_t* values;
  std::uint32_t* violations;
};
struct Increment {
  using Item = CounterJob;
  static constexpr unsigned threads = 1;
  static constexpr unsigned shared_bytes = 0;
  static constexpr const char* name = "Increment";
  template <class Ctx>
  __device__ void operator()(Worker, const Item& job, Ctx& ctx) const;
};
struct Check {
  using Item = CounterJob;
  static constexpr unsigned threads = 1;
  static constexpr unsigned shared_bytes = 0;
  static constexpr const char* name = "Check";
  template <class Ctx>
  __device__ void operator()(Worker, const Item& job, Ctx& ctx) const {
    // Phase order: every Increment of this cycle ran, none of the next.
    const std::uint32_t cycle = ctx.phase().epoch / 2 + 1;
    if (job.values[job.index] != cycle) atomicAdd(job.violations, 1u);
    if (job.values[job.index] < job.target) ctx.template spawn<Increment>(job);  // runs in the next cycle
  }
};
using CyclicGraph = CyclicPhaseQueue<Phase<Increment>, Phase<Check>>;
template <class Ctx>
__device__ void Increment::operator()(Worker, const Item& job, Ctx& ctx) const {
  job.values[job.index] += 1;
  ctx.template spawn<Check>(job);  // phase 2 of this cycle
}

// n counters, each counted up to `target` by Increment and Check in alternating phases: one run
// of `rt`, checked (counts, phase changes, phase order, values).
void check_cyclic_run(Runtime<CyclicGraph>& rt, Scheduler scheduler, std::uint32_t n, std::uint32_t target) {
  DeviceBuffer<std::uint32_t> values(n), violations(1);
  std::vector<CounterJob> jobs(n);
  for (std::uint32_t i = 0; i < n; ++i) jobs[i] = CounterJob{i, target, values.get(), violations.get()};
  rt.seed<Increment>(jobs);
  const Report report = rt.run(scheduler);
  INFO(report.format());
  REQUIRE(report.executed("Increment") == std::uint64_t(n) * target);
  REQUIRE(report.executed("Check") == std::uint64_t(n) * target);
  REQUIRE(report.phase_changes == 2 * target - 1);
  REQUIRE(download(violations)[0] == 0);
  REQUIRE(download(values) == std::vector<std::uint32_t>(n, target));
}

TEST_CASE("cyclic phases run again until every queue is empty", "[gpu][phases]") {
  const Scheduler scheduler = each_scheduler();
  Runtime<CyclicGraph> rt{Config{}};
  check_cyclic_run(rt, scheduler, 20000, 25);
}

// One Runtime runs again with new work (the benchmarks' repeats do this). The PDC wave keeps
// its instantiated device graph between runs and its controller leaves every worker node
// disabled at the end: a stale node would run workers of the last run's size here.
TEST_CASE("a runtime that runs again with new work gives exact results every run", "[gpu][phases]") {
  const Scheduler scheduler = each_scheduler();
  Runtime<CyclicGraph> rt{Config{}};
  for (std::uint32_t run = 0; run < 3; ++run) {
    INFO("run " << run);
    check_cyclic_run(rt, scheduler, 15000 - 6000 * run, 2 + 5 * run);
  }
}

// The megakernel's runs go to the device as one CUDA graph (start kernel, megakernel, end
// kernel; run_graph.hpp) kept by the runtime. Between them the same runtime runs under the
// other schedulers, which launch on its stream and record the same start, stop and summary
// events: every run is exact, and every run's clock (Report::wall_ms, between the graph's
// event nodes for the megakernel) is positive and within the host's time for the run.
TEST_CASE("one runtime alternating the megakernel's graph launch with the other schedulers is exact every run",
          "[gpu][phases]") {
  Runtime<CyclicGraph> rt{Config{}};
  const Scheduler order[] = {Scheduler::megakernel, Scheduler::timesliced,        Scheduler::megakernel,
                             Scheduler::device_controller_wave, Scheduler::megakernel, Scheduler::device_controller,
                             Scheduler::timesliced_graph,       Scheduler::megakernel};
  std::uint32_t run = 0;
  for (const Scheduler scheduler : order) {
    INFO("run " << run << " under " << to_string(scheduler));
    const std::uint32_t n = 3000 + 2500 * (run % 3), target = 2 + run % 4;
    check_cyclic_run(rt, scheduler, n, target);
    // One more run of the same scheduler (the graph's nodes as the last run left them), timed
    // on the host from the call to the report.
    DeviceBuffer<std::uint32_t> values(n), violations(1);
    std::vector<CounterJob> jobs(n);
    for (std::uint32_t i = 0; i < n; ++i) jobs[i] = CounterJob{i, 1, values.get(), violations.get()};
    rt.seed<Increment>(jobs);
    const auto begin = std::chrono::steady_clock::now();
    const Report again = rt.run(scheduler);
    const double host_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin).count();
    INFO(again.format() << "host: " << host_ms << " ms");
    REQUIRE(again.executed("Increment") == n);
    REQUIRE(again.executed("Check") == n);
    REQUIRE(download(values) == std::vector<std::uint32_t>(n, 1));
    REQUIRE(again.wall_ms > 0);
    REQUIRE(again.wall_ms <= host_ms + 0.01);  // the events' resolution: about half a microsecond
    ++run;
  }
}

// The user data may change between runs of one Runtime: the PDC wave's kept graph then
// refreshes its worker nodes' arguments (they hold the device view by value).
struct UserSum {
  std::uint32_t value;
  std::uint32_t* sum;
};
struct AddUserValue {
  struct Item {
    std::uint32_t index;
  };
  static constexpr unsigned threads = 1;
  static constexpr unsigned shared_bytes = 0;
  static constexpr const char* name = "AddUserValue";
  template <class Ctx>
  __device__ void operator()(Worker, const Item&, Ctx& ctx) const {
    const UserSum& u = *ctx.template user_data<UserSum>();
    atomicAdd(u.sum, u.value);
  }
};
using UserDataGraph = PhaseQueue<Phaseless<AddUserValue>>;

// A run's end also reads the caller's device value back with its summary (copy_at_end): in
// words where the value is 8-byte aligned and sized, byte by byte elsewhere; each run's own value.
struct alignas(8) SumPair {
  std::uint32_t first, second;
};
TEST_CASE("each run of a runtime reads the user data set for it; its end reads back the value named by copy_at_end",
          "[gpu][user_data]") {
  const Scheduler scheduler = each_scheduler();
  constexpr std::uint32_t runs = 3, n = 5000;
  const unsigned seed = std::random_device{}();
  INFO("seed " << seed);
  std::mt19937 rng(seed);
  DeviceBuffer<std::uint32_t> sums(runs + 1);  // 8-byte aligned (cudaMalloc); the last stays 0
  DeviceBuffer<UserSum> user(runs);
  std::vector<UserSum> host(runs);
  for (std::uint32_t r = 0; r < runs; ++r) host[r] = UserSum{1 + std::uint32_t(rng() % 1000), sums.get() + r};
  upload(user, host);
  Runtime<UserDataGraph> rt{Config{}};
  std::vector<AddUserValue::Item> items(n);
  for (std::uint32_t i = 0; i < n; ++i) items[i].index = i;
  for (std::uint32_t r = 0; r < runs; ++r) {
    INFO("run " << r);
    if (r == 0) rt.copy_at_end(reinterpret_cast<const SumPair*>(sums.get()));  // words: sums[0], sums[1]
    else rt.copy_at_end(sums.get() + r);  // 4 bytes at 4 or 8 modulo 8: byte by byte
    rt.set_user_data(user.get() + r);
    rt.seed<AddUserValue>(items);
    const Report report = rt.run(scheduler);
    INFO(report.format());
    REQUIRE(report.executed("AddUserValue") == n);
    std::vector<std::uint32_t> want(runs + 1, 0);
    for (std::uint32_t k = 0; k <= r; ++k) want[k] = n * host[k].value;
    REQUIRE(download(sums) == want);
    if (r == 0) {
      const SumPair got = rt.copied_at_end<SumPair>();
      REQUIRE(got.first == n * host[0].value);
      REQUIRE(got.second == 0);
    } else {
      REQUIRE(rt.copied_at_end<std::uint32_t>() == n * host[r].value);
    }
  }
}

// Fills and copies before a run (fill_before_run, copy_before_run): made by the run's start
// kernel after the caller's earlier default-stream work (here: poisoning the same buffers)
// and before any task; 4- and 8-byte elements, a fill larger than the start kernel's grid,
// fresh random values every run.
struct alignas(16) CopiedPair {
  std::uint64_t a, b;
};
struct FillArgs {
  const float* f;
  const double* d;
  const std::uint32_t* u;
  const CopiedPair* copied;
  float fv;
  double dv;
  std::uint32_t uv;
  CopiedPair cv;
  std::uint32_t* wrong;
};
struct FillReader {
  struct Item {
    std::uint32_t index;
  };
  static constexpr unsigned threads = 1;
  static constexpr unsigned shared_bytes = 0;
  static constexpr const char* name = "FillReader";
  template <class Ctx>
  __device__ void operator()(Worker, const Item& item, Ctx& ctx) const {
    const FillArgs& a = *ctx.template user_data<FillArgs>();
    const std::uint32_t i = item.index;
    const bool ok = a.f[i] == a.fv && a.d[i] == a.dv && a.u[i] == a.uv && a.copied->a == a.cv.a && a.copied->b == a.cv.b;
    if (!ok) atomicAdd(a.wrong, 1u);
  }
};
using FillGraph = PhaseQueue<Phaseless<FillReader>>;

TEST_CASE("fills and copies before a run reach the device after the caller's work and before any task",
          "[gpu][seed]") {
  const Scheduler scheduler = each_scheduler();
  const unsigned seed = std::random_device{}();
  INFO("seed " << seed);
  std::mt19937 rng(seed);
  constexpr std::uint32_t n = 4000;
  constexpr std::size_t big = std::size_t(3) << 20;  // more elements than the start kernel has threads
  DeviceBuffer<float> f(n);
  DeviceBuffer<double> d(n);
  DeviceBuffer<std::uint32_t> u(n), wrong(1);
  DeviceBuffer<std::uint64_t> large(big);
  DeviceBuffer<CopiedPair> copied(1);
  DeviceBuffer<FillArgs> args(1);
  Runtime<FillGraph> rt{Config{}};
  rt.set_user_data(args.get());
  std::vector<FillReader::Item> items(n);
  for (std::uint32_t i = 0; i < n; ++i) items[i].index = i;
  for (std::uint32_t run = 0; run < 3; ++run) {
    INFO("run " << run);
    const FillArgs host{f.get(), d.get(), u.get(), copied.get(), float(rng() % 1000) / 8.0f, double(rng()) / 3.0,
                        std::uint32_t(rng()), CopiedPair{rng(), rng()}, wrong.get()};
    const std::uint64_t large_value = (std::uint64_t(rng()) << 32) | rng();
    upload(args, std::vector<FillArgs>{host});
    wrong.zero();
    APIARY_CUDA_CHECK(cudaDeviceSynchronize());
    // Not waited for: the fills must come after these (the runtime's stream blocks on the
    // legacy default stream).
    APIARY_CUDA_CHECK(cudaMemsetAsync(f.get(), 0xff, f.bytes()));
    APIARY_CUDA_CHECK(cudaMemsetAsync(d.get(), 0xff, d.bytes()));
    APIARY_CUDA_CHECK(cudaMemsetAsync(u.get(), 0xff, u.bytes()));
    APIARY_CUDA_CHECK(cudaMemsetAsync(large.get(), 0xff, large.bytes()));
    APIARY_CUDA_CHECK(cudaMemsetAsync(copied.get(), 0xff, copied.bytes()));
    rt.fill_before_run(f.get(), host.fv, n);
    rt.fill_before_run(d.get(), host.dv, n);
    rt.fill_before_run(u.get(), host.uv, n);
    rt.fill_before_run(large.get(), large_value, big);
    rt.copy_before_run(copied.get(), host.cv);
    rt.seed<FillReader>(items);
    const Report report = rt.run(scheduler);
    INFO(report.format());
    REQUIRE(report.executed("FillReader") == n);
    REQUIRE(download(wrong)[0] == 0);
    const std::vector<std::uint64_t> got = download(large);
    REQUIRE(std::count(got.begin(), got.end(), large_value) == std::ptrdiff_t(big));
  }
  // A fill asked for after a run is not applied again to the next: the next run sees what its
  // tasks left (here, nothing changes them), not a stale fill.
  APIARY_CUDA_CHECK(cudaMemset(u.get(), 0, u.bytes()));
  rt.seed<FillReader>(items);
  (void)rt.run(scheduler);
  REQUIRE(download(u) == std::vector<std::uint32_t>(n, 0u));
}

TEST_CASE("more fills before a run than the start kernel makes is refused with the limit", "[gpu][seed]") {
  DeviceBuffer<std::uint32_t> u(max_fills + 1);
  Runtime<FillGraph> rt{Config{}};
  for (std::uint32_t i = 0; i < max_fills; ++i) rt.fill_before_run(u.get() + i, i, 1);
  REQUIRE_THROWS_WITH(rt.fill_before_run(u.get() + max_fills, 0u, 1),
                      Catch::Contains("at most " + std::to_string(max_fills) + " fills"));
}

// ---- a run's start: after the caller's default-stream work; seeds through pinned memory --

struct ReadArgs {
  const std::uint32_t* values;
  std::uint32_t* seen;
  std::uint32_t* wrong;
};
struct Reader {
  struct Item {
    std::uint32_t index;
    std::uint32_t pad[3];  // 16-byte items: a seed of 30,000 is 480 KB, more than the staging arena
  };
  static constexpr unsigned threads = 1;
  static constexpr unsigned shared_bytes = 0;
  static constexpr const char* name = "Reader";
  template <class Ctx>
  __device__ void operator()(Worker, const Item& item, Ctx& ctx) const {
    const ReadArgs& a = *ctx.template user_data<ReadArgs>();
    if (a.values[item.index] != item.index + 1 || item.pad[0] != ~item.index) atomicAdd(a.wrong, 1u);
    atomicAdd(&a.seen[item.index], 1u);
  }
};
using ReadGraph = PhaseQueue<Phaseless<Reader>>;

// One block: waits `ns` nanoseconds, then writes values[i] = i + 1. Work a run must not overtake.
__global__ void write_values_late(std::uint32_t* values, std::uint32_t n, std::uint64_t ns) {
  if (threadIdx.x == 0) {
    std::uint64_t start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    while (now - start < ns);
  }
  __syncthreads();
  for (std::uint32_t i = threadIdx.x; i < n; i += blockDim.x) values[i] = i + 1;
}

// Run 0 seeds three large pieces (copied at once by DMA), run 1 the same tasks in 3,000 small
// seeds, which wait in the staging arena for the start kernel and outgrow it several times
// (64 KB at first, ~2 MB staged).
TEST_CASE("a run starts after the caller's default-stream work, and seeds large and small arrive whole",
          "[gpu][seed]") {
  const Scheduler scheduler = each_scheduler();
  constexpr std::uint32_t n = 90000;
  DeviceBuffer<std::uint32_t> values(n), seen(n), wrong(1);
  DeviceBuffer<ReadArgs> args(1);
  upload(args, std::vector<ReadArgs>{ReadArgs{values.get(), seen.get(), wrong.get()}});
  Config config;
  config.queue_capacity = n;
  Runtime<ReadGraph> rt{config};
  rt.set_user_data(args.get());
  for (std::uint32_t run = 0; run < 2; ++run) {
    INFO("run " << run);
    values.zero();
    seen.zero();
    wrong.zero();
    APIARY_CUDA_CHECK(cudaDeviceSynchronize());
    // Not waited for: the run's kernels must come after it (the runtime's stream blocks on the
    // legacy default stream).
    write_values_late<<<1, 256>>>(values.get(), n, 2'000'000);
    APIARY_CUDA_CHECK(cudaGetLastError());
    const std::uint32_t chunk = run == 0 ? 30000 : 30;
    for (std::uint32_t first = 0; first < n; first += chunk) {
      std::vector<Reader::Item> items(chunk);
      for (std::uint32_t i = 0; i < chunk; ++i) {
        const std::uint32_t index = first + i;
        items[i] = Reader::Item{index, {~index, 0, 0}};
      }
      rt.seed<Reader>(items);  // the vector goes at once: the seed must not need it
    }
    const Report report = rt.run(scheduler);
    INFO(report.format());
    REQUIRE(report.ok());
    REQUIRE(report.executed("Reader") == n);
    REQUIRE(download(wrong)[0] == 0);
    const std::vector<std::uint32_t> counts = download(seen);
    REQUIRE(std::count(counts.begin(), counts.end(), 1u) == std::ptrdiff_t(n));
  }
}

// ---- dependencies: resolutions before and after the spawn ------------------------------

struct DepJob {
  std::uint32_t index;
  std::uint32_t fan_in;
  std::uint32_t* resolved;  // resolutions done per dependency
  std::uint32_t* released;  // waiter runs per dependency
  std::uint32_t* early;     // waiters that saw fewer than fan_in resolutions
};
struct Waiter {
  using Item = DepJob;
  static constexpr unsigned threads = 32;
  static constexpr unsigned shared_bytes = 0;
  static constexpr const char* name = "Waiter";
  template <class Ctx>
  __device__ void operator()(Worker w, const Item& job, Ctx&) const {
    if (w.rank() != 0) return;
    if (cuda::atomic_ref<std::uint32_t, cuda::thread_scope_device>(job.resolved[job.index]).load(
            cuda::std::memory_order_acquire) != job.fan_in)
      atomicAdd(job.early, 1u);
    atomicAdd(&job.released[job.index], 1u);
  }
};
struct Owner {
  using Item = DepJob;
  static constexpr unsigned threads = 1;
  static constexpr unsigned shared_bytes = 0;
  static constexpr const char* name = "Owner";
  template <class Ctx>
  __device__ void operator()(Worker, const Item& job, Ctx& ctx) const {
    ctx.template spawn_when<Waiter>(ctx.dependency(job.index), job, std::int32_t(job.fan_in));
  }
};
struct Producer {
  using Item = DepJob;
  static constexpr unsigned threads = 1;
  static constexpr unsigned shared_bytes = 0;
  static constexpr const char* name = "Producer";
  template <class Ctx>
  __device__ void operator()(Worker, const Item& job, Ctx& ctx) const {
    cuda::atomic_ref<std::uint32_t, cuda::thread_scope_device>(job.resolved[job.index])
        .fetch_add(1, cuda::std::memory_order_release);
    ctx.resolve(ctx.dependency(job.index));
  }
};
using DepGraph = PhaseQueue<Phaseless<Producer, Owner, Waiter>>;

// A traced runtime with room for n dependencies and n parked waiters.
Config dependency_test_config(std::uint32_t n) {
  Config config;
  config.dependency_capacity = n;
  config.waiting_storage_capacity = n;
  config.trace = true;
  config.trace_event_capacity = 16ull * n;
  return config;
}

// The run ended well, every one of the n waiters ran once, none before its last resolution,
// nothing is left parked or unresolved, and the trace checks.
template <class Graph>
void require_waiters_released_once(const Report& report, const Runtime<Graph>& rt, std::uint32_t n,
                                   const DeviceBuffer<std::uint32_t>& released, const DeviceBuffer<std::uint32_t>& early) {
  INFO(report.format());
  REQUIRE(report.ok());
  REQUIRE(report.executed("Waiter") == n);
  REQUIRE(report.parked == 0);
  REQUIRE(report.unresolved_dependencies == 0);
  REQUIRE(download(early)[0] == 0);
  REQUIRE(download(released) == std::vector<std::uint32_t>(n, 1));
  const TraceCheckResult check = check_trace(rt.trace());
  INFO(format(check));
  REQUIRE(check.ok);
}

TEST_CASE("dependencies release each waiter once, after all resolutions, in either order", "[gpu][dependency]") {
  const Scheduler scheduler = each_scheduler();
  const std::uint32_t n = 50000, fan_in = 6;
  DeviceBuffer<std::uint32_t> resolved(n), released(n), early(1);
  Runtime<DepGraph> rt{dependency_test_config(n)};
  std::vector<DepJob> owners(n), producers;
  std::mt19937 rng(Catch::rngSeed());
  for (std::uint32_t i = 0; i < n; ++i) {
    owners[i] = DepJob{i, fan_in, resolved.get(), released.get(), early.get()};
    for (std::uint32_t k = 0; k < fan_in; ++k) producers.push_back(owners[i]);
  }
  std::shuffle(producers.begin(), producers.end(), rng);
  rt.seed<Producer>(producers);  // producers and owners race: many resolutions come first
  rt.seed<Owner>(owners);
  require_waiters_released_once(rt.run(scheduler), rt, n, released, early);
}

// The same race with producers that resolve several dependencies behind one fence
// (ctx.resolve_after_fence), so that one series of resolutions releases several waiters: the
// slot of each released task is read after the caller's fence and freed behind one of its
// own before the series goes on.
struct SeriesJob {
  std::uint32_t deps[4];    // may name a dependency twice: two resolutions
  std::uint32_t count;
  std::uint32_t* resolved;  // resolutions done per dependency
};
struct SeriesProducer {
  using Item = SeriesJob;
  static constexpr unsigned threads = 1;
  static constexpr unsigned shared_bytes = 0;
  static constexpr const char* name = "Producer";
  template <class Ctx>
  __device__ void operator()(Worker, const Item& job, Ctx& ctx) const {
    for (std::uint32_t i = 0; i < job.count; ++i)
      cuda::atomic_ref<std::uint32_t, cuda::thread_scope_device>(job.resolved[job.deps[i]])
          .fetch_add(1, cuda::std::memory_order_relaxed);
    __threadfence();
    for (std::uint32_t i = 0; i < job.count; ++i) ctx.resolve_after_fence(ctx.dependency(job.deps[i]));
  }
};
using SeriesDepGraph = PhaseQueue<Phaseless<SeriesProducer, Owner, Waiter>>;

TEST_CASE("resolutions behind one fence release each waiter once, after all resolutions, run after run",
          "[gpu][dependency]") {
  const Scheduler scheduler = each_scheduler();
  const std::uint32_t n = 40000, fan_in = 6;
  DeviceBuffer<std::uint32_t> resolved(n), released(n), early(1);
  Runtime<SeriesDepGraph> rt{dependency_test_config(n)};
  std::mt19937 rng(Catch::rngSeed());
  for (int run = 0; run < 2; ++run) {  // the second run reuses the slots the first freed
    APIARY_CUDA_CHECK(cudaMemset(resolved.get(), 0, resolved.bytes()));
    APIARY_CUDA_CHECK(cudaMemset(released.get(), 0, released.bytes()));
    APIARY_CUDA_CHECK(cudaMemset(early.get(), 0, early.bytes()));
    std::vector<DepJob> owners(n);
    std::vector<std::uint32_t> resolutions;
    for (std::uint32_t i = 0; i < n; ++i) {
      owners[i] = DepJob{i, fan_in, resolved.get(), released.get(), early.get()};
      resolutions.insert(resolutions.end(), fan_in, i);
    }
    std::shuffle(resolutions.begin(), resolutions.end(), rng);
    std::vector<SeriesJob> producers;
    std::uniform_int_distribution<std::uint32_t> length(1, 4);
    for (std::size_t next = 0; next < resolutions.size();) {
      SeriesJob job{{}, 0, resolved.get()};
      const std::uint32_t want = length(rng);
      while (job.count < want && next < resolutions.size()) job.deps[job.count++] = resolutions[next++];
      producers.push_back(job);
    }
    rt.seed<Owner>(owners);  // most waiters park before their last resolution: series release
    rt.seed<SeriesProducer>(producers);
    require_waiters_released_once(rt.run(scheduler), rt, n, released, early);
  }
}

// The same race with the waiters as continuations (ctx.spawn_next_when): under the megakernel
// an owner's waiter may wait in the owner's block (its hand-off slot) instead of the waiting
// storage; every scheduler must still release each exactly once, after all its resolutions.
struct HeldJob {
  DepJob dep;
  std::uint32_t* owner_block;  // per dependency: the block that ran its owner
  std::uint32_t* same_block;   // waiters that ran in their owner's block
};
struct HeldWaiter {
  using Item = HeldJob;
  static constexpr unsigned threads = 32;
  static constexpr unsigned shared_bytes = 0;
  static constexpr const char* name = "Waiter";
  template <class Ctx>
  __device__ void operator()(Worker w, const Item& job, Ctx& ctx) const {
    Waiter{}(w, job.dep, ctx);
    if (w.rank() == 0 && job.owner_block[job.dep.index] == blockIdx.x) atomicAdd(job.same_block, 1u);
  }
};
struct HoldingOwner {
  using Item = HeldJob;
  static constexpr unsigned threads = 1;
  static constexpr unsigned shared_bytes = 0;
  static constexpr const char* name = "Owner";
  template <class Ctx>
  __device__ void operator()(Worker, const Item& job, Ctx& ctx) const {
    job.owner_block[job.dep.index] = blockIdx.x;
    ctx.template spawn_next_when<HeldWaiter>(ctx.dependency(job.dep.index), job, std::int32_t(job.dep.fan_in));
  }
};
using HeldDepGraph = PhaseQueue<Phaseless<Producer, HoldingOwner, HeldWaiter>>;

TEST_CASE("held continuations (spawn_next_when) run once, after all resolutions, in either order",
          "[gpu][dependency][handoff]") {
  const Scheduler scheduler = each_scheduler();
  const std::uint32_t n = 50000, fan_in = 3;
  DeviceBuffer<std::uint32_t> resolved(n), released(n), early(1), owner_block(n), same_block(1);
  Runtime<HeldDepGraph> rt{dependency_test_config(n)};
  std::vector<HeldJob> owners(n);
  std::vector<DepJob> producers;
  std::mt19937 rng(Catch::rngSeed());
  for (std::uint32_t i = 0; i < n; ++i) {
    owners[i] = HeldJob{DepJob{i, fan_in, resolved.get(), released.get(), early.get()}, owner_block.get(), same_block.get()};
    for (std::uint32_t k = 0; k < fan_in; ++k) producers.push_back(owners[i].dep);
  }
  std::shuffle(producers.begin(), producers.end(), rng);
  std::shuffle(owners.begin(), owners.end(), rng);
  rt.seed<HoldingOwner>(owners);  // owners first here: many waits begin before their resolutions
  rt.seed<Producer>(producers);
  require_waiters_released_once(rt.run(scheduler), rt, n, released, early);
  // Under the megakernel some waiters waited in their owner's block (one slot per block).
  if (scheduler == Scheduler::megakernel) REQUIRE(download(same_block)[0] > 0);
}

// Own holds: a link holds its successor on a fresh dependency and resolves it itself; on odd
// links the wait needs a second resolution from a helper task it spawns. The wait begins after
// the link (Context::begin_hold): where the link's own resolution is all it needs, or the
// helper's came first, the successor is ready at once (traced as a release by the link); where
// the helper's comes later, the holding block's poll readies it (a release without a task).
// Every link must run once, in order, with a clean trace.
// A link of one of several chains (this test and the parked chains' below).
struct ChainLinkJob {
  std::uint32_t chain, index, links;
  std::uint32_t* ran;           // per link: times it ran
  std::uint32_t* out_of_order;  // links that ran before their predecessor
};
// The next link of a chain and the dependency its wait takes.
struct NextLink {
  ChainLinkJob job;
  std::uint32_t dependency;  // pool index
};
// Counts the link's run and whether its predecessor ran before it. Returns the next link with a
// fresh dependency, or nothing where this one is the chain's last or the pool is exhausted
// (the run then reports the error).
template <class Ctx>
__device__ cuda::std::optional<NextLink> run_link(const ChainLinkJob& job, Ctx& ctx) {
  const std::uint32_t at = job.chain * job.links + job.index;
  atomicAdd(&job.ran[at], 1u);
  if (job.index > 0 && atomicAdd(&job.ran[at - 1], 0u) == 0) atomicAdd(job.out_of_order, 1u);
  if (job.index + 1 == job.links) return cuda::std::nullopt;
  const std::uint32_t d = ctx.new_dependency_index();
  if (d == no_slot) return cuda::std::nullopt;
  ChainLinkJob next = job;
  next.index = job.index + 1;
  return NextLink{next, d};
}
// The first link of each chain.
std::vector<ChainLinkJob> chain_heads(std::uint32_t chains, std::uint32_t links, DeviceBuffer<std::uint32_t>& ran,
                                      DeviceBuffer<std::uint32_t>& out_of_order) {
  std::vector<ChainLinkJob> heads;
  for (std::uint32_t c = 0; c < chains; ++c) heads.push_back(ChainLinkJob{c, 0, links, ran.get(), out_of_order.get()});
  return heads;
}
struct HelperResolve {
  using Item = std::uint32_t;  // the dependency's pool index
  static constexpr unsigned threads = 1;
  static constexpr unsigned shared_bytes = 0;
  static constexpr const char* name = "Helper";
  template <class Ctx>
  __device__ void operator()(Worker, const Item& dep, Ctx& ctx) const {
    ctx.resolve(ctx.dependency(dep));
  }
};
struct OwnHoldLink {
  using Item = ChainLinkJob;
  static constexpr unsigned threads = 1;
  static constexpr unsigned shared_bytes = 0;
  static constexpr const char* name = "Link";
  template <class Ctx>
  __device__ void operator()(Worker, const Item& job, Ctx& ctx) const {
    const auto next = run_link(job, ctx);
    if (!next) return;
    const bool helped = job.index % 2 == 1;
    ctx.template spawn_next_when<OwnHoldLink>(ctx.dependency(next->dependency), next->job, helped ? 2 : 1);
    if (helped) ctx.template spawn<HelperResolve>(next->dependency);
    ctx.resolve(ctx.dependency(next->dependency));
  }
};
using OwnHoldGraph = PhaseQueue<Phaseless<OwnHoldLink, HelperResolve>>;

TEST_CASE("held continuations completed by their holder's own resolution run once, in order (own holds)",
          "[gpu][dependency][handoff]") {
  const Scheduler scheduler = each_scheduler();
  const std::uint32_t chains = 512, links = 64, n = chains * links;
  DeviceBuffer<std::uint32_t> ran(n), out_of_order(1);
  Config config;
  config.dependency_capacity = n;
  config.waiting_storage_capacity = n;
  config.trace = true;
  config.trace_event_capacity = 16ull * n;
  Runtime<OwnHoldGraph> rt{config};
  rt.seed<OwnHoldLink>(chain_heads(chains, links, ran, out_of_order));
  const Report report = rt.run(scheduler);
  INFO(report.format());
  REQUIRE(report.ok());
  REQUIRE(report.executed("Link") == n);
  REQUIRE(report.executed("Helper") == chains * (links / 2 - 1));  // odd links but the last
  REQUIRE(report.parked == 0);
  REQUIRE(report.unresolved_dependencies == 0);
  REQUIRE(download(ran) == std::vector<std::uint32_t>(n, 1));
  REQUIRE(download(out_of_order)[0] == 0);
  const TraceCheckResult check = check_trace(rt.trace());
  INFO(format(check));
  REQUIRE(check.ok);
  // Under the megakernel the waits are held (a link runs from its block's slot, which is free
  // again for its successor) but for at most one per chain (a seeded head whose batch's slot
  // another head took parks its wait, released by a task). So more than `chains` releases by a
  // task are own holds. A polled held wait's release has no task.
  if (scheduler == Scheduler::megakernel) {
    const auto& events = rt.trace().events;
    const auto own = std::count_if(events.begin(), events.end(), [](const DependencyEvent& e) {
      return e.kind == static_cast<std::uint32_t>(DependencyEventKind::release) && e.task != no_task;
    });
    INFO("releases by the holding link: " << own);
    REQUIRE(own > chains);
  }
}

// A released task's waiting-storage slot is freed after the releasing thread's next release
// fence (Context::release): chains that park each next link and release it at once reuse the
// storage's slots while slots read by threads are still taken. One slot per chain must
// suffice (the runtime adds a slot per thread the device holds), and runs after runs on one
// runtime must not leak slots: 24 runs park more tasks than the storage has slots.
struct ParkedLink {
  using Item = ChainLinkJob;
  static constexpr unsigned threads = 1;
  static constexpr unsigned shared_bytes = 0;
  static constexpr const char* name = "ParkedLink";
  template <class Ctx>
  __device__ void operator()(Worker, const Item& job, Ctx& ctx) const {
    const auto next = run_link(job, ctx);
    if (!next) return;
    ctx.template spawn_when<ParkedLink>(ctx.dependency(next->dependency), next->job, 1);
    ctx.resolve(ctx.dependency(next->dependency));
  }
};
using ParkedChainGraph = PhaseQueue<Phaseless<ParkedLink>>;

TEST_CASE("parked chains reuse waiting-storage slots freed after the next fence, run after run",
          "[gpu][dependency]") {
  const Scheduler scheduler = each_scheduler();
  const std::uint32_t chains = 64, links = 200, n = chains * links, runs = 24;
  DeviceBuffer<std::uint32_t> ran(n), out_of_order(1);
  Config config;
  config.dependency_capacity = n;
  config.waiting_storage_capacity = chains;  // each chain has at most one link parked at once
  Runtime<ParkedChainGraph> rt{config};
  const std::vector<ChainLinkJob> heads = chain_heads(chains, links, ran, out_of_order);
  for (std::uint32_t run = 0; run < runs; ++run) {
    INFO("run " << run);
    upload(ran, std::vector<std::uint32_t>(n, 0));
    rt.seed<ParkedLink>(heads);
    const Report report = rt.run(scheduler);
    INFO(report.format());
    REQUIRE(report.ok());
    REQUIRE(report.executed("ParkedLink") == n);
    REQUIRE(report.parked == 0);
    REQUIRE(report.unresolved_dependencies == 0);
    REQUIRE(download(ran) == std::vector<std::uint32_t>(n, 1));
  }
  REQUIRE(download(out_of_order)[0] == 0);
}

struct Forgotten {
  using Item = std::uint32_t;
  static constexpr unsigned threads = 1;
  static constexpr unsigned shared_bytes = 0;
  static constexpr const char* name = "Forgotten";
  template <class Ctx>
  __device__ void operator()(Worker, const Item&, Ctx&) const {}
};
struct Holder {
  using Item = std::uint32_t;
  static constexpr unsigned threads = 1;
  static constexpr unsigned shared_bytes = 0;
  static constexpr const char* name = "Holder";
  template <class Ctx>
  __device__ void operator()(Worker, const Item& i, Ctx& ctx) const {
    if (Dependency* dep = ctx.new_dependency()) ctx.template spawn_next_when<Forgotten>(*dep, i, 2);
  }
};
using HolderGraph = PhaseQueue<Phaseless<Holder, Forgotten>>;

TEST_CASE("a held continuation whose dependency is never resolved ends the run with a report", "[gpu][stall]") {
  const Scheduler scheduler = each_scheduler();
  Config config;
  config.watchdog_seconds = 0.5;
  Runtime<HolderGraph> rt{config};
  rt.seed<Holder>(std::vector<std::uint32_t>{1, 2, 3});
  try {
    rt.run(scheduler);
    FAIL("the run should have failed");
  } catch (const StallError& e) {
    const std::string message = e.what();
    INFO(message);
    REQUIRE_THAT(message, Catch::Contains("unresolved dependencies (runtime pool): 3"));
    // Held in blocks under the megakernel (the watchdog ends the run; the report names the
    // held waits), parked in the waiting storage under the others.
    if (scheduler == Scheduler::megakernel)
      REQUIRE_THAT(message, Catch::Contains("watchdog") && Catch::Contains("a held task waits for 2 more resolution(s)"));
    else
      REQUIRE_THAT(message, Catch::Contains("never resolved") && Catch::Contains("counter 2"));
  }
}

// Gated continuations (ctx.hold_next_at): `rounds` rounds of `tasks` tasks with a barrier
// between rounds whose arrivals count up one word (a ring of three, cleared by task 0 two
// rounds ahead, as Jacobi's stages_inline does). Task (t, r) holds (t, r + 1) at round r's gate
// where its block can, else leaves it to the round's last arriver, which spawns it.
struct GateRounds {
  std::uint32_t* arrivals;  // 3
  std::uint32_t* marks;     // tasks: the last round each task ran
  std::uint32_t* unheld;    // 2 x tasks, by round parity: the task's successor was not held
  std::uint32_t* early;     // a task saw another still in an earlier round (the gate opened too soon)
  std::uint32_t* ahead;     // a task saw another in a later round (it ran ahead of the barrier)
  std::uint32_t* held;      // successors held at a gate
  std::uint32_t* runs;      // tasks x rounds: how often (t, r) ran
  std::uint32_t tasks, rounds;
};
inline constexpr std::uint32_t gate_spawned_unit = 1u << 16;
struct GateJob {
  std::uint32_t t, r;
};
// WaitsAtGates: the worker waits for the gate itself (gated local hops, task_type.hpp), or the
// block's loop polls it.
template <bool WaitsAtGates>
struct GatedRound {
  using Item = GateJob;
  static constexpr unsigned threads = 32;
  static constexpr unsigned shared_bytes = 0;
  static constexpr const char* name = "Round";
  static constexpr bool waits_at_gates = WaitsAtGates;
  template <class Ctx>
  __device__ void operator()(Worker w, const Item& job, Ctx& ctx) const {
    const GateRounds& g = *ctx.template user_data<GateRounds>();
    const std::uint32_t t = job.t, r = job.r;
    for (std::uint32_t u = w.rank(); u < g.tasks; u += w.size()) {
      const std::uint32_t m = __ldcg(&g.marks[u]) - 1;  // marks hold round + 1; 0: not yet run
      if (r > 0 && (m + 1 == 0 || m + 1 < r)) atomicAdd(g.early, 1u);
      if (m + 1 != 0 && m > r) atomicAdd(g.ahead, 1u);
    }
    __syncwarp();
    if (r + 1 == g.rounds) {
      if (w.rank() == 0) {
        atomicAdd(&g.runs[t * g.rounds + r], 1u);
        g.marks[t] = r + 1;
      }
      return;
    }
    std::uint32_t last = 0;
    if (w.rank() == 0) {
      atomicAdd(&g.runs[t * g.rounds + r], 1u);
      g.marks[t] = r + 1;
      if (t == 0) g.arrivals[(r + 1) % 3] = 0;
      const bool held = ctx.template hold_next_at<GatedRound>(Gate{&g.arrivals[r % 3], gate_spawned_unit - 1, g.tasks},
                                                              GateJob{t, r + 1});
      if (held) atomicAdd(g.held, 1u);
      g.unheld[(r & 1) * g.tasks + t] = held ? 0 : 1;
      __threadfence();
      const std::uint32_t before = atomicAdd(&g.arrivals[r % 3], held ? 1u : 1u + gate_spawned_unit);
      last = (before & (gate_spawned_unit - 1)) == g.tasks - 1 ? 1 : 0;
      if (last) __threadfence();
    }
    if (__shfl_sync(0xffffffffu, last, 0) == 0) return;
    // The last arriver spawns the successors no block held. Its own goes last, after every
    // flag was read: round r + 1 cannot end without it, so no task of r + 2 rewrites a flag
    // this scan still reads.
    for (std::uint32_t u = w.rank(); u < g.tasks; u += w.size())
      if (u != t && __ldcg(&g.unheld[(r & 1) * g.tasks + u]) != 0) ctx.template spawn<GatedRound>(GateJob{u, r + 1});
    __syncwarp();
    if (w.rank() == 0 && __ldcg(&g.unheld[(r & 1) * g.tasks + t]) != 0)
      ctx.template spawn<GatedRound>(GateJob{t, r + 1});
  }
};
template <bool WaitsAtGates>
using GateGraph = PhaseQueue<Phaseless<GatedRound<WaitsAtGates>>>;

// One run of the rounds (see GateRounds) with `tasks` tasks under `scheduler`.
template <bool WaitsAtGates>
void run_gate_rounds(Scheduler scheduler, std::uint32_t tasks, std::mt19937& rng) {
  const std::uint32_t rounds = 200;
  DeviceBuffer<std::uint32_t> arrivals(3), marks(tasks), unheld(2 * tasks), early(1), ahead(1), held(1),
      runs(std::size_t(tasks) * rounds);
  DeviceBuffer<GateRounds> shared(1);
  upload(shared, std::vector<GateRounds>{GateRounds{arrivals.get(), marks.get(), unheld.get(), early.get(),
                                                    ahead.get(), held.get(), runs.get(), tasks, rounds}});
  Config config;
  config.queue_capacity = 4 * tasks;
  Runtime<GateGraph<WaitsAtGates>> rt{config};
  rt.set_user_data(shared.get());
  std::vector<GateJob> seed(tasks);
  for (std::uint32_t t = 0; t < tasks; ++t) seed[t] = GateJob{t, 0};
  std::shuffle(seed.begin(), seed.end(), rng);
  rt.template seed<GatedRound<WaitsAtGates>>(seed);
  const Report report = rt.run(scheduler);
  INFO(report.format());
  REQUIRE(report.ok());
  REQUIRE(report.executed("Round") == std::uint64_t(tasks) * rounds);
  REQUIRE(download(runs) == std::vector<std::uint32_t>(runs.size(), 1));
  REQUIRE(download(early)[0] == 0);
  REQUIRE(download(ahead)[0] == 0);
  REQUIRE(download(marks) == std::vector<std::uint32_t>(tasks, rounds));
  // Only the megakernel holds; there most successors wait in their blocks.
  const std::uint32_t held_count = download(held)[0];
  if (scheduler == Scheduler::megakernel) REQUIRE(held_count > 0);
  else REQUIRE(held_count == 0);
}

TEST_CASE("gated continuations (hold_next_at) start each round after every arrival of the last one",
          "[gpu][handoff][gate]") {
  const Scheduler scheduler = each_scheduler();
  std::mt19937 rng(Catch::rngSeed());
  // Fewer tasks than megakernel blocks (most held), and more (the rest spawned by the last);
  // the worker waiting for the gate itself (gated local hops) or the block's loop polling it.
  for (const std::uint32_t tasks : {std::uint32_t(40 + rng() % 60), std::uint32_t(3000 + rng() % 1000)}) {
    DYNAMIC_SECTION("tasks " << tasks << ", gated local hops") { run_gate_rounds<true>(scheduler, tasks, rng); }
    DYNAMIC_SECTION("tasks " << tasks << ", the loop polls") { run_gate_rounds<false>(scheduler, tasks, rng); }
  }
}

struct GateHolder {
  using Item = std::uint32_t;
  static constexpr unsigned threads = 1;
  static constexpr unsigned shared_bytes = 0;
  static constexpr const char* name = "GateHolder";
  template <class Ctx>
  __device__ void operator()(Worker, const Item& i, Ctx& ctx) const {
    const std::uint32_t* closed = ctx.template user_data<std::uint32_t>();  // stays 0
    ctx.template hold_next_at<Forgotten>(Gate{closed, ~0u, 1}, i);
  }
};
using GateHolderGraph = PhaseQueue<Phaseless<GateHolder, Forgotten>>;

TEST_CASE("a gated continuation whose gate never opens ends the run with a report; elsewhere it is not held",
          "[gpu][stall][gate]") {
  const Scheduler scheduler = each_scheduler();
  DeviceBuffer<std::uint32_t> closed(1);
  upload(closed, std::vector<std::uint32_t>{0});
  Config config;
  config.watchdog_seconds = 0.5;
  Runtime<GateHolderGraph> rt{config};
  rt.set_user_data(closed.get());
  rt.seed<GateHolder>(std::vector<std::uint32_t>{1, 2, 3});
  if (scheduler != Scheduler::megakernel) {
    // No block can hold it: hold_next_at returns false, nothing is spawned, the run ends.
    const Report report = rt.run(scheduler);
    INFO(report.format());
    REQUIRE(report.ok());
    REQUIRE(report.executed("Forgotten") == 0);
    return;
  }
  try {
    rt.run(scheduler);
    FAIL("the run should have failed");
  } catch (const StallError& e) {
    const std::string message = e.what();
    INFO(message);
    REQUIRE_THAT(message, Catch::Contains("watchdog") && Catch::Contains("gate that never opened"));
    // The held tasks (one per block that ran a holder) went back to their queue, unrun.
    REQUIRE_THAT(message, Catch::Matches("[\\s\\S]*Forgotten +- +0 +[123] +0[\\s\\S]*"));
  }
}

// ---- failures end with a report --------------------------------------------------------

struct Forgetter {
  using Item = std::uint32_t;
  static constexpr unsigned threads = 1;
  static constexpr unsigned shared_bytes = 0;
  static constexpr const char* name = "Forgetter";
  template <class Ctx>
  __device__ void operator()(Worker, const Item& i, Ctx& ctx) const {
    if (Dependency* dep = ctx.new_dependency()) ctx.template spawn_when<Forgotten>(*dep, i, 2);
  }
};
using ForgetGraph = PhaseQueue<Phaseless<Forgetter, Forgotten>>;

TEST_CASE("a dependency that is never resolved ends the run with a report instead of hanging", "[gpu][stall]") {
  const Scheduler scheduler = each_scheduler();
  Runtime<ForgetGraph> rt{Config{}};
  rt.seed<Forgetter>(std::vector<std::uint32_t>{1, 2, 3});
  try {
    rt.run(scheduler);
    FAIL("the run should have failed");
  } catch (const StallError& e) {
    const std::string message = e.what();
    INFO(message);
    REQUIRE_THAT(message, Catch::Contains("never resolved"));
    REQUIRE_THAT(message, Catch::Contains("parked tasks in the waiting storage: 3"));
    REQUIRE_THAT(message, Catch::Contains("unresolved dependencies (runtime pool): 3"));
    REQUIRE_THAT(message, Catch::Contains("counter 2"));
  }
}

struct Spinner {
  using Item = std::uint32_t;
  static constexpr unsigned threads = 32;
  static constexpr unsigned shared_bytes = 0;
  static constexpr const char* name = "Spinner";
  template <class Ctx>
  __device__ void operator()(Worker, const Item&, Ctx& ctx) const {
    while (!ctx.cancelled()) __nanosleep(1000);  // waits for something that never comes
  }
};
using SpinGraph = PhaseQueue<Phaseless<Spinner>>;

TEST_CASE("the watchdog stops a run that makes no progress", "[gpu][stall]") {
  const Scheduler scheduler = each_scheduler();
  Config config;
  config.watchdog_seconds = 0.5;
  Runtime<SpinGraph> rt{config};
  rt.seed<Spinner>(std::vector<std::uint32_t>{0});
  REQUIRE_THROWS_WITH(rt.run(scheduler), Catch::Contains("watchdog") && Catch::Contains("watchdog_seconds"));
}

// A chain of continuations runs as hand-off hops that finish no batch (handoff.hpp); every
// check_every hops they check in (handoff_batches.hpp): the watchdog must see them progress.
struct Relay {
  using Item = std::uint32_t;  // links left
  static constexpr unsigned threads = 1;
  static constexpr unsigned shared_bytes = 0;
  static constexpr const char* name = "Relay";
  template <class Ctx>
  __device__ void operator()(Worker, const Item& left, Ctx& ctx) const {
    if (left > 0) ctx.template spawn_next<Relay>(left - 1);
  }
};
using RelayGraph = PhaseQueue<Phaseless<Relay>>;

TEST_CASE("a long chain of continuations keeps the watchdog's heartbeat going", "[gpu][stall][handoff]") {
  const Scheduler scheduler = each_scheduler();
  const std::uint32_t links = 400'000;  // ~0.4 s at ~1 us per hop, 8x the watchdog's limit
  Config config;
  config.watchdog_seconds = 0.05;
  Runtime<RelayGraph> rt{config};
  rt.seed<Relay>(std::vector<std::uint32_t>{links});
  const Report report = rt.run(scheduler);
  INFO(report.format());
  REQUIRE(report.ok());
  REQUIRE(report.executed("Relay") == links + 1);
}

struct Child {
  using Item = std::uint32_t;
  static constexpr unsigned threads = 1;
  static constexpr unsigned shared_bytes = 0;
  static constexpr const char* name = "Child";
  template <class Ctx>
  __device__ void operator()(Worker, const Item&, Ctx&) const {}
};
struct Parent {
  using Item = std::uint32_t;
  static constexpr unsigned threads = 32;
  static constexpr unsigned shared_bytes = 0;
  static constexpr const char* name = "Parent";
  template <class Ctx>
  __device__ void operator()(Worker w, const Item&, Ctx& ctx) const {
    for (std::uint32_t i = w.rank(); i < 1000; i += w.size()) ctx.template spawn<Child>(i);
  }
};
using OverflowGraph = PhaseQueue<Phase<Parent>, Phase<Child>>;

TEST_CASE("a full queue ends the run with an error naming the queue, its capacity and the config key",
          "[gpu][capacity]") {
  const Scheduler scheduler = each_scheduler();
  Config config;
  config.queue_capacities["Child"] = 64;
  Runtime<OverflowGraph> rt{config};
  rt.seed<Parent>(std::vector<std::uint32_t>{0});
  REQUIRE_THROWS_WITH(rt.run(scheduler), Catch::Contains("queue 'Child'") && Catch::Contains("capacity 64") &&
                                    Catch::Contains("queue_capacities.Child"));
}

TEST_CASE("seeding more than a queue holds is refused before the run", "[gpu][capacity]") {
  Config config;
  config.queue_capacities["Child"] = 8;
  Runtime<OverflowGraph> rt{config};
  REQUIRE_THROWS_WITH(rt.seed<Child>(std::vector<std::uint32_t>(9, 0)),
                      Catch::Contains("queue 'Child'") && Catch::Contains("queue_capacities.Child"));
}

// The dependency pool (dependency_pool.hpp): megakernel blocks take its indices a share at a
// time, and every scheduler must still give a run its configured capacity, each index once;
// beyond what the pool holds, the run ends with an error naming the config key.
struct Spender {
  struct Item {
    std::uint32_t first;  // this task's place in `got`
    std::uint32_t count;  // allocations, spread over the worker's threads
    std::uint32_t* got;   // the indices, as allocated
  };
  static constexpr unsigned threads = 32;
  static constexpr unsigned shared_bytes = 0;
  static constexpr const char* name = "Spender";
  template <class Ctx>
  __device__ void operator()(Worker w, const Item& item, Ctx& ctx) const {
    for (std::uint32_t i = w.rank(); i < item.count; i += w.size()) item.got[item.first + i] = ctx.new_dependency_index();
  }
};
using SpendGraph = PhaseQueue<Phaseless<Spender>>;

TEST_CASE("the dependency pool gives every run its configured capacity, each index once, and then a clear error",
          "[gpu][dependency][capacity]") {
  const Scheduler scheduler = each_scheduler();
  const std::uint32_t tasks = 4096, per_task = 37;  // not a multiple of a block's share
  const std::uint32_t capacity = tasks * per_task;
  DeviceBuffer<std::uint32_t> got(capacity);
  std::vector<Spender::Item> items;
  for (std::uint32_t t = 0; t < tasks; ++t) items.push_back({t * per_task, per_task, got.get()});
  Config config;
  config.dependency_capacity = capacity;
  Runtime<SpendGraph> rt{config};
  rt.seed<Spender>(items);
  const Report report = rt.run(scheduler);
  INFO(report.format());
  REQUIRE(report.ok());
  std::vector<std::uint32_t> indices = download(got);
  std::sort(indices.begin(), indices.end());
  REQUIRE(std::adjacent_find(indices.begin(), indices.end()) == indices.end());
  REQUIRE(indices.back() != no_slot);

  // Twice the capacity plus everything the blocks' shares could keep: more than the pool holds.
  const std::uint32_t beyond = 2 * capacity + DependencyPool::slack(rt.device().sm_count);
  DeviceBuffer<std::uint32_t> more(beyond);
  Runtime<SpendGraph> over{config};
  std::vector<Spender::Item> greedy;
  for (std::uint32_t first = 0; first < beyond; first += 1024) greedy.push_back({first, std::min(1024u, beyond - first), more.get()});
  over.seed<Spender>(greedy);
  REQUIRE_THROWS_WITH(over.run(scheduler), Catch::Contains("dependency pool is exhausted") &&
                                               Catch::Contains(std::to_string(capacity) + " dependencies") &&
                                               Catch::Contains("dependency_capacity"));
}

struct Stopper {
  using Item = std::uint32_t;
  static constexpr unsigned threads = 1;
  static constexpr unsigned shared_bytes = 0;
  static constexpr const char* name = "Stopper";
  template <class Ctx>
  __device__ void operator()(Worker, const Item& i, Ctx& ctx) const {
    if (i == 0) ctx.stop();
    ctx.template spawn<Stopper>(i + 1);  // would run forever without stop()
  }
};
using StopGraph = PhaseQueue<Phaseless<Stopper>>;

TEST_CASE("ctx.stop() ends a run that would never finish", "[gpu][stop]") {
  const Scheduler scheduler = each_scheduler();
  Runtime<StopGraph> rt{Config{}};
  rt.seed<Stopper>(std::vector<std::uint32_t>{0});
  const Report report = rt.run(scheduler);
  REQUIRE(report.status == RunStatus::stopped);
  REQUIRE(report.ok());
}

TEST_CASE("an impossible timesliced graph config is refused before the run", "[gpu][timesliced]") {
  Config config;
  config.timesliced_graph.graphs_in_flight = 0;
  Runtime<StopGraph> rt{config};
  rt.seed<Stopper>(std::vector<std::uint32_t>{0});
  REQUIRE_THROWS_WITH(rt.run(Scheduler::timesliced_graph), Catch::Contains("timesliced_graph.graphs_in_flight"));
  // Nothing was started: the same runtime still runs under another scheduler.
  REQUIRE(rt.run(Scheduler::megakernel).status == RunStatus::stopped);
}

// ---- host task injection ---------------------------------------------------------------

struct EchoJob {
  std::uint32_t id;
  std::uint32_t* runs;
};
struct Echo {
  using Item = EchoJob;
  static constexpr unsigned threads = 32;
  static constexpr unsigned shared_bytes = 0;
  static constexpr const char* name = "Echo";
  template <class Ctx>
  __device__ void operator()(Worker w, const Item& job, Ctx&) const {
    if (w.rank() == 0) atomicAdd(&job.runs[job.id], 1u);
  }
};
using EchoGraph = PhaseQueue<Phaseless<Echo>>;

TEST_CASE("host threads inject tasks into a running graph; the run ends only after host input closes",
          "[gpu][inject]") {
  const Scheduler scheduler = each_scheduler();
  const std::uint32_t producers = 4, per_producer = 20000, n = producers * per_producer;
  DeviceBuffer<std::uint32_t> runs(n);
  Runtime<EchoGraph> rt{Config{}};
  rt.open_host_input();
  std::atomic<bool> closed{false};
  std::thread feeder([&] {
    std::vector<std::thread> threads;
    for (std::uint32_t p = 0; p < producers; ++p)
      threads.emplace_back([&, p] {
        for (std::uint32_t i = 0; i < per_producer; ++i) {
          rt.submit<Echo>(EchoJob{p * per_producer + i, runs.get()});
          if (i % 5000 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));  // the graph idles meanwhile
        }
      });
    for (auto& t : threads) t.join();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    closed = true;
    rt.close_host_input();
  });
  struct JoinOnExit {  // the feeder must be joined even when the run throws
    std::thread& t;
    ~JoinOnExit() {
      if (t.joinable()) t.join();
    }
  } join_feeder{feeder};
  const Report report = rt.run(scheduler);
  const bool ended_after_close = closed.load();
  feeder.join();
  INFO(report.format());
  REQUIRE(ended_after_close);
  REQUIRE(report.executed("Echo") == n);
  REQUIRE(download(runs) == std::vector<std::uint32_t>(n, 1));
}

// ---- block hand-off (handoff.hpp) -------------------------------------------------------

struct ChainJob {
  std::uint32_t index;    // link number
  std::uint32_t links;
  std::uint32_t stop_at;  // this link calls ctx.stop() (>= links: none does)
  std::uint32_t* ran;     // per link: how often it ran
  std::uint32_t* block;   // per link: the block that ran it
};
// A chain: link i spawns link i + 1 as its continuation, from one thread.
template <unsigned Threads>
struct ChainLink {
  using Item = ChainJob;
  static constexpr unsigned threads = Threads;
  static constexpr unsigned shared_bytes = 0;
  static constexpr const char* name = Threads == 1 ? "Link1" : "Link64";
  template <class Ctx>
  __device__ void operator()(Worker w, const Item& job, Ctx& ctx) const {
    if (w.rank() != 0) return;
    atomicAdd(&job.ran[job.index], 1u);
    job.block[job.index] = blockIdx.x;
    if (job.index == job.stop_at) ctx.stop();
    if (job.index + 1 < job.links) {
      ChainJob next = job;
      ++next.index;
      ctx.template spawn_next<ChainLink>(next);
    }
  }
};
using ChainGraph = PhaseQueue<Phaseless<ChainLink<1>, ChainLink<64>>>;

// `trace`: where the run's trace goes (nullptr: not traced).
template <unsigned Threads>
Report run_chain(Scheduler scheduler, bool handoff, std::uint32_t links, std::uint32_t stop_at,
                 std::vector<std::uint32_t>& ran, std::vector<std::uint32_t>& block, Trace* trace = nullptr) {
  DeviceBuffer<std::uint32_t> ran_d(links), block_d(links);
  upload(ran_d, std::vector<std::uint32_t>(links, 0));
  upload(block_d, std::vector<std::uint32_t>(links, ~0u));
  Config config;
  config.handoff = handoff;
  config.trace = trace != nullptr;
  Runtime<ChainGraph> rt{config};
  rt.seed<ChainLink<Threads>>(std::vector<ChainJob>{ChainJob{0, links, stop_at, ran_d.get(), block_d.get()}});
  const Report report = rt.run(scheduler);
  ran = download(ran_d);
  block = download(block_d);
  if (trace != nullptr) *trace = rt.trace();
  return report;
}

TEST_CASE("a continuation runs in the block that spawned it; results equal those through the queues",
          "[gpu][handoff]") {
  const Scheduler scheduler = each_scheduler();
  const bool handoff = GENERATE(true, false);
  const std::uint32_t links = 3000;
  std::vector<std::uint32_t> ran, block;
  for (const bool wide : {false, true}) {
    INFO("hand-off " << handoff << ", worker size " << (wide ? 64 : 1));
    const Report report = wide ? run_chain<64>(scheduler, handoff, links, links, ran, block)
                               : run_chain<1>(scheduler, handoff, links, links, ran, block);
    INFO(report.format());
    REQUIRE(report.ok());
    REQUIRE(report.status == RunStatus::finished);
    REQUIRE(report.total_executed == links);
    REQUIRE(ran == std::vector<std::uint32_t>(links, 1));
    // With the hand-off, every link after the seeded one stays in the block that took the first.
    if (handoff) REQUIRE(block == std::vector<std::uint32_t>(links, block[0]));
  }
}

// A chain handed off link by link (ctx.spawn_next) runs in the block that took the first
// link: traced, every link gets its own record, in that block, and the records do not overlap.
TEST_CASE("a traced chain records every link once, one after another, in one block", "[gpu][handoff][trace]") {
  const Scheduler scheduler = each_scheduler();
  const std::uint32_t links = 2000;
  std::vector<std::uint32_t> ran, block;
  for (const bool wide : {false, true}) {
    INFO("worker size " << (wide ? 64 : 1));
    Trace trace;
    const Report report = wide ? run_chain<64>(scheduler, true, links, links, ran, block, &trace)
                               : run_chain<1>(scheduler, true, links, links, ran, block, &trace);
    INFO(report.format());
    REQUIRE(report.ok());
    REQUIRE(report.total_executed == links);
    REQUIRE(ran == std::vector<std::uint32_t>(links, 1));
    const TraceCheckResult check = check_trace(trace);
    INFO(format(check));
    REQUIRE(check.ok);
    REQUIRE(trace.tasks.size() == links);
    std::vector<TaskRecord> records = trace.tasks;
    std::sort(records.begin(), records.end(), [](const TaskRecord& a, const TaskRecord& b) { return a.start_ns < b.start_ns; });
    // One link at a time: each starts after the one before it ended.
    for (std::size_t i = 1; i < records.size(); ++i) REQUIRE(records[i - 1].end_ns <= records[i].start_ns);
    for (const TaskRecord& r : records) {
      REQUIRE(r.block == block[0]);
      REQUIRE(r.end_ns >= r.start_ns);
    }
  }
}

// ---- a wave spawned into the running queue late in a round ----------------------------

struct WaveJob {
  std::uint32_t* arrived;  // first-wave tasks finished
  std::uint32_t* ran;      // per second-wave task: times it ran
  std::uint32_t first_wave, second_wave, level, index;
};
struct Wave {
  using Item = WaveJob;
  static constexpr unsigned threads = 32;
  static constexpr unsigned shared_bytes = sizeof(std::uint32_t);
  static constexpr const char* name = "Wave";
  template <class Ctx>
  __device__ void operator()(Worker w, const Item& it, Ctx& ctx) const {
    if (it.level == 1) {
      if (w.rank() == 0) atomicAdd(&it.ran[it.index], 1u);
      return;
    }
    // The last task of the first wave spawns the whole second wave into this queue.
    std::uint32_t* last = w.shared<std::uint32_t>();
    if (w.rank() == 0) *last = atomicAdd(it.arrived, 1u) == it.first_wave - 1;
    w.sync();
    if (*last)
      for (std::uint32_t i = w.rank(); i < it.second_wave; i += w.size())
        ctx.template spawn<Wave>(WaveJob{it.arrived, it.ran, it.first_wave, it.second_wave, 1, i});
  }
};
using WaveGraph = PhaseQueue<Phaseless<Wave>>;

TEST_CASE("a wave spawned into the running queue after most blocks left gets a launch of its own",
          "[gpu][timesliced][device_controller]") {
  const Scheduler scheduler = each_scheduler();
  const std::uint32_t first = 256, second = 20000;
  DeviceBuffer<std::uint32_t> arrived(1), ran(second);
  upload(arrived, std::vector<std::uint32_t>{0});
  upload(ran, std::vector<std::uint32_t>(second, 0));
  Config config;
  config.queue_capacities["Wave"] = first + second;
  Runtime<WaveGraph> rt{config};
  std::vector<WaveJob> seeds(first);
  for (std::uint32_t i = 0; i < first; ++i) seeds[i] = WaveJob{arrived.get(), ran.get(), first, second, 0, i};
  rt.seed<Wave>(seeds);
  const Report report = rt.run(scheduler);
  INFO(report.format());
  REQUIRE(report.ok());
  REQUIRE(report.executed("Wave") == first + second);
  REQUIRE(download(ran) == std::vector<std::uint32_t>(second, 1));
  // Timesliced: the block of the last first-wave task leaves the second wave to a round sized
  // for it instead of draining it alone (the kernel of the first wave had many blocks).
  if (scheduler == Scheduler::timesliced || scheduler == Scheduler::timesliced_graph) REQUIRE(report.launches >= 2);
}

// A root that spawns a few children into its own queue with plain spawns (through the queue,
// not the hand-off slot). Under the timesliced schedulers the block that ran the root claimed
// every pending task, so it leaves without another look at its queue unless a task it ran put
// one there (drain_queue, timesliced.cuh): here one did, so the children run in the root's round.
struct SproutJob {
  std::uint32_t* ran;
  std::uint32_t children, level, index;
};
struct Sprout {
  using Item = SproutJob;
  static constexpr unsigned threads = 32;
  static constexpr unsigned shared_bytes = 0;
  static constexpr const char* name = "Sprout";
  template <class Ctx>
  __device__ void operator()(Worker w, const Item& it, Ctx& ctx) const {
    if (it.level == 1) {
      if (w.rank() == 0) atomicAdd(&it.ran[it.index], 1u);
      return;
    }
    if (w.rank() < it.children) ctx.template spawn<Sprout>(SproutJob{it.ran, it.children, 1, w.rank()});
  }
};
using SproutGraph = PhaseQueue<Phaseless<Sprout>>;

TEST_CASE("a block that claimed every pending task still runs what its tasks put into its queue, in the same round",
          "[gpu][timesliced][device_controller]") {
  const Scheduler scheduler = each_scheduler();
  std::mt19937 rng(Catch::rngSeed());
  const std::uint32_t children = std::uniform_int_distribution<std::uint32_t>(1, 4)(rng);
  DeviceBuffer<std::uint32_t> ran(children);
  for (int run = 0; run < 3; ++run) {
    upload(ran, std::vector<std::uint32_t>(children, 0));
    Runtime<SproutGraph> rt{Config{}};
    rt.seed<Sprout>(std::vector<SproutJob>{SproutJob{ran.get(), children, 0, 0}});
    const Report report = rt.run(scheduler);
    INFO(report.format() << "children " << children);
    REQUIRE(report.ok());
    REQUIRE(report.executed("Sprout") == 1 + children);
    REQUIRE(download(ran) == std::vector<std::uint32_t>(children, 1));
    // One block's slots hold the children, so the root's block runs them: one round, one launch.
    if (scheduler == Scheduler::timesliced || scheduler == Scheduler::timesliced_graph) {
      REQUIRE(report.rounds == 1);
      REQUIRE(report.launches == 1);
    }
  }
}

TEST_CASE("a task handed off when the run stops is left in its queue, not lost", "[gpu][handoff][stop]") {
  const Scheduler scheduler = each_scheduler();
  const std::uint32_t links = 1000, stop_at = 500;
  std::vector<std::uint32_t> ran, block;
  const Report report = run_chain<1>(scheduler, true, links, stop_at, ran, block);
  INFO(report.format());
  REQUIRE(report.ok());
  REQUIRE(report.status == RunStatus::stopped);
  REQUIRE(report.executed("Link1") == stop_at + 1);
  REQUIRE(report.queues[0].queued == 1);  // link stop_at + 1, handed off, then flushed
  for (std::uint32_t i = 0; i < links; ++i) REQUIRE(ran[i] == (i <= stop_at ? 1u : 0u));
}

// ---- continuations into another phase ----------------------------------------------------

// Chains that alternate between two phases: link i of every chain runs in the phase change i
// (phase i % 2), each link the continuation of the one before (ctx.spawn_next). A continuation
// of another phase than its spawner's goes through its queue (the hand-off slot takes only
// queues of the running phase), and must run in its own phase, never earlier.
struct PhaseLinkJob {
  std::uint32_t chain;
  std::uint32_t index;
  std::uint32_t links;
  std::uint32_t* ran;     // [chain * links + index]: runs of the link
  std::uint32_t* epoch;   // the phase changes before it ran
  std::uint32_t stop_at;  // the link that calls ctx.stop() after spawning its successor (~0u: none)
};
template <int Parity>
struct PhaseLink {
  using Item = PhaseLinkJob;
  static constexpr unsigned threads = 32;
  static constexpr unsigned shared_bytes = 0;
  static constexpr const char* name = Parity == 0 ? "Even" : "Odd";
  template <class Ctx>
  __device__ void operator()(Worker w, const Item& job, Ctx& ctx) const {
    if (w.rank() != 0) return;
    const std::uint32_t at = job.chain * job.links + job.index;
    atomicAdd(&job.ran[at], 1u);
    job.epoch[at] = ctx.phase().epoch;
    if (job.index + 1 < job.links) {
      PhaseLinkJob next = job;
      ++next.index;
      ctx.template spawn_next<PhaseLink<1 - Parity>>(next);
    }
    if (job.index == job.stop_at) ctx.stop();
  }
};
using PhaseLinkGraph = CyclicPhaseQueue<Phase<PhaseLink<0>>, Phase<PhaseLink<1>>>;

struct PhaseLinkRun {
  Report report;
  std::vector<std::uint32_t> ran, epoch;
};
PhaseLinkRun run_phase_links(Scheduler scheduler, bool handoff, std::uint32_t chains, std::uint32_t links,
                             std::uint32_t stop_at = ~0u) {
  const std::size_t n = std::size_t(chains) * links;
  DeviceBuffer<std::uint32_t> ran(n), epoch(n);
  upload(ran, std::vector<std::uint32_t>(n, 0));
  upload(epoch, std::vector<std::uint32_t>(n, ~0u));
  Config config;
  config.handoff = handoff;
  Runtime<PhaseLinkGraph> rt{config};
  std::vector<PhaseLinkJob> seeds;
  for (std::uint32_t c = 0; c < chains; ++c)
    seeds.push_back(PhaseLinkJob{c, 0, links, ran.get(), epoch.get(), stop_at});
  rt.seed<PhaseLink<0>>(seeds);
  PhaseLinkRun out;
  out.report = rt.run(scheduler);
  out.ran = download(ran);
  out.epoch = download(epoch);
  return out;
}

TEST_CASE("a continuation of the next phase runs in that phase, once, under every scheduler",
          "[gpu][phases][handoff]") {
  const Scheduler scheduler = each_scheduler();
  const bool handoff = GENERATE(true, false);
  const std::uint32_t links = 400;
  for (const std::uint32_t chains : {1u, 3000u}) {
    INFO("hand-off " << handoff << ", chains " << chains);
    const PhaseLinkRun r = run_phase_links(scheduler, handoff, chains, links);
    INFO(r.report.format());
    REQUIRE(r.report.ok());
    REQUIRE(r.report.status == RunStatus::finished);
    REQUIRE(r.report.total_executed == std::uint64_t(chains) * links);
    REQUIRE(r.report.phase_changes == links - 1);
    for (std::uint32_t c = 0; c < chains; ++c)
      for (std::uint32_t i = 0; i < links; ++i) {
        const std::size_t at = std::size_t(c) * links + i;
        INFO("chain " << c << " link " << i);
        REQUIRE(r.ran[at] == 1);
        REQUIRE(r.epoch[at] == i);  // in its own phase change, never earlier or later
      }
  }
}

// A stop ends the phase sequence: the phase in which a task stops is the last one that runs,
// and the successor it spawned into the next phase stays queued. Each link here is alone in
// its phase, so blocks that poll while it runs advance the phase the moment it ends. The code
// before PhaseController::stop allowed an idle step that read the run status before the stop
// and the phase's count after it to start the next phase; these runs never caught it (they
// passed on that code too, on an H200: an idle step's two reads lie closer together than a
// stop and its batch's finish), so the host test in test_phase_table.cpp shows that case.
TEST_CASE("a stop keeps the next phase from starting, run after run, under every scheduler",
          "[gpu][phases][stop]") {
  const Scheduler scheduler = each_scheduler();
  const bool handoff = GENERATE(true, false);
  const std::uint32_t links = 64, runs = 40;
  std::uint32_t successors_run = 0;
  for (std::uint32_t run = 0; run < runs; ++run) {
    const std::uint32_t stop_at = 5 + run % 50;
    INFO("hand-off " << handoff << ", run " << run << ", stop at link " << stop_at);
    const PhaseLinkRun r = run_phase_links(scheduler, handoff, 1, links, stop_at);
    INFO(r.report.format());
    REQUIRE(r.report.ok());
    REQUIRE(r.report.status == RunStatus::stopped);
    for (std::uint32_t i = 0; i <= stop_at; ++i) REQUIRE(r.ran[i] == 1);
    const std::uint32_t late = r.ran[stop_at + 1];  // the successor ran after the stop
    successors_run += late;
    if (late != 0) continue;  // counted, and failed below once every run is in
    REQUIRE(r.report.phase_changes == stop_at);
    REQUIRE(r.report.total_executed == stop_at + 1);
    std::uint64_t queued = 0;
    for (const auto& q : r.report.queues) queued += q.queued;
    REQUIRE(queued == 1);  // the successor, left in its queue
  }
  UNSCOPED_INFO(successors_run << " of " << runs << " successors ran after the stop");
  REQUIRE(successors_run == 0);
}

// Fan-out/fan-in trees on queues no larger than a level (as in the fan_tree benchmark): every
// ring wraps each level while workers of both types produce into the other's queue (forks
// spawn leaves, leaves release the next fork). A block that ran a batch's later rounds from
// their queue slots, read one at a time, held those slots while its earlier tasks ran; when
// those waited for a slot of the other queue held the same way, the blocks waited on each
// other until the watchdog ended the run (PDC spin, whose worker kernels claim deep batches on
// small grids, about 1 run in 10 of the benchmark's quick group on an H100, and this test).
// Blocks now stage a whole batch before its first task runs (batch_staging.hpp).
// Many short runs, each must finish with exact counts.
using apiary_bench::fan_tree::FanGraph;  // the fan_tree benchmark's Fork and Leaf
using TreeFork = apiary_bench::fan_tree::Fork;

TEST_CASE("fan-out/fan-in trees on queues a level fills run to the end, run after run",
          "[gpu][stall][dependency]") {
  const Scheduler scheduler = each_scheduler();
  struct Shape {
    std::uint32_t trees, fan_out;
  };
  for (const Shape shape : {Shape{1024, 32}, Shape{128, 256}}) {
    const std::uint32_t depth = 16;
    Config config;
    config.watchdog_seconds = 5;
    config.queue_capacities = {{"Fork", 1024}, {"Leaf", std::uint64_t(shape.trees) * shape.fan_out}};
    config.dependency_capacity = shape.trees * depth;
    config.waiting_storage_capacity = 2 * shape.trees;
    Runtime<FanGraph> rt{config};
    std::vector<TreeFork::Item> roots(shape.trees);
    for (std::uint32_t t = 0; t < shape.trees; ++t) roots[t] = TreeFork::Item{t, 0, depth, shape.fan_out};
    for (int run = 0; run < 100; ++run) {
      rt.seed<TreeFork>(roots);
      const Report report = rt.run(scheduler);
      INFO("trees " << shape.trees << " x fan-out " << shape.fan_out << ", run " << run << "\n" << report.format());
      REQUIRE(report.status == RunStatus::finished);
      REQUIRE(report.executed("Fork") == std::uint64_t(shape.trees) * (depth + 1));
      REQUIRE(report.executed("Leaf") == std::uint64_t(shape.trees) * depth * shape.fan_out);
      REQUIRE(report.parked == 0);
    }
  }
}

// The staging area (batch_staging.hpp): a block copies its whole batch there before any task
// runs, so a batch is no larger than the area holds. The fan tree's small items get the largest
// batches (the area takes what the occupancy leaves); the sums' 1024-thread blocks of one-thread
// workers need a large round (16 KiB), and every queue gets at least one round.
TEST_CASE("a block stages the largest batches of small items, and a round of every queue at least",
          "[gpu][launch]") {
  const Scheduler scheduler = each_scheduler();
  Config config;
  config.trace = GENERATE(false, true);
  INFO("trace " << config.trace);
  const ResidentBlocks fan = Runtime<FanGraph>::resident_blocks(config, scheduler);
  for (std::uint32_t q = 0; q < 2; ++q) REQUIRE(fan.layout.max_batch[q] == fan.layout.slots[q] * max_batch_rounds);
  REQUIRE(fan.layout.staging_bytes <= staging_cap(fan.per_sm));
  const ResidentBlocks sums = Runtime<SumGraph>::resident_blocks(config, scheduler);
  REQUIRE(sums.layout.block_threads == 1024);
  const std::uint32_t task_bytes = staged_task_bytes(queue_stride(sizeof(SumJob)), config.trace);
  for (std::uint32_t q = 0; q < 8; ++q) {
    REQUIRE(sums.layout.staging_bytes >= sums.layout.slots[q] * task_bytes);
    REQUIRE(sums.layout.max_batch[q] >= sums.layout.slots[q]);
  }
}

// ---- a stale claim, settled on the device ------------------------------------------------

// The host test "pick_batch: tasks claimed after their phase ended go back to their queue, slots
// freed first", by one device thread on device memory: the code a megakernel block runs when
// the phase of a cyclic graph changes between its look and its claim (a race no run can be
// made to hit on demand). Queue 0 runs in phase 0, queue 1 in phase 1; capacity 4.
struct StaleClaimOutcome {
  std::uint32_t stale, count, queue, error;
  std::uint64_t seq[2], available, outstanding, pending, popped[2];
};
__global__ void settle_stale_claim(QueueView q0, QueueView q1, RunState* state, const __grid_constant__ PhaseTableView table,
                                   std::byte* scratch, StaleClaimOutcome* out) {
  const QueueView views[2] = {q0, q1};
  const PhaseController pc{state, &table};
  state->phase_word = PhaseWord{1, 4}.pack();
  pc.add_pending(1, 2);
  for (std::uint64_t v = 10; v < 12; ++v) views[1].push(v);
  std::uint32_t rotor = 0;
  const Batch b = pick_batch(
      views, pc, rotor,
      [&](std::uint32_t, std::int64_t available) {
        state->phase_word = PhaseWord{0, 5}.pack();  // phase 1 ended, phase 0 began
        return static_cast<std::uint32_t>(available);
      },
      [] { return std::uint32_t(0); });
  *out = StaleClaimOutcome{b.stale, b.count, b.queue};
  if (b.stale) settle_stale<true>(views, pc, b, scratch);
  for (int i = 0; i < 2; ++i) out->seq[i] = views[1].seq[i];
  out->available = std::uint64_t(views[1].available_hint());
  out->outstanding = std::uint64_t(views[1].outstanding_hint());
  out->pending = state->pending[2].value;
  for (int i = 0; i < 2; ++i) {
    std::uint64_t v = 0;
    views[1].pop(v);
    out->popped[i] = v;
  }
  out->error = state->error.code;
}

TEST_CASE("a claim made after its phase ended goes back to its queue, slots freed first, on the device", "[gpu][phases]") {
  constexpr std::uint64_t capacity = 4;
  DeviceBuffer<RunState> state(1);
  DeviceBuffer<QueueCounters> counters(2);
  DeviceBuffer<std::uint64_t> seq(2 * capacity), items(2 * capacity), scratch(2 * 2);
  QueueView views[2];
  for (std::uint32_t q = 0; q < 2; ++q) {
    views[q].counters = counters.get() + q;
    views[q].seq = seq.get() + q * capacity;
    views[q].items = reinterpret_cast<std::byte*>(items.get() + q * capacity);
    views[q].mask = capacity - 1;
    views[q].stride = 8;
    views[q].index = q;
    views[q].error = &state.get()->error;
  }
  PhaseTableView table{};
  table.num_queues = 2;
  table.num_phases = 2;
  table.cyclic = true;
  table.phases[0] = {0, 1};
  table.phases[1] = {1, 2};
  table.queue_phase[0] = 0;
  table.queue_phase[1] = 1;
  DeviceBuffer<StaleClaimOutcome> out(1);
  settle_stale_claim<<<1, 1>>>(views[0], views[1], state.get(), table, reinterpret_cast<std::byte*>(scratch.get()),
                               out.get());
  APIARY_CUDA_CHECK(cudaDeviceSynchronize());
  const StaleClaimOutcome o = download(out)[0];
  CHECK(o.stale == 1);
  CHECK(o.queue == 1);
  CHECK(o.count == 2);
  CHECK(o.seq[0] == capacity);  // both slots freed for the next lap
  CHECK(o.seq[1] == capacity);
  CHECK(o.available == 2);      // and both tasks queued again, still pending
  CHECK(o.outstanding == 2);
  CHECK(o.pending == 2);
  CHECK(o.popped[0] == 10);
  CHECK(o.popped[1] == 11);
  CHECK(o.error == 0);
}

}  // namespace runtime_gpu_tests

int main(int argc, char** argv) {
  apiary::testing::require_gpu_or_skip("apiary_runtime_gpu_tests");
  return Catch::Session().run(argc, argv);
}
