// The host half of the runtime that does not depend on the task code: it owns the device
// structures of a graph (queues, waiting storage, dependency pool, run state, trace buffers),
// seeds them, supervises a running scheduler (watchdog) and turns the end state into a Report
// or an exception. Runtime<Graph> (runtime.cuh) adds the compiled task code.
#pragma once

#include <apiary/config.hpp>
#include <apiary/device_graph.hpp>
#include <apiary/phase_table.hpp>
#include <apiary/report.hpp>
#include <apiary/run_bookkeeping.hpp>
#include <apiary/run_graph.hpp>
#include <apiary/trace.hpp>

#include <cuda_runtime_api.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

namespace apiary {

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  std::uint32_t sm_count = 0;
  std::uint32_t max_shared_per_block = 0;   // opt-in maximum
  std::uint32_t max_threads_per_sm = 0;
  std::uint32_t max_shared_per_sm = 0;      // the largest shared memory carveout
  std::uint32_t reserved_shared_per_block = 0;  // what the system takes of a block's shared memory
};

// Fails with CudaError ("no CUDA device ...") where there is no usable GPU.
DeviceInfo query_device(int ordinal);

class DeviceRuntime {
 public:
  // `max_item_bytes`: the largest work item of the compiled task types (sizes the waiting
  // storage slots and the release buffers). `bookkeeping`: the start and end kernels of a run
  // (run_bookkeeping.cuh's run_bookkeeping(), compiled with the task code).
  DeviceRuntime(PhaseTable table, Config config, std::uint32_t max_item_bytes, RunBookkeeping bookkeeping);
  ~DeviceRuntime();
  DeviceRuntime(const DeviceRuntime&) = delete;
  DeviceRuntime& operator=(const DeviceRuntime&) = delete;

  const PhaseTable& table() const { return table_; }
  const Config& config() const { return config_; }
  const DeviceInfo& device() const { return device_; }
  cudaStream_t stream() const { return stream_; }

  // Appends `count` items of `item_size` bytes to queue `queue` before a run (copied on
  // stream() through pinned memory: the call returns before they reach the device). Throws
  // CapacityError naming the queue and config key when they do not fit.
  void seed(std::uint32_t queue, const void* items, std::size_t count, std::size_t item_size);
  // The runtime's dependency pool (Config::dependency_capacity entries, zeroed before each run).
  Dependency* dependency_pool() const;
  std::uint32_t dependency_limit() const;  // dependencies allocated: the capacity plus blocks' shares
  std::uint32_t waiting_slots() const;     // waiting-storage slots: the capacity plus a slot per thread

  // Host task injection (host_input.hpp). open_host_input() before run(): the run then lasts
  // until close_host_input(). submit() may be called from any thread while input is open.
  void open_host_input();
  void submit(std::uint32_t queue, const void* item, std::size_t bytes);
  void close_host_input();
  // The supervising thread: moves submitted tasks into the device mailbox (called by wait()).
  void drain_host_input();

  // A device pointer every task can read through ctx.user_data<T>().
  void set_user_data(const void* data) { user_data_ = data; }

  // Device memory set before the next run by its start kernel, ordered before the run's tasks
  // and after the caller's earlier work on the legacy stream, without a launch or a copy of
  // its own (each is a command and a latency in front of a short run). fill_before_run sets
  // `count` elements of `element_bytes` (4 or 8, `device` aligned to it) to the low bytes of
  // `pattern`, at most max_fills per run; copy_before_run copies `bytes` (whole 8-byte words,
  // `device` 8-byte aligned) through the staging arena, as small seeds travel. Both apply to
  // the next run only; the regions must not overlap.
  void fill_before_run(void* device, std::uint64_t pattern, std::uint32_t element_bytes, std::size_t count);
  void copy_before_run(void* device, const void* host, std::size_t bytes);

  // Device memory the end of every run copies into the summary it leaves in mapped memory
  // (`bytes` <= end_copy_limit; nullptr, 0: none): the run's result (a solver's state, a
  // count) reaches the host with the run's end, without a copy of its own after it (a
  // synchronous copy after the run measured 7-19 us of host time on an H100, on the critical
  // path of a short run).
  // copied_at_end() holds it after run(), until the next run.
  void copy_at_end(const void* device, std::size_t bytes);
  const std::byte* copied_at_end() const;

  // Scheduler protocol: begin_run() launches the reset of the run state on stream() and
  // returns the device view; the scheduler launches its kernels on stream() and calls
  // supervise() (or mark_end()), which queues the end-of-run summary behind them; then
  // finish_run() builds the report from the summary.
  DeviceGraph begin_run();
  // One-kernel schedulers (the megakernel), in place of begin_run(), the launch and
  // supervise(): the run's start kernel, `scheduler` and the end kernel as one CUDA graph
  // launch (run_graph.hpp), then supervised as supervise() does. `scheduler`'s arguments come
  // from view(); finish_run() follows as usual.
  void run_in_graph(const KernelLaunch& scheduler);
  // What begin_run() returns, without starting a run (no reset, no clock): a scheduler builds
  // what it keeps between runs from it before the run's clock starts.
  DeviceGraph view() const;
  void note_launch(const std::string& scheduler, unsigned grid, unsigned block, unsigned shared);
  // Persistent schedulers: mark_end(), then waits for the run's work on stream() and its
  // summary while the watchdog watches.
  void supervise();
  // Waits for `event` under the watchdog (a host-driven scheduler's round; the device
  // controller's statistics, queued after mark_end()). False when the watchdog stopped the run
  // (the device was told to abort) or the kernels did not return.
  bool wait(cudaEvent_t event);
  // The run's work on stream() ends here (its clock stops); queues the end-of-run summary.
  void mark_end();
  // Host-driven schedulers and the device controller: rounds and kernel launches of the run
  // (shown in the report).
  void note_rounds(std::uint64_t rounds, std::uint64_t launches) {
    rounds_ = rounds;
    launches_ = launches;
  }
  // Reads the end state. Throws CapacityError/StallError/Error when the run failed (the
  // message carries the report).
  Report finish_run();

  // The trace of the last run (Config::trace).
  const Trace& trace() const { return trace_; }

  // What a scheduler keeps from one run of this runtime to the next (the PDC wave's
  // instantiated device graph): made by `make()` on first use, destroyed with the runtime
  // (left alone, like the device buffers, when a kernel hung).
  template <class T, class Make>
  T& kept(Make&& make) {
    if (!kept_ || *kept_type_ != typeid(T)) {
      kept_ = std::shared_ptr<T>(std::forward<Make>(make)());
      kept_type_ = &typeid(T);
    }
    return *static_cast<T*>(kept_.get());
  }

 private:
  struct Buffers;
  struct Staging;
  void allocate();
  void prepare_run();
  RunStart run_start();
  void start_queued();
  RunEnd run_end() const;
  // The bookkeeping kernels' grids at most (they size themselves by the work, below this).
  unsigned start_grid_limit() const { return 4 * device_.sm_count; }
  unsigned end_grid_limit() const { return 2 * device_.sm_count; }
  void upload(void* device, const void* host, std::size_t bytes);
  CopyList copy_list();
  void summarize();
  Report build_report(const RunSummary& summary) const;
  void describe_unresolved(std::uint32_t used, Report& report) const;
  void collect_trace(const TraceCursors& cursors);
  [[noreturn]] void throw_failure(const RunState& state, Report report) const;

  PhaseTable table_;
  Config config_;
  DeviceInfo device_;
  std::uint32_t max_item_bytes_;
  RunBookkeeping bookkeeping_;
  std::unique_ptr<Buffers> buffers_;
  std::unique_ptr<Staging> staging_;
  // The queue counters as the device will have them when the next run starts: read back with
  // each run's summary, advanced by seed().
  std::vector<QueueCounters> counters_;
  bool summarized_ = false;  // the run's summary is queued on stream_
  cudaStream_t stream_ = nullptr;
  cudaStream_t monitor_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr, summary_done_ = nullptr;
  std::string scheduler_ = "none";
  std::string launch_;
  const void* user_data_ = nullptr;
  std::vector<StagedFill> fills_;  // fill_before_run, for the next run's start kernel
  const void* end_copy_from_ = nullptr;  // copy_at_end
  std::uint32_t end_copy_bytes_ = 0;
  std::uint64_t rounds_ = 0, launches_ = 0;
  struct HostInput;
  std::unique_ptr<HostInput> input_;
  bool watchdog_fired_ = false;
  bool kernel_hung_ = false;
  Trace trace_;
  std::unique_ptr<RunGraph> run_graph_;  // run_in_graph's, made by its first run
  std::shared_ptr<void> kept_;
  const std::type_info* kept_type_ = nullptr;
};

}  // namespace apiary
