// The timesliced scheduler's graph mode (Scheduler::timesliced_graph): the same rounds as
// run_timesliced (one control step, then one kernel per task type that may run), but the host
// no longer waits for a round before it launches the next. A CUDA graph holds
// `rounds_per_graph` rounds; the host keeps `graphs_in_flight` of them queued on the stream and
// only watches the end of the run.
//
// Why: a planned round (timesliced.cuh) costs a host round trip (the control kernel's snapshot
// read, then the launches), 13 us on an H100 with empty kernels. Here nothing on the round's
// path waits for the host. What the host did with the snapshot moves into the control step on
// the device: it plans each queue's blocks for the round from the fill level and the worker
// size, as the host would, and writes the plan where the round's kernels read it. Every worker
// node has the grid of the worker kernel's resident blocks; a block beyond its queue's plan
// (every block of a queue that may not run now) leaves at once, before touching any counter.
//
// The cost: idle blocks. A round launches every queue's kernel with its whole grid, eligible or
// not, so its fixed cost grows with the number of task types; and the rounds queued after the
// run ended run empty (at most rounds_per_graph x graphs_in_flight - 1).
#pragma once

#include <apiary/cuda_check.hpp>
#include <apiary/cuda_graph_nodes.hpp>
#include <apiary/device_buffer.hpp>
#include <apiary/device_runtime.hpp>
#include <apiary/schedulers/control_step_alone.cuh>
#include <apiary/schedulers/timesliced.cuh>

#include <cuda_runtime.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace apiary {

// What the graph mode's control step reads and writes (its node's argument).
struct TimeslicedGraphControl {
  DeviceGraph graph;
  BlockLayout layout;
  std::uint32_t max_blocks = 0;         // the worker nodes' grid
  std::uint32_t* round_blocks = nullptr;  // device, per queue: blocks this round runs
  std::uint64_t* counts = nullptr;        // device: rounds that let the run go on, kernels given blocks
  RoundSnapshot* snapshot = nullptr;      // mapped host memory: what the host watches
};

namespace detail {

// One block, a thread per queue (at least a warp): the control step (warp 0), then each
// queue's plan for the round. After the end of the run it plans nothing, so the rounds queued
// behind the end do no work. Every memory round trip here is on the round's path, hence: the
// control step reads its counters at once; the fill levels load meanwhile where no host input
// can add tasks (nothing else moves them between rounds); the counts are fire-and-forget
// reductions; and the snapshot for the host is written once, when the run ended, without a
// system fence (the host reads it after the graph completed, which makes the kernel's writes
// visible to it).
template <class Graph>
__global__ void timesliced_graph_control(const __grid_constant__ TimeslicedGraphControl c) {
  __shared__ bool going;
  __shared__ std::uint64_t phase_word;
  __shared__ std::uint32_t launched;
  const DeviceGraph& g = c.graph;
  const std::uint32_t q = threadIdx.x;
  const bool queue_thread = q < g.table.num_queues;
  cudaGridDependencySynchronize();  // the last round's workers completed (early-launch edges)
  std::int64_t available = queue_thread && g.mailbox == nullptr ? g.queues[q].available_hint() : 0;
  if (q == 0) launched = 0;
  if (q < 32) control_step_alone(g, going, phase_word);
  __syncthreads();
  if (queue_thread) {
    if (g.mailbox != nullptr) available = g.queues[q].available_hint();
    const std::uint32_t blocks =
        going ? planned_blocks(g.table, q, PhaseWord::unpack(phase_word), available, c.layout.slots[q], c.max_blocks)
              : 0;
    c.round_blocks[q] = blocks;
    if (blocks > 0) atomicAdd(&launched, 1u);
  }
  __syncthreads();
  if (q != 0) return;
  if (going) {
    atomicAdd(reinterpret_cast<unsigned long long*>(&c.counts[0]), 1ull);
    atomicAdd(reinterpret_cast<unsigned long long*>(&c.counts[1]), static_cast<unsigned long long>(launched));
    return;
  }
  RoundSnapshot& s = *c.snapshot;
  s.phase_word = phase_word;
  s.pending_total = load_acquire(g.state->pending_total.value);
  s.rounds = c.counts[0];
  s.launches = c.counts[1];
  s.status = load_acquire(g.state->status);
}

// Queue `params.queue`'s worker node: the blocks the control step planned run the queue as a
// timesliced kernel sized for them does; the rest of the grid leaves at once.
template <class Graph>
__global__ void timesliced_graph_entry(const __grid_constant__ TimeslicedParams params,
                                       const std::uint32_t* __restrict__ round_blocks) {
  cudaGridDependencySynchronize();  // the round's control step completed (early-launch edge)
  const std::uint32_t blocks = round_blocks[params.queue];
  if (blockIdx.x >= blocks) return;
  drain_queue<Graph>(params.graph, params.layout, params.queue, QueueLaunch{blocks, params.max_blocks});
}

// The instantiated round graph: `rounds` x (control node, then one worker node per queue), the
// next round's control after all of the previous round's workers. Kept by the runtime between
// runs (DeviceRuntime::kept); a run whose device view differs updates the nodes' arguments.
template <class Graph>
class TimeslicedRoundGraph {
 public:
  TimeslicedRoundGraph(const DeviceGraph& view, const ResidentBlocks& plan, std::uint32_t queues,
                       std::uint32_t rounds, std::uint32_t in_flight)
      : plan_(plan), queues_(queues), rounds_(rounds), round_blocks_(max_queues), counts_(2), done_(in_flight) {
    control_.graph = view;
    control_.layout = plan.layout;
    control_.max_blocks = plan.blocks();
    control_.round_blocks = round_blocks_.get();
    control_.counts = counts_.get();
    control_.snapshot = snapshot_.device();
    for (auto& e : done_) APIARY_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    build();
  }
  TimeslicedRoundGraph(const TimeslicedRoundGraph&) = delete;
  TimeslicedRoundGraph& operator=(const TimeslicedRoundGraph&) = delete;
  ~TimeslicedRoundGraph() {
    if (exec_) cudaGraphExecDestroy(exec_);
    if (graph_) cudaGraphDestroy(graph_);
    for (auto e : done_)
      if (e) cudaEventDestroy(e);
  }

  // This run's device view into every node (only where it differs from the last run's), and
  // the graph uploaded to the device (on `stream`) where it was not.
  void prepare(const DeviceGraph& view, cudaStream_t stream) {
    if (std::memcmp(&view, &control_.graph, sizeof(DeviceGraph)) != 0) {
      control_.graph = view;
      set_arguments();
    }
    if (!uploaded_) {
      APIARY_CUDA_CHECK(cudaGraphUpload(exec_, stream));
      uploaded_ = true;
    }
  }
  // Zeroes the run's round and launch counts (on `stream`) and marks the snapshot running
  // (the device writes it only once the run ended).
  void start_run(cudaStream_t stream) const {
    APIARY_CUDA_CHECK(cudaMemsetAsync(counts_.get(), 0, counts_.bytes(), stream));
    snapshot_.reset_status();
  }

  cudaGraphExec_t exec() const { return exec_; }
  std::uint32_t rounds() const { return rounds_; }
  std::uint32_t in_flight() const { return static_cast<std::uint32_t>(done_.size()); }
  // The completion event of the graph launch `launch` (slots reused in_flight() launches later).
  cudaEvent_t done(std::uint64_t launch) const { return done_[launch % done_.size()]; }
  const volatile RoundSnapshot& snapshot() const { return snapshot_.host(); }

 private:
  void build() {
    APIARY_CUDA_CHECK(cudaGraphCreate(&graph_, 0));
    // Every edge launches early: a node's launch (and its blocks' start) overlaps the node it
    // waits for, which its threads then wait for in cudaGridDependencySynchronize().
    std::vector<cudaGraphNode_t> previous;  // the last round's worker nodes
    for (std::uint32_t r = 0; r < rounds_; ++r) {
      void* control_args[] = {&control_};
      const cudaGraphNode_t control =
          add_kernel_node(graph_, reinterpret_cast<const void*>(timesliced_graph_control<Graph>), 1,
                          control_threads(), 0, control_args, nullptr, 0);
      for (const cudaGraphNode_t worker : previous) add_early_launch_edge(graph_, worker, control);
      controls_.push_back(control);
      previous.clear();
      for (std::uint32_t q = 0; q < queues_; ++q) {
        TimeslicedParams params = worker_params(q);
        const std::uint32_t* blocks = round_blocks_.get();
        void* worker_args[] = {&params, &blocks};
        previous.push_back(add_kernel_node(graph_, reinterpret_cast<const void*>(timesliced_graph_entry<Graph>),
                                           plan_.blocks(), plan_.layout.block_threads, plan_.shared, worker_args,
                                           nullptr, 0));
        add_early_launch_edge(graph_, control, previous.back());
      }
      workers_.insert(workers_.end(), previous.begin(), previous.end());
    }
    APIARY_CUDA_CHECK(cudaGraphInstantiate(&exec_, graph_, 0));
  }

  // Every node's arguments from control_ (the device view may change between runs: the host
  // mailbox, the user data).
  void set_arguments() {
    for (const cudaGraphNode_t node : controls_) {
      void* args[] = {&control_};
      set_kernel_node(exec_, node, reinterpret_cast<const void*>(timesliced_graph_control<Graph>), 1,
                      control_threads(), 0, args);
    }
    for (std::size_t i = 0; i < workers_.size(); ++i) {
      TimeslicedParams params = worker_params(static_cast<std::uint32_t>(i % queues_));
      const std::uint32_t* blocks = round_blocks_.get();
      void* args[] = {&params, &blocks};
      set_kernel_node(exec_, workers_[i], reinterpret_cast<const void*>(timesliced_graph_entry<Graph>),
                      plan_.blocks(), plan_.layout.block_threads, plan_.shared, args);
    }
    uploaded_ = false;
  }
  TimeslicedParams worker_params(std::uint32_t q) const {
    TimeslicedParams params{};
    params.graph = control_.graph;
    params.layout = plan_.layout;
    params.queue = q;
    params.max_blocks = plan_.blocks();
    return params;
  }
  unsigned control_threads() const { return (queues_ + 31) / 32 * 32; }

  ResidentBlocks plan_;
  std::uint32_t queues_, rounds_;
  DeviceBuffer<std::uint32_t> round_blocks_;
  DeviceBuffer<std::uint64_t> counts_;
  MappedSnapshot snapshot_;
  std::vector<cudaEvent_t> done_;
  TimeslicedGraphControl control_;
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
  std::vector<cudaGraphNode_t> controls_, workers_;  // workers_: round by round, queue by queue
  bool uploaded_ = false;
};

}  // namespace detail

// The launch plan of the graph mode: that of a timesliced run, for its worker kernel. Refuses
// an impossible Config::timesliced_graph before the run.
template <class Graph>
ResidentBlocks plan_timesliced_graph(const PhaseTable& table, const Config& config, const DeviceInfo& device) {
  config.timesliced_graph.check("timesliced_graph");
  return plan_resident_blocks(detail::timesliced_graph_entry<Graph>, table, config, device, "timesliced_graph");
}

// Runs the seeded graph in timesliced rounds, launched ahead as CUDA graphs (blocks as
// plan_timesliced_graph planned them), until it finishes, stops or fails.
template <class Graph>
void run_timesliced_graph(DeviceRuntime& runtime, const ResidentBlocks& plan) {
  const PhaseTable& table = runtime.table();
  const TimeslicedGraphConfig& tg = runtime.config().timesliced_graph;
  allow_dynamic_shared(detail::timesliced_graph_entry<Graph>, plan.shared);
  using RoundGraph = detail::TimeslicedRoundGraph<Graph>;
  // Built (and uploaded) before the run's clock starts, from the view the run will have.
  RoundGraph* rounds = &runtime.kept<RoundGraph>([&] {
    return std::make_shared<RoundGraph>(runtime.view(), plan, table.num_queues(), tg.rounds_per_graph,
                                        tg.graphs_in_flight);
  });
  rounds->prepare(runtime.view(), runtime.stream());
  rounds->start_run(runtime.stream());
  rounds->prepare(runtime.begin_run(), runtime.stream());  // the same view: nothing to do

  std::uint64_t launched = 0, completed = 0;
  for (;;) {
    for (; launched < completed + rounds->in_flight(); ++launched) {
      runtime.drain_host_input();
      APIARY_CUDA_CHECK(cudaGraphLaunch(rounds->exec(), runtime.stream()));
      APIARY_CUDA_CHECK(cudaEventRecord(rounds->done(launched), runtime.stream()));
    }
    if (!runtime.wait(rounds->done(completed))) break;  // the watchdog stopped the run
    ++completed;
    if (rounds->snapshot().status != static_cast<std::uint32_t>(RunStatus::running)) break;
  }
  // The runtime's end event comes after the graphs still queued (they run empty).
  runtime.note_launch("timesliced_graph (" + std::to_string(rounds->rounds()) + " rounds per graph, " +
                          std::to_string(rounds->in_flight()) + " graphs in flight)",
                      plan.blocks(), plan.layout.block_threads, plan.shared);
  runtime.note_rounds(rounds->snapshot().rounds, rounds->snapshot().launches);
  runtime.mark_end();
}

}  // namespace apiary
