// The timesliced-kernel scheduler (thesis 3.2 and 6.1): a host controller runs the graph in
// rounds. Each round it launches one kernel per eligible task type, in its own stream, with
// as many blocks as the queue's fill level needs; the blocks drain that queue and exit. A
// one-thread control kernel then advances the phase or detects the end (the same phase
// controller as the megakernel) and writes a snapshot of fill levels into mapped host
// memory, which the host reads to plan the next round — one wait per round, no full-device
// synchronisation. The control kernel runs on the stream of the round's last worker kernel,
// so a round of one kernel needs no cross-stream wait. (Running the control step in the last
// block of the round instead, with no control kernel, saved 1-4 us per round but raised the
// worker kernel from 40 to 94 registers per thread: half the resident blocks and half the
// empty-task throughput on an H200; not kept.)
//
// The launch plan (and the checks that refuse a graph before the run), the control step between
// two rounds and the rule which queues a round launches are separate pieces so that another
// round driver can reuse them: a variant running the rounds as one CUDA graph (WHILE node,
// per-queue IF nodes) was built on them, measured slower on an H200 (23.1 vs 21.1 us per
// round) and removed; it is in commit bec300e. The graph mode that was kept, rounds queued
// ahead with the plan made on the device, is timesliced_graph.cuh.
#pragma once

#include <apiary/cuda_check.hpp>
#include <apiary/device_graph.hpp>
#include <apiary/device_runtime.hpp>
#include <apiary/error.hpp>
#include <apiary/schedulers/batch_picker.hpp>
#include <apiary/schedulers/block_runner.cuh>
#include <apiary/schedulers/control_step_alone.cuh>
#include <apiary/schedulers/launch_plan.hpp>

#include <cuda_runtime.h>

#include <vector>

namespace apiary {

// What the host needs to plan a round; written by the control kernel.
struct RoundSnapshot {
  std::int64_t available[max_queues];
  std::uint64_t phase_word;
  std::uint64_t pending_total;
  std::uint32_t status;
  std::uint32_t pad;
  // The graph mode's: control steps that let the run go on, and worker kernels given blocks.
  std::uint64_t rounds;
  std::uint64_t launches;
};

struct TimeslicedParams {
  DeviceGraph graph;
  BlockLayout layout;
  std::uint32_t queue;
  std::uint32_t max_blocks;  // the largest launch a queue gets (resident blocks)
};

// How many blocks a per-queue worker kernel got for its queue, and the most a later launch may
// give it (0: the scheduler adds blocks itself, as the spinning device controller does).
struct QueueLaunch {
  std::uint32_t blocks;
  std::uint32_t regrow_to;
};

// What the blocks of a queue that the scheduler regrows while they run (the spinning device
// controller, PdcParams) read where they size a batch or find their queue empty.
struct Regrowth {
  std::uint32_t max_blocks;        // all the blocks the scheduler may give the queue (its resident blocks)
  std::uint32_t linger_ns;         // how long a block that found the queue empty polls for more
  std::uint64_t lingering_queues;  // bit q: queue q's blocks may poll it when empty (its phaseless queues)
  std::uint32_t resident_warps;    // the warps of max_blocks blocks
  const std::uint32_t* active_warps;  // warps of the worker blocks launched and not exited (PdcState)
};

// A round launches queue q's kernel when its task type may run in `phase` and it holds tasks.
APIARY_HD inline bool round_launches(const PhaseTableView& table, std::uint32_t q, PhaseWord phase,
                                     std::int64_t available) {
  return table.runs_in(q, phase.phase) && available > 0;
}

// The blocks a round gives queue q (blocks_for_tasks), or none when round_launches says no. The
// host plans with it (run_timesliced), the graph mode's control step on the device.
APIARY_HD inline std::uint32_t planned_blocks(const PhaseTableView& table, std::uint32_t q, PhaseWord phase,
                                              std::int64_t available, std::uint32_t slots, std::uint32_t max_blocks) {
  return round_launches(table, q, phase, available) ? blocks_for_tasks(available, slots, max_blocks) : 0u;
}

namespace detail {

// True when a block that already ran a batch should leave the rest of queue q to a launch sized
// for it. Only when the queue holds more tasks than the blocks still draining it run at once,
// and either
// - most of this kernel's blocks are gone: without it a wave spawned into the running queue
//   late in a round (the last task of a stage spawning the next stage) runs on the one or two
//   blocks left, batch after batch (counting a block's whole batch, max_batch_rounds tasks per
//   worker, instead of its workers kept small waves on one block: Jacobi stages_inline on
//   gr_30_30, 16 tasks, 1.6x slower than stages_deps under TSK); or
// - the queue outgrew a small launch: it holds more than 4 times what all of the launch's
//   blocks run at once, and a launch 4 times larger fits. Without it tasks released into the
//   queue of a one-block launch while it runs (the 11-type tree's J5 joins, individual mode)
//   ran on that block alone, 183 of them one batch after the other for 250 us.
__device__ inline bool leave_to_next_launch(const BlockLayout& layout, std::uint32_t q, std::int64_t available,
                                            std::uint32_t live, QueueLaunch launch) {
  const std::uint64_t slots = layout.slots[q];
  if (available <= 0 || std::uint64_t(available) <= live * slots) return false;
  if (std::uint64_t(live) * 4 <= launch.blocks) return true;
  return std::uint64_t(launch.blocks) * 4 <= launch.regrow_to &&
         std::uint64_t(available) > std::uint64_t(launch.blocks) * slots * 4;
}

// Thread 0: the next batch of this kernel's queue; stop when the queue is drained (or, after
// this block's first batch, when leave_to_next_launch says so). `launch.blocks`: the blocks
// this round gave the queue (the grid, or what the graph mode's control step planned).
// `Regrown`: the scheduler adds blocks to the queue while this launch runs (the spinning
// device controller), so batches are sized for `regrowth->max_blocks`, all the blocks it may
// give the queue, as the megakernel's are for its grid. Sized for a one-block launch instead,
// the first block to see a burst of tasks claimed 8 rounds of them and ran them one round
// after another while the blocks launched for the burst found the queue empty (the 11-type
// tree's J5 joins: 64 on one block for over 80 us on an H100; docs/benchmarks.md). Read here,
// through a pointer, not kept in a register through the block's loop: kept, it cost the
// empty-task worker 4 registers (40 -> 44). Loaded with the queue's counters: loaded after
// them, just before the claim, a phase change under the controller took 1.02-1.07x as long
// (H200). `*may_linger` then tells a stop because the queue had nothing, of a queue whose
// blocks may poll it for more (linger_on_empty_queue). What says so is loaded with the
// counters too: as a load of its own on the way out, the cyclic ping-pong's round (a phase
// change per task) took 1.052x fcaff27's time; loaded here, 1.027x (H200).
// `*sole`: the block's first claim took every task pending in the run (the run's pending
// count, loaded with the counters, equals the batch), so once it finished, only a task it put
// into this queue can be there (drain_queue). Not for `Regrown` (the spinning controller's
// workers): there it cost the empty-task worker 4-6 registers, and their blocks may linger on
// an empty queue.
template <bool Regrown>
__device__ inline Batch next_timesliced_batch(const DeviceGraph& g, const BlockLayout& layout, std::uint32_t q,
                                              bool ran_before, QueueLaunch launch, const Regrowth* regrowth,
                                              bool* may_linger, bool* sole) {
  Batch batch;
  const PhaseController pc = g.controller();
  // Loaded before the run's words, so that all arrive in one memory round trip.
  const std::int64_t available = g.queues[q].available_hint();
  const std::uint32_t live = load_relaxed(g.state->live_blocks[q]);
  // Only at the block's first look: after a batch, this thread's own decrement of the count
  // (PhaseController::finish) would hold the load back by a round trip (chains through the
  // queue took up to 1.037x as long, H200).
  [[maybe_unused]] std::uint64_t pending = 0;
  if constexpr (!Regrown)
    if (!ran_before) pending = load_relaxed(g.state->pending_total.value);
  const std::uint32_t sharing = Regrown ? regrowth->max_blocks : launch.blocks;
  [[maybe_unused]] bool lingers = false;
  if constexpr (Regrown) lingers = (regrowth->lingering_queues >> q) & 1u;
  const PhaseController::Look look = pc.look();
  if (!look.running || (ran_before && leave_to_next_launch(layout, q, available, live, launch))) {
    batch.stop = true;
    return batch;
  }
  batch.queue = q;
  batch.count = g.queues[q].claim(batch_size(layout, q, available, sharing), available, batch.first);
  batch.stop = batch.count == 0;
  // (After a batch `pending` stays 0, so a later claim, which takes at least one task, is never sole.)
  if constexpr (!Regrown) *sole = batch.count != 0 && pending == batch.count;
  if constexpr (Regrown) *may_linger = batch.stop && lingers;
  // The phase looked at above, not read again after the claim: no phase changes while a block
  // of a per-queue worker kernel runs (the timesliced control step runs between rounds, after
  // their kernels completed; the spinning device controller changes the phase only while no
  // worker block is counted alive, and this one is from its launch to its exit; a wave's
  // controller runs between waves). The megakernel's blocks, which run across phase changes,
  // confirm the phase after a claim (batch_picker.hpp). Read again, it was one more memory
  // round trip before every batch's items.
  batch.phase = look.phase;
  return batch;
}

// Thread 0 of a block of a regrown queue (Regrowth) that found the queue empty: true to poll it
// again (after a short sleep) instead of leaving. A block that leaves costs the spinning
// controller a new launch once more tasks come (a device-side launch takes the controller
// thread ~6-8 us, FACTS.md). It polls
// - only for a queue of `lingering_queues`, the phaseless ones (next_timesliced_batch
//   checked): a phase changes only when no worker runs, so every block that polled the queue
//   of a phase would hold up its end;
// - for at most `linger_ns` since it first found the queue empty;
// - while no launched block waits for room (active warps within the resident warps); and
// - while phaseless tasks are pending elsewhere (queued, running or handed off), which may
//   still spawn into the queue.
// `empty_since`: thread 0's, 0 while the block has work.
__device__ inline bool linger_on_empty_queue(const DeviceGraph& g, const Regrowth& r, std::uint64_t& empty_since) {
  const std::uint64_t now = global_timer_ns();
  if (empty_since == 0) empty_since = now;
  else if (now - empty_since >= r.linger_ns) return false;
  const std::uint32_t active = load_relaxed(*r.active_warps);
  if (load_relaxed(g.state->pending[0].value) == 0 || active > r.resident_warps) return false;
  __nanosleep(256);
  return true;
}

// A block of a per-queue worker kernel (timesliced, and the device controller's workers):
// runs batches of queue q, each task this block handed off first, until the queue is drained.
// A block whose first claim took every pending task of the run (next_timesliced_batch's
// `sole`) leaves after those tasks (and the ones they handed off) without looking at the queue
// again, unless one of them put a task into it (Handoff::look_again): nothing else was
// pending, so nothing else can have filled it. That look is a memory round trip at the end of
// every round of a run whose rounds hold one batch (a phase change per task: the ping-pong).
// The look's pending count may be stale: then a task may wait for the next round, which only
// the timing shows. Timesliced rounds and waves only (not `Regrown`).
// `launch`: the blocks the round gave queue q (gridDim.x where the grid was sized for it).
// `Regrown`: see next_timesliced_batch; a block may then poll an empty queue for a while
// (linger_on_empty_queue), running empty batches (count 0, not stop) meanwhile.
template <class Graph, bool Regrown = false>
__device__ void drain_queue(const DeviceGraph& g, const BlockLayout& layout, std::uint32_t q, QueueLaunch launch,
                            const Regrowth* regrowth = nullptr) {
  extern __shared__ __align__(16) std::byte smem[];
  __shared__ Batch batch;
  __shared__ BlockHandoff<Graph> handoff;
  __shared__ BlockDependencies dependencies;  // takes no share: the block ends with the launch
  bool ran_before = false;  // thread 0's
  // Thread 0's (Regrown), in shared memory: kept in a register through the loop, it cost the
  // empty-task worker 5-7 registers.
  __shared__ std::uint64_t empty_since;
  if (threadIdx.x == 0) {
    handoff.reset();
    dependencies.reset_without_share();
    // Only tasks of this kernel's own queue can be handed off: the block runs no other type.
    handoff.accept = layout.handoff ? std::uint64_t(1) << q : 0;
    DeviceAtomic<std::uint32_t>(g.state->live_blocks[q]).fetch_add(1, mo::relaxed);
    if constexpr (Regrown) empty_since = 0;
  }
  __syncthreads();
  for (;;) {
    if (threadIdx.x == 0) {
      bool may_linger = false;
      if (!next_handed_off(g.queues, g.controller(), handoff, batch, batch)) {
        if (Regrown || handoff.looks_again()) {
          bool sole = false;
          batch = next_timesliced_batch<Regrown>(g, layout, q, ran_before, launch, regrowth, &may_linger, &sole);
          if constexpr (!Regrown)
            if (sole) handoff.skip_next_look();
        } else {
          batch = Batch{};
          batch.stop = true;
        }
      }
      if constexpr (Regrown) {
        if (may_linger && linger_on_empty_queue(g, *regrowth, empty_since)) batch.stop = false;
        else empty_since = 0;
      }
      if (!batch.stop && (!Regrown || batch.count != 0)) prepare_worker_barriers(g, layout, batch, smem);
      ran_before = true;
    }
    __syncthreads();
    if (batch.stop) break;
    if constexpr (Regrown) {
      if (batch.count == 0) {  // an empty batch: poll again (every thread read `batch` before thread 0 writes it)
        __syncthreads();
        continue;
      }
    }
    execute_batch<Graph>(g, layout, batch, handoff, dependencies, smem);
  }
  if (threadIdx.x == 0) DeviceAtomic<std::uint32_t>(g.state->live_blocks[q]).fetch_sub(1, mo::relaxed);
}

template <class Graph>
__global__ void timesliced_entry(const __grid_constant__ TimeslicedParams params) {
  drain_queue<Graph>(params.graph, params.layout, params.queue, QueueLaunch{gridDim.x, params.max_blocks});
}

// One warp, between two rounds (no worker runs): the control step (control_step_alone: host
// input, then advance the phase or end the run), then the fill levels, the phase and the
// status for the host. No system fence: the host reads them once the kernel completed (its
// event), which makes them visible. (A template only so that every translation unit may
// instantiate it.)
template <class Graph>
__global__ void timesliced_control(const __grid_constant__ DeviceGraph g, RoundSnapshot* snapshot) {
  bool going = false;
  std::uint64_t phase_word = 0;
  control_step_alone(g, going, phase_word);
  for (std::uint32_t q = threadIdx.x; q < g.table.num_queues; q += 32)
    snapshot->available[q] = g.queues[q].available_hint();
  if (threadIdx.x != 0) return;
  snapshot->phase_word = phase_word;
  snapshot->pending_total = load_acquire(g.state->pending_total.value);
  snapshot->status = load_acquire(g.state->status);
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
  // Before a run whose device writes the snapshot only once the run ended (the graph mode).
  void reset_status() const {
    static_cast<volatile RoundSnapshot*>(host_)->status = static_cast<std::uint32_t>(RunStatus::running);
  }
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
  cudaEvent_t round_done() const { return round_done_; }

  // Makes the last launched kernel's stream wait for the others' kernels and returns it: the
  // stream of the round's control kernel (a round of one kernel needs no wait).
  cudaStream_t join_on_last(const std::vector<std::uint32_t>& launched) const {
    const cudaStream_t last = stream(launched.back());
    for (std::size_t i = 0; i + 1 < launched.size(); ++i) {
      APIARY_CUDA_CHECK(cudaEventRecord(done(launched[i]), stream(launched[i])));
      APIARY_CUDA_CHECK(cudaStreamWaitEvent(last, done(launched[i]), 0));
    }
    return last;
  }

 private:
  cudaEvent_t done(std::uint32_t q) const { return events_[q]; }

  std::vector<cudaStream_t> streams_;
  std::vector<cudaEvent_t> events_;
  cudaEvent_t round_done_ = nullptr;
};

}  // namespace detail

// The launch plan of a timesliced run: block layout, shared memory and the largest grid (the
// worker kernel's resident blocks). Refuses, before the run, a graph whose blocks cannot run on
// this device; `scheduler` names the variant in the error.
template <class Graph>
ResidentBlocks plan_timesliced(const PhaseTable& table, const Config& config, const DeviceInfo& device,
                               const char* scheduler = "timesliced") {
  return plan_resident_blocks(detail::timesliced_entry<Graph>, table, config, device, scheduler);
}

// Runs the seeded graph in timesliced rounds (blocks as plan_timesliced planned them) until it
// finishes, stops or fails.
template <class Graph>
void run_timesliced(DeviceRuntime& runtime, const ResidentBlocks& plan) {
  const PhaseTable& table = runtime.table();
  const auto kernel = detail::timesliced_entry<Graph>;
  allow_dynamic_shared(kernel, plan.shared);
  TimeslicedParams params{};
  params.layout = plan.layout;
  params.max_blocks = plan.blocks();

  detail::MappedSnapshot snapshot;
  detail::RoundStreams streams(table.num_queues());
  params.graph = runtime.begin_run();
  const PhaseTableView view = table.view();
  // The stream the control kernel runs on: the last worker kernel's (the others' ends are
  // waited for through events), or the runtime's before the first round.
  cudaStream_t control = runtime.stream();
  std::uint64_t rounds = 0, launches = 0;
  std::vector<std::uint32_t> launched;
  launched.reserve(table.num_queues());
  for (;;) {
    runtime.drain_host_input();
    detail::timesliced_control<Graph><<<1, 32, 0, control>>>(params.graph, snapshot.device());
    APIARY_CUDA_CHECK(cudaGetLastError());
    APIARY_CUDA_CHECK(cudaEventRecord(streams.round_done(), control));
    if (!runtime.wait(streams.round_done())) break;  // the watchdog stopped the run
    if (snapshot.host().status != static_cast<std::uint32_t>(RunStatus::running)) break;
    const PhaseWord phase = PhaseWord::unpack(snapshot.host().phase_word);
    ++rounds;
    launched.clear();
    for (std::uint32_t q = 0; q < table.num_queues(); ++q) {
      const unsigned blocks =
          planned_blocks(view, q, phase, snapshot.host().available[q], plan.layout.slots[q], plan.blocks());
      if (blocks == 0) continue;
      params.queue = q;
      kernel<<<blocks, plan.layout.block_threads, plan.shared, streams.stream(q)>>>(params);
      APIARY_CUDA_CHECK(cudaGetLastError());
      ++launches;
      launched.push_back(q);
    }
    if (launched.empty()) continue;  // nothing to run: the control step alone (phase, host input)
    control = streams.join_on_last(launched);
  }
  // The runtime's end event (and what it reads afterwards) comes after the last control kernel.
  APIARY_CUDA_CHECK(cudaStreamWaitEvent(runtime.stream(), streams.round_done(), 0));
  runtime.note_launch("timesliced", plan.blocks(), plan.layout.block_threads, plan.shared);
  runtime.note_rounds(rounds, launches);
  runtime.mark_end();
}

}  // namespace apiary
