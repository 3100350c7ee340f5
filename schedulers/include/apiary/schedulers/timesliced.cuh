// The timesliced-kernel scheduler (thesis 3.2 and 6.1): a host controller runs the graph in
// rounds. Each round it launches one kernel per eligible task type, in its own stream, with
// as many blocks as the queue's fill level needs; the blocks drain that queue and exit. The
// last block of the round to exit (all of its kernels counted together) then runs the control
// step: it advances the phase or detects the end (the same phase controller as the
// megakernel) and writes a snapshot of fill levels into mapped host memory, which the host
// reads, once the round's kernels ended, to plan the next round — no full-device
// synchronisation and no kernel of its own. Only a round that launches nothing (a phase to
// advance, host input to take) runs the control step as a one-thread kernel.
//
// The launch plan (and the checks that refuse a graph before the run), the control step and
// the rule which queues a round launches are separate pieces so that another round driver can
// reuse them: a variant running the rounds as one CUDA graph (WHILE node, per-queue IF nodes)
// was built on them, measured slower on an H200 (23.1 vs 21.1 us per round) and removed; it is
// in commit bec300e.
#pragma once

#include <apiary/cuda_check.hpp>
#include <apiary/device_buffer.hpp>
#include <apiary/device_graph.hpp>
#include <apiary/device_runtime.hpp>
#include <apiary/error.hpp>
#include <apiary/schedulers/batch_picker.hpp>
#include <apiary/schedulers/block_runner.cuh>

#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

namespace apiary {

// What the host needs to plan a round; written by the control kernel.
struct RoundSnapshot {
  std::int64_t available[max_queues];
  std::uint64_t phase_word;
  std::uint64_t pending_total;
  std::uint32_t status;
  std::uint32_t pad;
};

// The round's exit count: the block that brings it to `round_blocks` runs the control step.
struct RoundExits {
  std::uint32_t blocks;
};

struct TimeslicedParams {
  DeviceGraph graph;
  BlockLayout layout;
  std::uint32_t queue;
  std::uint32_t round_blocks;  // blocks of every kernel of this round together
  RoundExits* exits;
  RoundSnapshot* snapshot;
};

// How the worker kernels of a timesliced run are launched.
struct TimeslicedLaunch {
  BlockLayout layout;
  std::uint32_t shared = 0;      // dynamic shared memory per block
  std::uint32_t max_blocks = 0;  // blocks resident at once: occupancy x SMs
};

// A round launches queue q's kernel when its task type may run in `phase` and it holds tasks.
APIARY_HD inline bool round_launches(const PhaseTableView& table, std::uint32_t q, PhaseWord phase,
                                     std::int64_t available) {
  return table.runs_in(q, phase.phase) && available > 0;
}

namespace detail {

// Thread 0: the next batch of this kernel's queue; stop when the queue is drained.
__device__ inline Batch next_timesliced_batch(const DeviceGraph& g, const BlockLayout& layout, std::uint32_t q) {
  Batch batch;
  const PhaseController pc = g.controller();
  const PhaseController::Look look = pc.look();
  if (!look.running) {
    batch.stop = true;
    return batch;
  }
  const std::int64_t available = g.queues[q].available_hint();
  const std::uint64_t per_round = std::uint64_t(layout.slots[q]) * gridDim.x;
  std::uint64_t rounds = available > 0 ? std::uint64_t(available) / per_round : 1;
  rounds = rounds < 1 ? 1 : (rounds > layout.max_rounds ? layout.max_rounds : rounds);
  batch.queue = q;
  batch.count = g.queues[q].claim(static_cast<std::uint32_t>(rounds * layout.slots[q]), available, batch.first);
  batch.stop = batch.count == 0;
  // This kernel runs only while q's phase is current, and the claimed tasks keep it so.
  batch.phase = g.table.num_phases == 0 ? look.phase : pc.current();
  return batch;
}

// A block of a per-queue worker kernel (timesliced, and the device controller's workers):
// runs batches of queue q, each task this block handed off first, until the queue is drained.
template <class Graph>
__device__ void drain_queue(const DeviceGraph& g, const BlockLayout& layout, std::uint32_t q) {
  extern __shared__ __align__(16) std::byte smem[];
  __shared__ Batch batch;
  __shared__ BlockHandoff<Graph> handoff;
  if (threadIdx.x == 0) {
    handoff.reset();
    // Only tasks of this kernel's own queue can be handed off: the block runs no other type.
    handoff.accept = layout.handoff ? std::uint64_t(1) << q : 0;
  }
  __syncthreads();
  for (;;) {
    if (threadIdx.x == 0) {
      if (!next_handed_off(g.queues, g.controller(), handoff, batch, batch)) batch = next_timesliced_batch(g, layout, q);
      if (!batch.stop) prepare_worker_barriers(g, layout, batch, smem);
    }
    __syncthreads();
    if (batch.stop) break;
    execute_batch<Graph>(g, layout, batch, handoff, smem);
  }
}

// One thread, between two rounds (no worker runs): move host-submitted tasks into their
// queues, then advance the phase or end the run. True while the run goes on.
__device__ inline bool between_rounds(const DeviceGraph& g) {
  const PhaseController pc = g.controller();
  g.drain_host_input();
  pc.on_idle([&] { return g.waiting.parked_hint(); });
  return pc.running();
}

// One thread, when no worker of the round runs any more: the control step, then publish the
// fill levels for the host.
__device__ inline void control_step(const DeviceGraph& g, RoundSnapshot* snapshot) {
  between_rounds(g);
  for (std::uint32_t q = 0; q < g.table.num_queues; ++q) snapshot->available[q] = g.queues[q].available_hint();
  snapshot->phase_word = load_acquire(g.state->phase_word);
  snapshot->pending_total = load_acquire(g.state->pending_total.value);
  snapshot->status = load_acquire(g.state->status);
  __threadfence_system();
}

template <class Graph>
__global__ void timesliced_entry(const __grid_constant__ TimeslicedParams params) {
  drain_queue<Graph>(params.graph, params.layout, params.queue);
  if (threadIdx.x != 0) return;
  // The last block of the round: every other block's batches finished before its exit was
  // counted (acq_rel), so the control step sees the round complete. It resets the count for
  // the next round, which the host launches only after this kernel ended.
  DeviceAtomic<std::uint32_t> exits(params.exits->blocks);
  if (exits.fetch_add(1, mo::acq_rel) + 1 != params.round_blocks) return;
  exits.store(0, mo::relaxed);
  control_step(params.graph, params.snapshot);
}

// A round that launches no worker: only the control step. (A template only so that every
// translation unit may instantiate it.)
template <class Graph>
__global__ void timesliced_control(const __grid_constant__ DeviceGraph g, RoundSnapshot* snapshot) {
  control_step(g, snapshot);
}

// Host memory the device writes directly (zero-copy), freed with the scheduler.
class MappedSnapshot {
 public:
  MappedSnapshot() {
    APIARY_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&host_), sizeof(RoundSnapshot), cudaHostAllocMapped));
    APIARY_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_), host_, 0));
  }
  ~MappedSnapshot() { cudaFreeHost(host_); }
  MappedSnapshot(const MappedSnapshot&) = delete;
  MappedSnapshot& operator=(const MappedSnapshot&) = delete;
  const volatile RoundSnapshot& host() const { return *host_; }
  RoundSnapshot* device() const { return device_; }

 private:
  RoundSnapshot* host_ = nullptr;
  RoundSnapshot* device_ = nullptr;
};

// One stream and completion event per task type, so a round's kernels run concurrently.
class RoundStreams {
 public:
  explicit RoundStreams(std::uint32_t n) : streams_(n), events_(n) {
    for (std::uint32_t q = 0; q < n; ++q) {
      APIARY_CUDA_CHECK(cudaStreamCreateWithFlags(&streams_[q], cudaStreamNonBlocking));
      APIARY_CUDA_CHECK(cudaEventCreateWithFlags(&events_[q], cudaEventDisableTiming));
    }
    APIARY_CUDA_CHECK(cudaEventCreateWithFlags(&round_done_, cudaEventDisableTiming));
  }
  ~RoundStreams() {
    for (auto s : streams_) cudaStreamDestroy(s);
    for (auto e : events_) cudaEventDestroy(e);
    cudaEventDestroy(round_done_);
  }
  RoundStreams(const RoundStreams&) = delete;
  RoundStreams& operator=(const RoundStreams&) = delete;
  cudaStream_t stream(std::uint32_t q) const { return streams_[q]; }
  cudaEvent_t done(std::uint32_t q) const { return events_[q]; }
  cudaEvent_t round_done() const { return round_done_; }

 private:
  std::vector<cudaStream_t> streams_;
  std::vector<cudaEvent_t> events_;
  cudaEvent_t round_done_ = nullptr;
};

}  // namespace detail

// The launch plan of a timesliced run: block layout, shared memory and the largest grid.
// Refuses, before the run, a graph whose blocks cannot run on this device; `scheduler` names
// the variant in the error.
template <class Graph>
TimeslicedLaunch plan_timesliced(const DeviceRuntime& runtime, const char* scheduler) {
  const Config& config = runtime.config();
  TimeslicedLaunch launch;
  launch.layout = plan_blocks(runtime.table(), config, config.trace, launch.shared);
  const auto kernel = detail::timesliced_entry<Graph>;
  const DeviceInfo& device = runtime.device();
  if (launch.shared > device.max_shared_per_block)
    throw InputError(scheduler, "a block needs " + std::to_string(launch.shared) +
                                    " bytes of shared memory, more than the device's " +
                                    std::to_string(device.max_shared_per_block) + "; lower shared_bytes");
  APIARY_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(launch.shared)));
  int per_sm = 0;
  APIARY_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, int(launch.layout.block_threads), launch.shared));
  if (per_sm == 0)
    throw InputError(scheduler,
                     "no block of " + std::to_string(launch.layout.block_threads) + " threads fits on an SM");
  launch.max_blocks = std::uint32_t(per_sm) * device.sm_count;
  return launch;
}

// Runs the seeded graph in timesliced rounds until it finishes, stops or fails.
template <class Graph>
void run_timesliced(DeviceRuntime& runtime) {
  const PhaseTable& table = runtime.table();
  const TimeslicedLaunch launch = plan_timesliced<Graph>(runtime, "timesliced");
  const auto kernel = detail::timesliced_entry<Graph>;
  TimeslicedParams params{};
  params.layout = launch.layout;

  detail::MappedSnapshot snapshot;
  detail::RoundStreams streams(table.num_queues());
  DeviceBuffer<RoundExits> exits(1);  // zeroed
  params.exits = exits.get();
  params.snapshot = snapshot.device();
  params.graph = runtime.begin_run();
  const PhaseTableView view = table.view();
  cudaStream_t control = runtime.stream();
  std::uint64_t rounds = 0, launches = 0;
  std::vector<unsigned> blocks(table.num_queues());
  // The first round plans from a control step of its own; later rounds from the one their
  // predecessor's last block ran.
  bool planned = false;
  for (;;) {
    runtime.drain_host_input();
    if (!planned) {
      detail::timesliced_control<Graph><<<1, 1, 0, control>>>(params.graph, snapshot.device());
      APIARY_CUDA_CHECK(cudaGetLastError());
      APIARY_CUDA_CHECK(cudaEventRecord(streams.round_done(), control));
      if (!runtime.wait(streams.round_done())) break;  // the watchdog stopped the run
    }
    if (snapshot.host().status != static_cast<std::uint32_t>(RunStatus::running)) break;
    const PhaseWord phase = PhaseWord::unpack(snapshot.host().phase_word);
    ++rounds;
    std::uint32_t round_blocks = 0;
    for (std::uint32_t q = 0; q < table.num_queues(); ++q) {
      const std::int64_t available = snapshot.host().available[q];
      blocks[q] = 0;
      if (!round_launches(view, q, phase, available)) continue;
      const std::uint64_t wanted = (std::uint64_t(available) + launch.layout.slots[q] - 1) / launch.layout.slots[q];
      blocks[q] = static_cast<unsigned>(std::min<std::uint64_t>(wanted, launch.max_blocks));
      round_blocks += blocks[q];
    }
    planned = round_blocks != 0;
    if (!planned) continue;  // nothing to launch: the next iteration runs the control step alone
    params.round_blocks = round_blocks;
    for (std::uint32_t q = 0; q < table.num_queues(); ++q) {
      if (blocks[q] == 0) continue;
      params.queue = q;
      kernel<<<blocks[q], launch.layout.block_threads, launch.shared, streams.stream(q)>>>(params);
      APIARY_CUDA_CHECK(cudaGetLastError());
      APIARY_CUDA_CHECK(cudaEventRecord(streams.done(q), streams.stream(q)));
      ++launches;
    }
    // The snapshot is complete when every kernel of the round ended (its last block wrote it).
    bool watchdog_stopped = false;
    for (std::uint32_t q = 0; q < table.num_queues() && !watchdog_stopped; ++q)
      if (blocks[q] != 0) watchdog_stopped = !runtime.wait(streams.done(q));
    if (watchdog_stopped) break;
  }
  // After a watchdog stop a kernel of the last round may still be winding down: whatever the
  // runtime does next on its stream (the end event, reading the state) waits for it.
  for (std::uint32_t q = 0; q < table.num_queues(); ++q)
    if (blocks[q] != 0) APIARY_CUDA_CHECK(cudaStreamWaitEvent(control, streams.done(q), 0));
  runtime.note_launch("timesliced", launch.max_blocks, launch.layout.block_threads, launch.shared);
  runtime.note_rounds(rounds, launches);
  runtime.mark_end();
}

}  // namespace apiary
