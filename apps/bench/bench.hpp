// apiary-bench-runtime: what the runtime's scheduling costs per task, against one host
// kernel launch per task, one CUDA graph node per task and one plain data-parallel kernel.
//
// The measurement code (.cu, one translation unit per graph family so nvcc runs in
// parallel) hands back plain Measurement records; main.cpp adds the device, the commit and
// the baseline ratios and writes one JSON object per line. This header compiles without nvcc.
#pragma once

#include <apiary/config.hpp>
#include <apiary/scheduler.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace apiary_bench {

struct Options {
  bool quick = false;
  int repeats = 7;                     // timed runs per measurement (after one warm-up run)
  std::uint32_t block_threads = 0;     // megakernel block size where no sweep runs (0: automatic)
  std::uint32_t blocks_per_sm = 0;     // megakernel blocks per SM (0: as many as fit)
  bool handoff = true;                 // Config::handoff (dependency_chain measures both)
  apiary::TimeslicedGraphConfig timesliced_graph;  // --graph-rounds, --graphs-in-flight
  apiary::DeviceControllerConfig device_controller;  // --pdc-linger-us
  std::string json_file;               // JSON lines are appended here as well as to stdout
  std::vector<std::string> only;       // benchmark groups to run (empty: all)
  std::vector<apiary::Scheduler> schedulers{apiary::Scheduler::megakernel};  // --scheduler, in order
  apiary::Scheduler scheduler = apiary::Scheduler::megakernel;  // the one the groups run under now
  bool baselines = true;               // --no-baselines: skip them (ratios are left out)
  std::string synthetic_dir;           // thesis11_{phases,individual}.json live here
  std::string trace_dir;               // synthetic_tree writes its individual-mode traces here ("" = none)

  bool wants(const std::string& group) const;
};

// A key and a number or a text, written into "config" or at the top level of a record.
struct Field {
  std::string key;
  double number = 0;
  std::string text;
  bool is_text = false;

  static Field num(std::string k, double v) { return {std::move(k), v, {}, false}; }
  static Field str(std::string k, std::string v) { return {std::move(k), 0, std::move(v), true}; }
};

struct Measurement {
  std::string benchmark;
  std::vector<Field> config;       // what was measured (worker size, block threads, fan-in, ...)
  std::vector<Field> extra;        // further results (rates the generic fields do not cover)
  std::uint64_t tasks = 0;         // the count throughput and ns per task refer to
  std::vector<double> ms;          // timed repeats: kernel time (CUDA events; host clock where config says "clock": "host")
  std::vector<double> seed_ms;     // host time to seed each repeat (not part of ms)
  std::string launch;              // the megakernel launch the runtime chose
  std::string baseline;            // which baseline ns_per_task is compared with ("" = the default pair)
  std::uint64_t rounds = 0;        // Report::rounds / launches of the last timed run (timesliced,
  std::uint64_t launches = 0;      // device controller); 0 where the scheduler has no rounds
};

// What a measurement is compared with; filled by the baseline group first.
struct Baselines {
  double host_launch_ns = 0;                  // one <<<1, 32>>> launch per task
  double graph_node_ns = 0;                   // one kernel node per task in a CUDA graph
  double graph_while_ns = 0;                  // one iteration of a CUDA graph WHILE node (1-kernel body)
  double launch_wait_ns = 0;                  // one empty launch + cudaStreamSynchronize (host clock)
  double plain_kernel_ns[3] = {0, 0, 0};      // one data-parallel kernel, worker size 1 / 32 / 256
};

// A measurement that did not produce the expected result (wrong counts, a failed run).
class Failure : public std::runtime_error {
 public:
  Failure(std::string benchmark, const std::string& what)
      : std::runtime_error(what), benchmark_(std::move(benchmark)) {}
  const std::string& benchmark() const { return benchmark_; }

 private:
  std::string benchmark_;
};

using Sink = std::function<void(const Measurement&)>;

double median(std::vector<double> v);
double minimum(const std::vector<double>& v);

// Host wall-clock milliseconds of `work`, once per repeat after one warm-up pass (module load,
// first launches): for what the host itself waits for (records say "clock": "host").
template <class Work>
std::vector<double> host_timed(int repeats, Work&& work) {
  std::vector<double> ms;
  for (int r = -1; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    work();
    if (r >= 0) ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return ms;
}

// Baselines (baselines.cu).
Measurement measure_host_launches(std::uint32_t launches, int repeats);
Measurement measure_graph_nodes(std::uint32_t nodes, int repeats);
Measurement measure_graph_while(std::uint32_t iterations, int repeats);
// wait: "event", "mapped" (one kernel per round trip) or "tsk_round" (the timesliced round's shape).
Measurement measure_host_round_trips(const char* wait, std::uint32_t iterations, int repeats);
Measurement measure_launch_wait(std::uint32_t iterations, int repeats);
Measurement measure_plain_kernel(std::uint32_t worker_size, std::uint64_t tasks, int repeats);
// A device graph launching itself again from the device: shape
// "one node", "pdc_wave" (the device controller's wave graph with empty work), "pdc_wave_batched"
// (its node updates in one call) or "pdc_wave_fixed" (the same graph without node updates).
Measurement measure_device_graph_relaunch(const char* shape, std::uint32_t iterations, int repeats);

// The runtime (empty_tasks*.cu, spawn_tasks.cu, dependencies.cu). Each emits its records
// through `sink` as they are measured and throws Failure when a check fails.
void bench_empty_tasks_1(const Options& o, const Sink& sink);
void bench_empty_tasks_32(const Options& o, const Sink& sink);
void bench_empty_tasks_256(const Options& o, const Sink& sink);
void bench_spawned_tasks(const Options& o, const Sink& sink);
void bench_dependency_resolution(const Options& o, const Sink& sink);
void bench_dependency_chain(const Options& o, const Sink& sink);
void bench_fan_tree(const Options& o, const Sink& sink);         // fan_tree.cu
void bench_phase_rounds(const Options& o, const Sink& sink);     // phase_rounds.cu
void bench_synthetic_tree(const Options& o, const Sink& sink);   // synthetic_tree.cu
void bench_run_overhead(const Options& o, const Sink& sink);     // run_overhead.cu
// The critical-path bound of a saved trace of a synthetic tree, as one JSON object (no GPU
// needed; --bound TRACE CONFIG). Throws apiary::InputError for unreadable files.
std::string trace_bound_json(const std::string& trace_file, const std::string& config_file);

// A megakernel block-size sweep only means something under the megakernel; the other
// schedulers run each configuration once, with block_threads 0 (automatic).
inline bool sweeps_block_threads(const Options& o) { return o.scheduler == apiary::Scheduler::megakernel; }

}  // namespace apiary_bench
