// The persistent device controller (PDC, thesis 3.4 and 6.3): a controller grid on the GPU,
// one controller thread per queue, launches worker kernels with CUDA dynamic parallelism
// (CDP2, fire-and-forget streams). A worker kernel drains its queue in batches (the same
// block runner as the timesliced scheduler) and, when a block exits, takes its warps off a
// global active-warp counter. The controller keeps the device oversubscribed up to
//   max_warps = #SMs x max resident threads per SM x factor / 32   (factor 1.5 by default)
// and prefers launches that fill whole blocks. Only controller thread 0 changes the phase (it
// calls the phase controller only while no worker runs); the others read it from shared memory.
//
// Two modes:
//   spin  one controller grid polls queue fill levels and the active-warp counter while its
//         children run (as in the thesis). This relies on children running concurrently with
//         a spinning parent, which the CUDA programming guide does not promise; the controller
//         occupies a single block, so in practice there is room for them.
//   wave  a device graph (device graph launch, CUDA 12+): the controller kernel node, then one
//         worker kernel node per queue. Each wave the controller sizes every worker node (or
//         disables it) from the device and tail-launches the graph itself; the tail launch
//         starts after this graph, its workers included, completed, so the next controller
//         finds nothing running: it advances the phase or ends the run and plans the next wave.
//         (As a CDP2 kernel that tail-launched itself a wave took ~30 us on an H100, as this
//         graph ~19 us; the graph's own relaunch is ~4 us: docs/benchmarks.md.)
//
// Device-side launches need relocatable device code and the device runtime library: build the
// target with apiary_enable_device_controller(target) (cmake/ApiaryDeviceController.cmake).
// Without it, run_device_controller throws InputError before the run starts.
#pragma once

#include <apiary/cuda_check.hpp>
#include <apiary/cuda_graph_nodes.hpp>
#include <apiary/device_buffer.hpp>
#include <apiary/device_graph.hpp>
#include <apiary/device_runtime.hpp>
#include <apiary/error.hpp>
#include <apiary/schedulers/batch_picker.hpp>
#include <apiary/schedulers/block_runner.cuh>
#include <apiary/schedulers/control_step_alone.cuh>
#include <apiary/schedulers/timesliced.cuh>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <iterator>
#include <memory>
#include <string>

namespace apiary {

enum class PdcMode { spin, wave };

// Device counters of a PDC run (zeroed before the run).
struct PdcState {
  std::uint32_t active_warps;              // warps of worker blocks launched and not yet exited
  std::uint32_t done;                      // set by the last controller grid
  std::uint32_t queue_blocks[max_queues];  // worker blocks launched per queue, not yet exited
  std::uint64_t launches;                  // worker kernels launched
  std::uint64_t iterations;                // controller loop iterations (spin) or waves (wave)
  std::uint64_t waiter_polls;              // how long the host-stream waiter waited for `done`
  // Spin mode: what the controller saw when no batch had finished for pdc_stall_note_ns while it
  // counted workers alive (once per run; zero otherwise), for the report of a stalled run:
  // worker blocks launched and not exited, blocks that had started draining, claimable tasks.
  std::uint32_t stall_noted;
  std::uint32_t stall_launched[max_queues];
  std::uint32_t stall_started[max_queues];
  std::int64_t stall_claimable[max_queues];
  // Wave mode: what this run's controllers last set on queue q's worker node (PdcNodeSetting).
  // Zero, unknown, at the run's start: a host update of the graph resets what an earlier run
  // set from the device.
  std::uint32_t node_grid[max_queues];
  std::uint32_t node_enabled[max_queues];
};

// How long the spin controller waits without a finished batch, while it counts workers alive,
// before it notes what it sees (PdcState::stall_*). Far below any useful watchdog setting.
inline constexpr std::uint64_t pdc_stall_note_ns = 500'000'000;
inline constexpr std::uint64_t pdc_stall_watch_every = 64;  // controller iterations (~4 us each)

// The largest controller block (a warp per queue, 32 warps for 32 queues or more): the
// controller kernels are compiled for it (__launch_bounds__), so that a graph of up to
// max_queues queues can always launch its controller.
inline constexpr unsigned pdc_max_controller_threads = 32 * 32;
static_assert(pdc_max_controller_threads >= max_queues, "a controller thread for every queue");

// Everything the controller and the workers read; lives in device memory (a device-side
// launch passes only a pointer and the queue index).
struct PdcParams {
  DeviceGraph graph;
  BlockLayout layout;
  PdcState* pdc = nullptr;
  std::uint32_t shared = 0;           // dynamic shared memory of a worker block
  std::uint32_t max_blocks = 0;       // resident worker blocks on the device (occupancy x SMs)
  // Spin mode, what the worker's blocks read where they size a batch or find their queue
  // empty: max_blocks again, how long a block polls its empty queue before it leaves
  // (Config::device_controller.linger_us) and which queues' blocks may (the phaseless ones),
  // the resident warps and the active-warp counter.
  Regrowth regrowth{};
  std::uint32_t max_warps = 0;        // oversubscription bound
  std::uint32_t warps_per_block = 0;
  std::uint32_t pending_limit = 0;    // cudaLimitDevRuntimePendingLaunchCount (for errors)
  cudaGraphDeviceNode_t worker_nodes[max_queues] = {};  // wave mode: queue q's worker node
};

namespace detail {

// The host-side message when the calling target was compiled without relocatable device code.
inline constexpr const char* pdc_needs_rdc =
    "device_controller needs relocatable device code: build the target with CUDA_SEPARABLE_COMPILATION ON "
    "and link CUDA::cudadevrt (see docs)";

// The launch note's tail for a run's PDC statistics: the warps and worker blocks per queue the
// spin controller still counted at the end (zero after every clean run: a block takes itself
// off when it leaves), and what it saw when no batch had finished for a while
// (pdc_watch_stall). Empty for a clean run.
inline std::string pdc_counts_note(const PdcState& s, const PhaseTable& table) {
  std::string out, stall;
  for (std::uint32_t q = 0; q < table.num_queues(); ++q) {
    const std::string& name = table.queues()[q].name;
    if (s.queue_blocks[q] != 0) out += (out.empty() ? "" : ", ") + name + " " + std::to_string(s.queue_blocks[q]);
    if (s.stall_noted && (s.stall_launched[q] | s.stall_started[q] | s.stall_claimable[q]) != 0)
      stall += "; " + name + ": " + std::to_string(s.stall_launched[q]) + " worker block(s) launched and not exited, " +
               std::to_string(s.stall_started[q]) + " draining, " + std::to_string(s.stall_claimable[q]) + " task(s) claimable";
  }
  std::string note;
  if (s.active_warps != 0 || !out.empty())
    note = "; counted at the end: " + std::to_string(s.active_warps) + " active warps" +
           (out.empty() ? std::string() : ", worker blocks " + out);
  if (s.stall_noted)
    note += "; when no batch had finished for " + std::to_string(pdc_stall_note_ns / 1'000'000) + " ms" +
            (stall.empty() ? std::string(": nothing counted") : stall);
  return note;
}

#if defined(__CUDACC_RDC__)

// A worker's blocks drain queue q in batches, then leave the active-warp counter. `Counted`:
// spin mode only; a wave's controller starts after every worker of the last wave ended (the
// graph completed), so it needs no count of them, and the block exits without two release
// atomics on the wave's critical path. A spin worker's queue gets more blocks from the
// controller while it runs (so its batches are sized for all it may get: drain_queue's
// `Regrown`); a wave's only from the next wave, which may size it anew.
template <class Graph, bool Counted>
__device__ void pdc_drain_and_leave(const PdcParams& p, std::uint32_t q) {
  drain_queue<Graph, Counted>(p.graph, p.layout, q, QueueLaunch{gridDim.x, Counted ? 0u : p.max_blocks}, &p.regrowth);
  if (Counted && threadIdx.x == 0) {
    // Every batch of this block was reported finished before: a controller that sees the
    // counter at zero sees their pending counts too.
    DeviceAtomic<std::uint32_t>(p.pdc->queue_blocks[q]).fetch_sub(1, mo::release);
    DeviceAtomic<std::uint32_t>(p.pdc->active_warps).fetch_sub(p.warps_per_block, mo::release);
  }
}

// Spin mode's worker kernel, launched with CDP2: a pointer to the parameters (a device-side
// launch copies its arguments into the pending-launch buffer).
template <class Graph>
__global__ void pdc_worker(const PdcParams* __restrict__ p, std::uint32_t q) {
  pdc_drain_and_leave<Graph, true>(*p, q);
}

// Wave mode's worker node: the parameters by value, in the constant bank, as the timesliced
// scheduler's kernels take theirs (the graph node holds them; PdcWaveGraph refreshes them
// when a run's differ).
template <class Graph>
__global__ void pdc_wave_worker(const __grid_constant__ PdcParams p, std::uint32_t q) {
  pdc_drain_and_leave<Graph, false>(p, q);
}

struct PdcShared {
  std::int32_t phase;
  std::uint32_t stop;
  std::uint32_t any_full;
  std::uint32_t launched;
  std::uint32_t failed;  // wave mode: a node update failed (the run's status says so too)
};

// The queue whose controller thread this thread is (>= the queue count: none). Queue q's thread
// is lane q / W of warp q % W, W the controller block's warps (pdc_controller_threads): each
// queue its own warp, as far as there are warps. A device-side launch takes the calling thread
// microseconds (FACTS.md: ~6-8 us per launch from one thread; a wave's node update ~0.4 us), and
// threads of one warp that launch in the same step wait for each other. Measured on an H200
// (docs/benchmarks.md): the 11-type tree under PDC wave took 0.98x the time with a warp per
// queue, 1.00x with every queue in warp 0.
__device__ inline std::uint32_t controller_queue() {
  const std::uint32_t warps = blockDim.x / 32;
  return (threadIdx.x % 32) * warps + threadIdx.x / 32;
}

// Thread 0, every iteration or wave: move host-submitted tasks into their queues (host task
// injection, where the runtime has it).
template <class G>
__device__ void pdc_drain_host_input(const G& g) {
  if constexpr (requires { g.drain_host_input(); }) g.drain_host_input();
}

// Thread 0, while no worker runs (active warps == 0): advance the phase or end the run.
// Returns false when the run is over.
__device__ inline bool pdc_idle_step(const PdcParams* p) {
  const PhaseController pc = p->graph.controller();
  const DeviceGraph& g = p->graph;
  return pc.on_idle([&] { return g.waiting.parked_hint(); });
}

// Controller thread q (all threads of the controller block call it; phase and stop are set):
// how many worker blocks queue q gets now (0: none). Their warps are reserved on return.
// `Wave`: no worker runs (the wave graph starts after the last one's workers ended), so the
// running blocks and active warps are zero without reading them, and nothing is reserved.
// `available`: queue q's claimable tasks as the caller read them (read after the last change to
// the queue, and read only if the queue runs in sh.phase where that matters).
template <class Graph, bool Wave>
__device__ std::uint32_t pdc_plan(const PdcParams* p, PdcShared& sh, std::uint32_t q, bool active_queue,
                                  std::int64_t available) {
  const DeviceGraph& g = p->graph;
  std::uint64_t wanted = 0;
  bool partial = false;
  if (active_queue) {
    PdcQueueLoad load;
    load.available = g.table.runs_in(q, sh.phase) ? available : 0;
    if (load.available > 0) {
      // Blocks this queue's tasks can use (as in the timesliced scheduler), less those launched
      // for it (launch_plan.hpp).
      load.slots = p->layout.slots[q];
      load.max_blocks = p->max_blocks;
      if (!Wave) load.launched = load_acquire(p->pdc->queue_blocks[q]);
      const PdcWanted w = pdc_blocks_wanted(load);
      wanted = w.blocks;
      partial = w.partial;
      if (wanted > 0 && !partial) atomicOr(&sh.any_full, 1u);
    }
  }
  __syncthreads();
  if (wanted == 0) return 0;
  if (partial && sh.any_full) return 0;  // prefer launches that fill whole blocks
  // Oversubscription bound: reserve the warps first so the counter never undercounts.
  DeviceAtomic<std::uint32_t> active(p->pdc->active_warps);
  const std::uint32_t seen = Wave ? 0u : active.load(mo::relaxed);
  if (seen >= p->max_warps) return 0;
  const std::uint64_t budget = (p->max_warps - seen + p->warps_per_block - 1) / p->warps_per_block;
  const auto blocks = static_cast<std::uint32_t>(wanted < budget ? wanted : budget);
  if (blocks == 0) return 0;
  if (!Wave) {
    active.fetch_add(blocks * p->warps_per_block, mo::relaxed);
    DeviceAtomic<std::uint32_t>(p->pdc->queue_blocks[q]).fetch_add(blocks, mo::relaxed);
  }
  return blocks;
}

// After `blocks` of queue q were launched (err == cudaSuccess) or not: counts the launch, or
// gives the reservation back (spin) and ends the run with an error that names the queue.
__device__ inline void pdc_launched(const PdcParams* p, PdcShared& sh, std::uint32_t q, std::uint32_t blocks,
                                    cudaError_t err, bool reserved = true) {
  if (err == cudaSuccess) {
    DeviceAtomic<std::uint64_t>(p->pdc->launches).fetch_add(1, mo::relaxed);
    atomicAdd(&sh.launched, 1u);
    return;
  }
  if (reserved) {
    DeviceAtomic<std::uint32_t>(p->pdc->queue_blocks[q]).fetch_sub(blocks, mo::relaxed);
    DeviceAtomic<std::uint32_t>(p->pdc->active_warps).fetch_sub(blocks * p->warps_per_block, mo::relaxed);
  }
  raise_error(p->graph.state->error, ErrorCode::launch_failed, q, p->pending_limit, std::uint64_t(err));
  p->graph.controller().set_status(RunStatus::failed);
}

// Spin mode, controller thread q: plans queue q and launches its workers with CDP2.
template <class Graph>
__device__ void pdc_plan_and_launch(const PdcParams* p, PdcShared& sh, std::uint32_t q, bool active_queue) {
  const DeviceGraph& g = p->graph;
  const bool runs = active_queue && g.table.runs_in(q, sh.phase);
  const std::uint32_t blocks = pdc_plan<Graph, false>(p, sh, q, active_queue, runs ? g.queues[q].available_hint() : 0);
  if (blocks == 0) return;
  pdc_worker<Graph><<<blocks, p->layout.block_threads, p->shared, cudaStreamFireAndForget>>>(p, q);
  pdc_launched(p, sh, q, blocks, cudaGetLastError());
}

// Wave mode: what a worker node holds, as far as this run's controllers set it (a node keeps
// what the last wave set). grid: its blocks, 0 unknown; enabled: 1 disabled, 2 enabled, 0 unknown.
struct PdcNodeSetting {
  std::uint32_t grid;
  std::uint32_t enabled;
};

// Wave mode, controller thread q: sizes queue q's worker node for this wave, or disables it,
// with only the updates that change what it holds (`had`, updated). A node update takes the
// calling thread ~0.4 us (H200; baselines pdc_wave against pdc_wave_fixed, docs/benchmarks.md),
// and the wave's workers start only after the controller ended: in a ping-pong of two queues
// every wave toggles both nodes but resizes neither, so each thread makes one update instead
// of up to two; a queue that stays idle makes none.
__device__ inline cudaError_t pdc_set_worker_node(cudaGraphDeviceNode_t node, std::uint32_t blocks,
                                                  PdcNodeSetting& had) {
  if (blocks != 0 && had.grid != blocks) {
    const cudaError_t err = cudaGraphKernelNodeSetGridDim(node, dim3(blocks));
    if (err != cudaSuccess) return err;
    had.grid = blocks;
  }
  const std::uint32_t enabled = blocks != 0 ? 2u : 1u;
  if (had.enabled == enabled) return cudaSuccess;
  const cudaError_t err = cudaGraphKernelNodeSetEnabled(node, blocks != 0);
  if (err == cudaSuccess) had.enabled = enabled;
  return err;
}

// Spin mode, thread 0 while it counts workers alive, every pdc_stall_watch_every iterations:
// notes once what it sees when no batch has finished for pdc_stall_note_ns (a stalled run's
// report then tells launched workers that never started from workers that run and wait).
// Not every iteration: the progress load would sit on every controller round's serial path.
struct PdcStallWatch {
  std::uint64_t progress = ~std::uint64_t(0);
  std::uint64_t since = 0;
  bool noted = false;
};
__device__ inline void pdc_watch_stall(const PdcParams* p, PdcStallWatch& w) {
  if (w.noted) return;
  const std::uint64_t progress = load_relaxed(p->graph.state->progress);
  const std::uint64_t now = global_timer_ns();
  if (progress != w.progress) {
    w.progress = progress;
    w.since = now;
    return;
  }
  if (now - w.since < pdc_stall_note_ns) return;
  w.noted = true;
  PdcState& s = *p->pdc;
  for (std::uint32_t q = 0; q < p->graph.table.num_queues; ++q) {
    s.stall_launched[q] = load_relaxed(s.queue_blocks[q]);
    s.stall_started[q] = load_relaxed(p->graph.state->live_blocks[q]);
    s.stall_claimable[q] = p->graph.queues[q].available_hint();
  }
  store_relaxed(s.stall_noted, 1u);
}

// Spin mode: one persistent controller block.
template <class Graph>
__global__ void __launch_bounds__(pdc_max_controller_threads) pdc_spin_controller(const PdcParams* __restrict__ p) {
  __shared__ PdcShared sh;
  const std::uint32_t q = controller_queue();
  const bool active_queue = q < p->graph.table.num_queues;
  const PhaseController pc = p->graph.controller();
  std::uint32_t backoff = 64;
  std::uint64_t it = 0;
  PdcStallWatch watch;  // thread 0's
  for (;; ++it) {
    if (threadIdx.x == 0) {
      pdc_drain_host_input(p->graph);
      bool go = pc.running();
      // Only while nothing runs: the phase may change, or the run end.
      if (go) {
        if (load_acquire(p->pdc->active_warps) == 0) go = pdc_idle_step(p);
        else if (it % pdc_stall_watch_every == 0) pdc_watch_stall(p, watch);
      }
      sh.stop = go ? 0u : 1u;
      sh.phase = pc.current().phase;
      sh.any_full = 0;
      sh.launched = 0;
    }
    __syncthreads();
    if (sh.stop) break;
    pdc_plan_and_launch<Graph>(p, sh, q, active_queue);
    __syncthreads();
    if (threadIdx.x == 0) {
      if (sh.launched == 0) {
        __nanosleep(backoff);
        backoff = backoff < 4096 ? backoff * 2 : backoff;
      } else {
        backoff = 64;
      }
    }
  }
  if (threadIdx.x == 0) {
    store_relaxed(p->pdc->iterations, it);
    store_release(p->pdc->done, 1u);
  }
}

// Wave mode: the controller node of the wave graph. It starts after the previous wave's graph,
// workers included, completed, so nothing runs while thread 0 advances the phase. Its
// parameters by value, in the constant bank, as the worker nodes take theirs: through a pointer
// into global memory, the view's pointers (the run state, each queue's counters) were each a
// dependent load on the wave's path before the counters they point to.
template <class Graph>
__global__ void __launch_bounds__(pdc_max_controller_threads)
    pdc_wave_controller(const __grid_constant__ PdcParams params) {
  const PdcParams* const p = &params;
  __shared__ PdcShared sh;
  const std::uint32_t q = controller_queue();
  const bool active_queue = q < p->graph.table.num_queues;
  const PhaseController pc = p->graph.controller();
  // Loaded first, so that the loads are in flight during the control step's round trip: what
  // the node holds, and queue q's fill level, which nothing changes before the plan unless the
  // step drains host input into the queues (then it is read again).
  PdcNodeSetting had{};
  std::int64_t available = 0;
  if (active_queue) {
    had = {load_relaxed(p->pdc->node_grid[q]), load_relaxed(p->pdc->node_enabled[q])};
    available = p->graph.queues[q].available_hint();
  }
  if (threadIdx.x < 32) {
    // Nothing else runs (the graph completed): host input and the idle step from counters
    // read at once (control_step_alone).
    bool go = false;
    std::uint64_t phase_word = 0;
    control_step_alone(p->graph, go, phase_word);
    if (threadIdx.x == 0) {
      DeviceAtomic<std::uint64_t>(p->pdc->iterations).fetch_add(1, mo::relaxed);
      sh.stop = go ? 0u : 1u;
      sh.phase = PhaseWord::unpack(phase_word).phase;
      sh.any_full = 0;
      sh.launched = 0;
      sh.failed = 0;
    }
  }
  __syncthreads();
  // Every worker node is set, disabled ones included: on the last wave all of them are.
  if (active_queue && p->graph.mailbox != nullptr) available = p->graph.queues[q].available_hint();
  const std::uint32_t blocks = sh.stop ? 0u : pdc_plan<Graph, true>(p, sh, q, active_queue, available);
  if (active_queue) {
    const PdcNodeSetting before = had;
    const cudaError_t err = pdc_set_worker_node(p->worker_nodes[q], blocks, had);
    if (had.grid != before.grid) store_relaxed(p->pdc->node_grid[q], had.grid);
    if (had.enabled != before.enabled) store_relaxed(p->pdc->node_enabled[q], had.enabled);
    if (blocks > 0 || err != cudaSuccess) pdc_launched(p, sh, q, blocks, err, false);
    if (err != cudaSuccess) atomicOr(&sh.failed, 1u);
  }
  __syncthreads();
  if (threadIdx.x != 0) return;
  // Ended, or a node update failed. A host abort that came after the control step read the
  // status is seen by the next wave's: not loading the status again keeps a memory round
  // trip off every wave.
  if (sh.stop || sh.failed) {
    store_release(p->pdc->done, 1u);
    return;
  }
  if (sh.launched == 0) __nanosleep(2000);  // nothing to launch now (e.g. the host may still add work)
  const cudaError_t err = cudaGraphLaunch(cudaGetCurrentGraphExec(), cudaStreamGraphTailLaunch);
  if (err != cudaSuccess) {
    raise_error(p->graph.state->error, ErrorCode::launch_failed, max_queues, p->pending_limit, std::uint64_t(err));
    pc.set_status(RunStatus::failed);
    store_release(p->pdc->done, 1u);
  }
}

// On the runtime's stream after the controller: returns once the last controller grid set
// `done`. Where the stream's completion already covers the tail-launched controllers (CDP2
// nests them in their parent's work), it finds `done` set at once.
template <class = void>
__global__ void pdc_wait_done(PdcState* s) {
  std::uint64_t polls = 0;
  while (load_acquire(s->done) == 0) {
    __nanosleep(1000);
    ++polls;
  }
  s->waiter_polls = polls;
}

#endif  // __CUDACC_RDC__

}  // namespace detail

// The controller block: a warp per queue, at most 32 (detail::controller_queue).
inline std::uint32_t pdc_controller_threads(std::uint32_t queues) {
  return 32 * std::clamp(queues, 1u, pdc_max_controller_threads / 32);
}

// The oversubscription bound of thesis 6.3 (rounded down, at least one block's worth).
inline std::uint32_t pdc_max_warps(const DeviceInfo& device, double factor, std::uint32_t warps_per_block) {
  const double warps = double(device.sm_count) * double(device.max_threads_per_sm) * factor / 32.0;
  return std::max<std::uint32_t>(warps_per_block, static_cast<std::uint32_t>(warps));
}

// The worker kernel's blocks (layout, resident blocks). Refuses blocks that cannot run, and
// targets built without relocatable device code.
template <class Graph>
ResidentBlocks plan_device_controller([[maybe_unused]] const PhaseTable& table, [[maybe_unused]] const Config& config,
                                      [[maybe_unused]] const DeviceInfo& device,
                                      [[maybe_unused]] PdcMode mode = PdcMode::spin) {
#if !defined(__CUDACC_RDC__)
  throw InputError("scheduler", detail::pdc_needs_rdc);
#else
  if (mode == PdcMode::wave)
    return plan_resident_blocks(detail::pdc_wave_worker<Graph>, table, config, device, "device_controller_wave");
  return plan_resident_blocks(detail::pdc_worker<Graph>, table, config, device, "device_controller");
#endif
}

#if defined(__CUDACC_RDC__)
namespace detail {

// The wave mode's device graph: the controller node, then one worker node per queue, which the
// controller sizes or disables every wave (device-updatable nodes). Built, instantiated for
// device launch and uploaded once per runtime (DeviceRuntime::kept). Every node holds its
// parameters by value; they are updated only when a run's differ (set_params).
template <class Graph>
class PdcWaveGraph {
 public:
  // `params`: the first run's, without the node handles (set here).
  PdcWaveGraph(std::uint32_t queues, unsigned controller_threads, const PdcParams& params, cudaStream_t stream)
      : queues_(queues), controller_threads_(controller_threads), state_(1, false), last_(params) {
    APIARY_CUDA_CHECK(cudaGraphCreate(&graph_, 0));
    last_.pdc = state_.get();
    // Placeholder arguments, as the workers' below.
    void* controller_args[] = {&last_};
    controller_ = add_kernel_node(graph_, reinterpret_cast<const void*>(pdc_wave_controller<Graph>),
                                  controller_threads, 0, controller_args);
    for (std::uint32_t q = 0; q < queues; ++q) {
      // Placeholder arguments: the handles are known only once every node is device-updatable.
      std::uint32_t queue = q;
      void* worker_args[] = {&last_, &queue};
      workers_[q] = add_kernel_node(graph_, reinterpret_cast<const void*>(pdc_wave_worker<Graph>),
                                    params.layout.block_threads, params.shared, worker_args, &controller_);
      last_.worker_nodes[q] = make_device_updatable(workers_[q]);
    }
    APIARY_CUDA_CHECK(cudaGraphInstantiate(&exec_, graph_, cudaGraphInstantiateFlagDeviceLaunch));
    set_arguments();
    // The controller updates nodes of its own graph from the device: upload before launching.
    APIARY_CUDA_CHECK(cudaGraphUpload(exec_, stream));
  }
  PdcWaveGraph(const PdcWaveGraph&) = delete;
  PdcWaveGraph& operator=(const PdcWaveGraph&) = delete;
  ~PdcWaveGraph() {
    if (exec_) cudaGraphExecDestroy(exec_);
    if (graph_) cudaGraphDestroy(graph_);
  }

  // This run's parameters (pdc and worker_nodes are filled in): into every node's arguments
  // where they differ from the last run's (the runtime's buffers stay; what may change is,
  // e.g., the host mailbox or the user data), so a run that changes nothing copies nothing.
  void set_params(PdcParams params, cudaStream_t stream) {
    params.pdc = state_.get();
    std::copy(std::begin(last_.worker_nodes), std::end(last_.worker_nodes), std::begin(params.worker_nodes));
    if (std::memcmp(&params, &last_, sizeof(PdcParams)) == 0) return;
    last_ = params;
    set_arguments();
    APIARY_CUDA_CHECK(cudaGraphUpload(exec_, stream));  // host updates of device-updatable nodes
  }
  PdcState* state() const { return state_.get(); }
  cudaGraphExec_t exec() const { return exec_; }

 private:
  // Every node's arguments: last_ by value, and a worker's queue.
  void set_arguments() {
    void* controller_args[] = {&last_};
    set_kernel_node(exec_, controller_, reinterpret_cast<const void*>(pdc_wave_controller<Graph>), 1,
                    controller_threads_, 0, controller_args);
    for (std::uint32_t q = 0; q < queues_; ++q) {
      std::uint32_t queue = q;
      void* args[] = {&last_, &queue};
      set_kernel_node(exec_, workers_[q], reinterpret_cast<const void*>(pdc_wave_worker<Graph>), 1,
                      last_.layout.block_threads, last_.shared, args);
    }
  }

  std::uint32_t queues_;
  unsigned controller_threads_;
  DeviceBuffer<PdcState> state_;
  PdcParams last_;  // what every node holds
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
  cudaGraphNode_t controller_ = nullptr;
  cudaGraphNode_t workers_[max_queues] = {};
};

// What the device controller keeps from one run of a runtime to the next, so that a run
// allocates and frees nothing (a cudaFree waits for the whole device): the spin controller's
// state and parameters, the wave's device graph (built at its first run), and pinned memory
// for the parameters on their way in and the statistics on their way out.
template <class Graph>
class PdcKept {
 public:
  PdcKept() : spin_state_(1, false), spin_params_(1, false) {
    Pinned* p = nullptr;
    APIARY_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&p), sizeof(Pinned)));
    pinned_.reset(p);
    APIARY_CUDA_CHECK(cudaEventCreateWithFlags(&stats_done_, cudaEventDisableTiming));
  }
  ~PdcKept() { cudaEventDestroy(stats_done_); }
  PdcKept(const PdcKept&) = delete;
  PdcKept& operator=(const PdcKept&) = delete;
  PdcWaveGraph<Graph>& wave(std::uint32_t queues, unsigned controller_threads, const PdcParams& params,
                            cudaStream_t stream) {
    if (!wave_) wave_ = std::make_unique<PdcWaveGraph<Graph>>(queues, controller_threads, params, stream);
    return *wave_;
  }
  PdcState* spin_state() const { return spin_state_.get(); }
  PdcParams* spin_params() const { return spin_params_.get(); }
  PdcParams* staged_params() const { return &pinned_->params; }
  PdcState* stats() const { return &pinned_->stats; }
  cudaEvent_t stats_done() const { return stats_done_; }

 private:
  struct Pinned {
    PdcParams params;
    PdcState stats;
  };
  struct FreeHost {
    void operator()(Pinned* p) const { cudaFreeHost(p); }
  };
  DeviceBuffer<PdcState> spin_state_;
  DeviceBuffer<PdcParams> spin_params_;
  std::unique_ptr<PdcWaveGraph<Graph>> wave_;
  std::unique_ptr<Pinned, FreeHost> pinned_;
  cudaEvent_t stats_done_ = nullptr;
};

// CUDA's pending-launch pool is sized for the device; setting it again for every run would
// cost each run a driver call that reconfigures the device runtime.
inline void size_pending_launch_pool(std::size_t launches) {
  std::size_t now = 0;
  APIARY_CUDA_CHECK(cudaDeviceGetLimit(&now, cudaLimitDevRuntimePendingLaunchCount));
  if (now != launches) APIARY_CUDA_CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, launches));
}

}  // namespace detail
#endif  // __CUDACC_RDC__

// Runs the seeded graph with the device controller (worker blocks as plan_device_controller
// planned them for `mode`) until it finishes, stops or fails.
template <class Graph>
void run_device_controller([[maybe_unused]] DeviceRuntime& runtime, [[maybe_unused]] const ResidentBlocks& plan,
                           [[maybe_unused]] PdcMode mode) {
#if !defined(__CUDACC_RDC__)
  throw InputError("scheduler", detail::pdc_needs_rdc);
#else
  const Config& config = runtime.config();
  const PhaseTable& table = runtime.table();
  const char* name = mode == PdcMode::spin ? "device_controller" : "device_controller_wave";
  if (mode == PdcMode::wave) allow_dynamic_shared(detail::pdc_wave_worker<Graph>, plan.shared);
  else allow_dynamic_shared(detail::pdc_worker<Graph>, plan.shared);
  PdcParams params{};
  params.layout = plan.layout;
  const DeviceInfo& device = runtime.device();
  const std::uint32_t controller_threads = pdc_controller_threads(table.num_queues());
  params.shared = plan.shared;
  params.max_blocks = plan.blocks();
  params.warps_per_block = params.layout.block_threads / 32;
  config.device_controller.check("device_controller");
  const bool lingers = mode == PdcMode::spin && config.device_controller.linger_us != 0;
  params.regrowth = {params.max_blocks, config.device_controller.linger_us * 1000u,
                     lingers ? table.phaseless().mask() : 0u, params.max_blocks * params.warps_per_block, nullptr};
  params.max_warps = pdc_max_warps(device, config.device_controller.oversubscription, params.warps_per_block);
  params.pending_limit = config.device_controller.pending_launches;
  detail::size_pending_launch_pool(config.device_controller.pending_launches);

  // Spin: a controller kernel; wave: the kept device graph (its nodes point at its buffers).
  auto& kept = runtime.kept<detail::PdcKept<Graph>>([] { return std::make_shared<detail::PdcKept<Graph>>(); });
  detail::PdcWaveGraph<Graph>* wave = nullptr;
  if (mode == PdcMode::wave) {
    // Built before the run's clock starts, from the view the run will have.
    params.graph = runtime.view();
    wave = &kept.wave(table.num_queues(), controller_threads, params, runtime.stream());
  }
  params.graph = runtime.begin_run();
  if (wave) {
    wave->set_params(params, runtime.stream());
  } else {
    params.pdc = kept.spin_state();
    params.regrowth.active_warps = &kept.spin_state()->active_warps;
    *kept.staged_params() = params;
    APIARY_CUDA_CHECK(cudaMemcpyAsync(kept.spin_params(), kept.staged_params(), sizeof(PdcParams),
                                      cudaMemcpyHostToDevice, runtime.stream()));
  }
  PdcState* const state = wave ? wave->state() : kept.spin_state();
  APIARY_CUDA_CHECK(cudaMemsetAsync(state, 0, sizeof(PdcState), runtime.stream()));
  runtime.note_launch(name, params.max_blocks, params.layout.block_threads, plan.shared);
  if (wave)
    APIARY_CUDA_CHECK(cudaGraphLaunch(wave->exec(), runtime.stream()));
  else
    detail::pdc_spin_controller<Graph><<<1, controller_threads, 0, runtime.stream()>>>(kept.spin_params());
  APIARY_CUDA_CHECK(cudaGetLastError());
  detail::pdc_wait_done<><<<1, 1, 0, runtime.stream()>>>(state);
  APIARY_CUDA_CHECK(cudaGetLastError());
  // The run's work ends here (its clock stops); its statistics come back behind the summary,
  // and the host waits for both under the watchdog.
  runtime.mark_end();
  APIARY_CUDA_CHECK(cudaMemcpyAsync(kept.stats(), state, sizeof(PdcState), cudaMemcpyDeviceToHost, runtime.stream()));
  APIARY_CUDA_CHECK(cudaEventRecord(kept.stats_done(), runtime.stream()));
  runtime.wait(kept.stats_done());
  if (cudaStreamQuery(runtime.stream()) != cudaSuccess) return;  // the kernels did not return (finish_run reports it)
  const PdcState stats = *kept.stats();
  runtime.note_rounds(stats.iterations, stats.launches);
  const std::string how = wave ? "device graph relaunching itself" : "pending-launch pool " + std::to_string(params.pending_limit);
  runtime.note_launch(std::string(name) + " (" + std::to_string(params.max_warps) + " max warps, " + how +
                          ", stream end " + (stats.waiter_polls == 0 ? "covered" : "did not cover") +
                          " the controller's launches" + detail::pdc_counts_note(stats, table) + ")",
                      params.max_blocks, params.layout.block_threads, plan.shared);
#endif
}

}  // namespace apiary
