// apiary::Runtime<Graph>: the user-facing runtime. Declare task types and phases, seed
// tasks, run with any scheduler:
//
//   apiary::Runtime<Graph> rt{apiary::Config::load("configs/table.json")};
//   rt.seed<CreateLeg>(legs);
//   apiary::Report r = rt.run(apiary::Scheduler::megakernel);
//
// Data-driven graphs (DataGraph<Code>) take their phase table at construction.
#pragma once

#include <apiary/config.hpp>
#include <apiary/context.cuh>
#include <apiary/device_runtime.hpp>
#include <apiary/error.hpp>
#include <apiary/graph.hpp>
#include <apiary/report.hpp>
#include <apiary/run_bookkeeping.cuh>
#include <apiary/schedulers/device_controller.cuh>
#include <apiary/schedulers/megakernel.cuh>
#include <apiary/schedulers/timesliced.cuh>
#include <apiary/schedulers/timesliced_graph.cuh>
#include <apiary/trace.hpp>

#include <array>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace apiary {

template <class Graph>
class Runtime {
 public:
  using Traits = GraphTraits<Graph>;
  static constexpr std::uint32_t max_item_bytes = Context<Graph>::max_item_bytes;

  explicit Runtime(Config config = {})
    requires Traits::declared
      : impl_(declared_table(config), config, max_item_bytes, run_bookkeeping()) {}

  Runtime(PhaseTable table, Config config)
    requires(!Traits::declared)
      : impl_(std::move(table), std::move(config), max_item_bytes, run_bookkeeping()) {}

  // Adds tasks of type T before a run.
  template <class T>
  void seed(std::span<const typename T::Item> items)
    requires Traits::declared
  {
    constexpr std::uint32_t q = Traits::template queue_of<T>;
    static_assert(q != ~0u, "apiary: seed<T>: T is not a task type of this graph");
    impl_.seed(q, items.data(), items.size(), sizeof(typename T::Item));
  }
  template <class T>
  void seed(const std::vector<typename T::Item>& items)
    requires Traits::declared
  {
    seed<T>(std::span<const typename T::Item>(items));
  }
  // Adds items to queue `queue` (data-driven graphs; also works for declared graphs).
  template <class Item>
  void seed_queue(std::uint32_t queue, std::span<const Item> items) {
    impl_.seed(queue, items.data(), items.size(), sizeof(Item));
  }

  // Host task injection while a graph runs: open_host_input() before run(); then any host
  // thread may submit<T>(item) until close_host_input() ("no more host input"). The run ends
  // only after input is closed and everything ran.
  void open_host_input() { impl_.open_host_input(); }
  template <class T>
  void submit(const typename T::Item& item)
    requires Traits::declared
  {
    constexpr std::uint32_t q = Traits::template queue_of<T>;
    static_assert(q != ~0u, "apiary: submit<T>: T is not a task type of this graph");
    impl_.submit(q, &item, sizeof(item));
  }
  template <class Item>
  void submit_to(std::uint32_t queue, const Item& item) {
    impl_.submit(queue, &item, sizeof(item));
  }
  void close_host_input() { impl_.close_host_input(); }

  // Device memory the tasks read through ctx.user_data<T>() (parameters, input pointers).
  void set_user_data(const void* device_pointer) { impl_.set_user_data(device_pointer); }

  // Before the next run, done by its start kernel (no launch or copy of its own): `count`
  // copies of `value` at `device` (T of 4 or 8 bytes; at most max_fills (8) fills per run),
  // and `value` copied to `device` (T a whole number of 8-byte words). For a caller's reset of
  // its own buffers between runs (a solver's iterate and counters).
  template <class T>
  void fill_before_run(T* device, const T& value, std::size_t count) {
    static_assert(std::is_trivially_copyable_v<T> && (sizeof(T) == 4 || sizeof(T) == 8),
                  "apiary: fill_before_run<T>: T must be trivially copyable, of 4 or 8 bytes");
    std::uint64_t pattern = 0;
    std::memcpy(&pattern, &value, sizeof(T));
    impl_.fill_before_run(device, pattern, sizeof(T), count);
  }
  template <class T>
  void copy_before_run(T* device, const T& value) {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) % 8 == 0,
                  "apiary: copy_before_run<T>: T must be trivially copyable, a whole number of 8-byte words");
    impl_.copy_before_run(device, &value, sizeof(T));
  }

  // A value in device memory that the end of every run reads back with the run's summary (no
  // copy of its own after the run): copy_at_end(p) once, then copied_at_end<T>() after each
  // run() (a solver's state, a count of results). At most end_copy_limit (256) bytes.
  template <class T>
  void copy_at_end(const T* device) {
    static_assert(std::is_trivially_copyable_v<T>, "apiary: copy_at_end<T>: T must be trivially copyable");
    static_assert(sizeof(T) <= end_copy_limit, "apiary: copy_at_end<T>: at most end_copy_limit (256) bytes");
    impl_.copy_at_end(device, sizeof(T));
  }
  template <class T>
  T copied_at_end() const {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= end_copy_limit);
    T value;
    std::memcpy(&value, impl_.copied_at_end(), sizeof(T));
    return value;
  }

  // The stream every run works on. Device work queued on it before run() (preparing the
  // tasks' input, resetting their counters) is ordered before the run without a host wait.
  cudaStream_t stream() const { return impl_.stream(); }

  // The runtime's dependency pool in device memory (Config::dependency_capacity entries,
  // zeroed before each run); tasks reach entry i through ctx.dependency(i).
  Dependency* dependencies() const { return impl_.dependency_pool(); }

  // Runs until every queue and the waiting storage are empty and nothing runs, or a task
  // calls ctx.stop(). Throws CapacityError / StallError / Error (with the report) on failure.
  Report run() { return run(impl_.config().scheduler); }
  Report run(Scheduler scheduler) {
    const ResidentBlocks& plan = planned(scheduler);
    switch (scheduler) {
      case Scheduler::megakernel: run_megakernel<Graph>(impl_, plan); break;
      case Scheduler::timesliced: run_timesliced<Graph>(impl_, plan); break;
      case Scheduler::timesliced_graph: run_timesliced_graph<Graph>(impl_, plan); break;
      case Scheduler::device_controller: run_device_controller<Graph>(impl_, plan, PdcMode::spin); break;
      case Scheduler::device_controller_wave: run_device_controller<Graph>(impl_, plan, PdcMode::wave); break;
      default: break;  // planned() refused it
    }
    return impl_.finish_run();
  }

  // How many workers of task type T `scheduler` runs at once with `config` on its device: its
  // kernel's resident blocks times T's worker slots per block. One full wave of T: work split
  // into this many tasks (or a multiple) leaves no worker idle in the last wave. Needs no
  // Runtime (and no queue capacities), so the work can be sized before the Config is final.
  template <class T>
  static std::uint64_t resident_workers(const Config& config, Scheduler scheduler)
    requires Traits::declared
  {
    constexpr std::uint32_t q = Traits::template queue_of<T>;
    static_assert(q != ~0u, "apiary: resident_workers<T>: T is not a task type of this graph");
    return resident_blocks(config, scheduler).workers(q);
  }
  static ResidentBlocks resident_blocks(const Config& config, Scheduler scheduler)
    requires Traits::declared
  {
    return resident_blocks(declared_table(config), config, scheduler);
  }

  // The blocks `scheduler` runs this graph's tasks in (layout and occupancy) on the configured device.
  static ResidentBlocks resident_blocks(const PhaseTable& table, const Config& config, Scheduler scheduler) {
    const DeviceInfo device = query_device(config.device);
    APIARY_CUDA_CHECK(cudaSetDevice(device.ordinal));
    return plan(table, config, device, scheduler);
  }

  // The trace of the last run (when Config::trace is set).
  const Trace& trace() const { return impl_.trace(); }
  const PhaseTable& table() const { return impl_.table(); }
  const Config& config() const { return impl_.config(); }
  const DeviceInfo& device() const { return impl_.device(); }

 private:
  static PhaseTable declared_table(const Config& config) {
    auto layouts = Traits::layouts();
    for (auto& q : layouts) q.capacity = config.capacity_for(q.name, &q.capacity_key);
    return PhaseTable(std::move(layouts), Traits::cyclic);
  }

  static ResidentBlocks plan(const PhaseTable& table, const Config& config, const DeviceInfo& device,
                             Scheduler scheduler) {
    switch (scheduler) {
      case Scheduler::megakernel: return plan_megakernel<Graph>(table, config, device);
      case Scheduler::timesliced: return plan_timesliced<Graph>(table, config, device);
      case Scheduler::timesliced_graph: return plan_timesliced_graph<Graph>(table, config, device);
      case Scheduler::device_controller: return plan_device_controller<Graph>(table, config, device, PdcMode::spin);
      case Scheduler::device_controller_wave: return plan_device_controller<Graph>(table, config, device, PdcMode::wave);
      default: refuse(scheduler);
    }
  }
  [[noreturn]] static void refuse(Scheduler scheduler) {
    throw InputError("scheduler", std::string(to_string(scheduler)) +
                                      " is not part of this build yet; the megakernel scheduler runs every graph");
  }

  // The plan of `scheduler`, made at its first run: the table, the config and the device stay
  // as they are for the runtime's life, and planning asks the driver for the kernel's
  // attributes and occupancy several times (21-32 us of host time before every launch, on the
  // critical path of a short run: an H100, a Jacobi solve of 27 iterations took 240 us).
  const ResidentBlocks& planned(Scheduler scheduler) {
    const auto index = static_cast<std::size_t>(scheduler);
    if (index >= plans_.size()) refuse(scheduler);
    std::optional<ResidentBlocks>& kept = plans_[index];
    if (!kept) kept = plan(impl_.table(), impl_.config(), impl_.device(), scheduler);
    return *kept;
  }

  DeviceRuntime impl_;
  std::array<std::optional<ResidentBlocks>, std::size_t(Scheduler::device_controller_wave) + 1> plans_;  // by Scheduler
};

}  // namespace apiary
