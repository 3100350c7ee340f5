// The timesliced scheduler with its rounds on the device (issue 3): the host-driven TSK loop
// (timesliced.cuh) as one CUDA graph launch. A host round costs a control kernel, an event
// wait and one launch per queue (20.7 us on an H200, docs/benchmarks.md); here a conditional
// WHILE node repeats the round on the GPU and the host only watches:
//
//   root:   memset(counters) -> WHILE(loop)
//   body:   control ---------> IF(launch[0][c]) { timesliced_entry<Graph>, queue 0, grid of size class c }
//                     \-------> IF(launch[1][c]) { timesliced_entry<Graph>, queue 1, ... }  ...
//
// The one-thread control kernel runs the same control step as the host-driven TSK
// (between_rounds: host input, phase advance, end of the run), then sets queue q's IF handle
// when round_launches() says so, or the WHILE handle to 0 when the run is over. The IF nodes
// depend only on the control kernel, so a round's queues run concurrently, as TSK's streams
// do. The graph cannot size a grid from a fill level, so each queue has one IF node per grid
// size class (1 block, an eighth of the resident blocks, all resident blocks: occupancy x SMs)
// and the control kernel opens the smallest class that covers the fill level; a full grid for
// a single task costs a block start on every SM and a thousand claims that find nothing.
//
// The host launches the graph on the runtime's stream and waits under the watchdog
// (DeviceRuntime::supervise), which also feeds host-submitted tasks into the mailbox that the
// control kernel drains. A watchdog abort sets the status, so the next control step ends the
// loop. The graph is instantiated once per Runtime and reused while the kernel arguments stay
// the same (TimeslicedGraph).
#pragma once

#include <apiary/cuda_check.hpp>
#include <apiary/device_buffer.hpp>
#include <apiary/device_graph.hpp>
#include <apiary/device_runtime.hpp>
#include <apiary/error.hpp>
#include <apiary/schedulers/timesliced.cuh>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

namespace apiary {

namespace detail {

// Rounds and worker launches of one run, counted on the device by the control kernel (the
// graph zeroes them first).
struct GraphRoundCounters {
  std::uint64_t rounds;
  std::uint64_t launches;
};

// Worker grids per queue, smallest first (see the header comment).
inline constexpr std::uint32_t grid_classes = 3;

// The control kernel's arguments: the run's device view and the handles it sets.
struct GraphRoundParams {
  DeviceGraph graph;
  GraphRoundCounters* counters;
  cudaGraphConditionalHandle loop;  // the WHILE node: 0 ends the run
  // Queue q's IF node of grid class c: 1 runs its workers this round.
  cudaGraphConditionalHandle launch[max_queues][grid_classes];
  std::uint32_t class_blocks[grid_classes];  // blocks of each class, ascending
  std::uint32_t slots[max_queues];           // tasks one block of queue q runs at once
};

// The smallest grid class with enough blocks for `available` tasks of queue q.
__device__ inline std::uint32_t grid_class(const GraphRoundParams& p, std::uint32_t q, std::int64_t available) {
  const std::uint64_t wanted = (std::uint64_t(available) + p.slots[q] - 1) / p.slots[q];
  for (std::uint32_t c = 0; c + 1 < grid_classes; ++c)
    if (wanted <= p.class_blocks[c]) return c;
  return grid_classes - 1;
}

// One thread at the start of every round; no worker runs (the WHILE body's previous iteration,
// IF bodies included, has ended). Every IF handle is set every round: a handle keeps its value
// from the last round otherwise.
template <class Graph>
__global__ void timesliced_graph_control(const __grid_constant__ GraphRoundParams p) {
  const DeviceGraph& g = p.graph;
  const bool going = between_rounds(g);
  const PhaseWord phase = g.controller().current();
  std::uint64_t launched = 0;
  for (std::uint32_t q = 0; q < g.table.num_queues; ++q) {
    const std::int64_t available = g.queues[q].available_hint();
    const bool launch = going && round_launches(g.table, q, phase, available);
    const std::uint32_t chosen = launch ? grid_class(p, q, available) : grid_classes;
    for (std::uint32_t c = 0; c < grid_classes; ++c) cudaGraphSetConditional(p.launch[q][c], c == chosen ? 1u : 0u);
    launched += launch ? 1 : 0;
  }
  if (!going) {
    cudaGraphSetConditional(p.loop, 0u);
    return;
  }
  p.counters->rounds += 1;
  p.counters->launches += launched;
}

// Turns a failed graph API call into an error naming the scheduler and the CUDA error. The
// call's error is taken off the runtime's last-error state, so that a later run does not
// report it again.
inline void check_graph_call(cudaError_t status, const char* call) {
  if (status == cudaSuccess) return;
  (void)cudaGetLastError();
  throw CudaError(std::string("timesliced_graph: ") + call + " failed: " + cudaGetErrorName(status) + " (" +
                  cudaGetErrorString(status) +
                  "); this scheduler needs CUDA graph conditional nodes (IF nodes inside a WHILE body: CUDA 12.4 or "
                  "newer); the timesliced scheduler runs the same graph without them");
}

// Adds a one-argument kernel node; `arg` is copied into the node.
template <class Arg>
cudaGraphNode_t add_kernel_node(cudaGraph_t graph, const cudaGraphNode_t* deps, std::size_t num_deps,
                                void (*kernel)(Arg), unsigned grid, unsigned block, unsigned shared, const Arg& arg) {
  void* args[] = {const_cast<Arg*>(&arg)};
  cudaKernelNodeParams params{};
  params.func = reinterpret_cast<void*>(kernel);
  params.gridDim = dim3(grid);
  params.blockDim = dim3(block);
  params.sharedMemBytes = shared;
  params.kernelParams = args;
  cudaGraphNode_t node = nullptr;
  check_graph_call(cudaGraphAddKernelNode(&node, graph, deps, num_deps, &params), "cudaGraphAddKernelNode");
  return node;
}

// Adds a conditional node (IF or WHILE) with one body graph, which it returns through `body`.
inline cudaGraphNode_t add_conditional_node(cudaGraph_t graph, const cudaGraphNode_t* deps, std::size_t num_deps,
                                            cudaGraphConditionalHandle handle, cudaGraphConditionalNodeType type,
                                            cudaGraph_t& body) {
  cudaGraphNodeParams params{};
  params.type = cudaGraphNodeTypeConditional;
  params.conditional.handle = handle;
  params.conditional.type = type;
  params.conditional.size = 1;
  cudaGraphNode_t node = nullptr;
  check_graph_call(cudaGraphAddNode(&node, graph, deps, nullptr, num_deps, &params), "cudaGraphAddNode (conditional)");
  body = params.conditional.phGraph_out[0];
  return node;
}

// A conditional handle of `graph`; with `reset_to`, the handle takes that value at every launch.
inline cudaGraphConditionalHandle make_handle(cudaGraph_t graph, std::optional<unsigned> reset_to = std::nullopt) {
  cudaGraphConditionalHandle handle = 0;
  check_graph_call(cudaGraphConditionalHandleCreate(&handle, graph, reset_to.value_or(0),
                                                    reset_to ? cudaGraphCondAssignDefault : 0),
                   "cudaGraphConditionalHandleCreate");
  return handle;
}

// True when both objects hold the same bytes. Equal bytes mean equal kernel arguments, hence
// the same graph; a difference in padding only costs a rebuild, never a stale graph.
template <class T>
bool same_bytes(const T& a, const T& b) {
  static_assert(std::is_trivially_copyable_v<T>);
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

}  // namespace detail

// The executable graph of timesliced_graph runs, owned by one Runtime. Built and instantiated
// by the first run and reused by later runs while their kernel arguments (the device view, the
// block layout, the grid) are the same, so a run normally costs one graph launch on the host.
class TimeslicedGraph {
 public:
  TimeslicedGraph() = default;
  ~TimeslicedGraph() { release(); }
  TimeslicedGraph(const TimeslicedGraph&) = delete;
  TimeslicedGraph& operator=(const TimeslicedGraph&) = delete;

  // The executable graph for a run with these worker arguments (each worker node gets its own
  // `params.queue`).
  template <class Graph>
  cudaGraphExec_t prepare(const TimeslicedParams& params, const TimeslicedLaunch& launch) {
    if (exec_ && detail::same_bytes(params, params_) && detail::same_bytes(launch, launch_)) return exec_;
    release();
    if (counters_.size() == 0) counters_ = DeviceBuffer<detail::GraphRoundCounters>(1);
    build<Graph>(params, launch);
    detail::check_graph_call(cudaGraphInstantiate(&exec_, graph_, 0), "cudaGraphInstantiate");
    params_ = params;
    launch_ = launch;
    return exec_;
  }

  // Rounds and launches counted by the last run (read after it ended).
  detail::GraphRoundCounters counters() const {
    detail::GraphRoundCounters c{};
    APIARY_CUDA_CHECK(cudaMemcpy(&c, counters_.get(), sizeof(c), cudaMemcpyDeviceToHost));
    return c;
  }

  // The run's kernels did not end cleanly (hung, or a CUDA error; finish_run reports which):
  // leave the graph and the counters to the device, since freeing them could wait for those
  // kernels forever.
  void abandon() {
    (void)new DeviceBuffer<detail::GraphRoundCounters>(std::move(counters_));
    exec_ = nullptr;
    graph_ = nullptr;
  }

 private:
  // root: memset(counters) -> WHILE(loop) { round }
  template <class Graph>
  void build(const TimeslicedParams& params, const TimeslicedLaunch& launch) {
    detail::check_graph_call(cudaGraphCreate(&graph_, 0), "cudaGraphCreate");
    detail::GraphRoundParams control{};
    control.graph = params.graph;
    control.counters = counters_.get();
    control.loop = detail::make_handle(graph_, 1);  // the first round of every launch runs
    cudaMemsetParams zero{};
    zero.dst = counters_.get();
    zero.elementSize = 4;
    zero.width = sizeof(detail::GraphRoundCounters) / 4;
    zero.height = 1;
    cudaGraphNode_t reset = nullptr;
    detail::check_graph_call(cudaGraphAddMemsetNode(&reset, graph_, nullptr, 0, &zero), "cudaGraphAddMemsetNode");
    cudaGraph_t round = nullptr;
    detail::add_conditional_node(graph_, &reset, 1, control.loop, cudaGraphCondTypeWhile, round);
    build_round<Graph>(round, control, params, launch);
  }

  // round: control -> IF(launch[q][c]) { worker kernel of queue q, grid class c }, every queue
  // and class side by side (at most one class per queue runs).
  template <class Graph>
  static void build_round(cudaGraph_t round, detail::GraphRoundParams control, TimeslicedParams params,
                          const TimeslicedLaunch& launch) {
    const std::uint32_t queues = params.graph.table.num_queues;
    const std::uint32_t all = launch.max_blocks;
    const std::uint32_t blocks[detail::grid_classes] = {1, std::max(1u, all / 8), all};
    for (std::uint32_t c = 0; c < detail::grid_classes; ++c) control.class_blocks[c] = std::min(blocks[c], all);
    // Each IF handle belongs to the graph that holds its node. It needs no value at launch:
    // the control kernel sets it every round, before the IF node reads it.
    for (std::uint32_t q = 0; q < queues; ++q) {
      control.slots[q] = std::max(1u, launch.layout.slots[q]);
      for (std::uint32_t c = 0; c < detail::grid_classes; ++c) control.launch[q][c] = detail::make_handle(round);
    }
    const cudaGraphNode_t step =
        detail::add_kernel_node(round, nullptr, 0, detail::timesliced_graph_control<Graph>, 1, 1, 0, control);
    for (std::uint32_t q = 0; q < queues; ++q) {
      params.queue = q;
      for (std::uint32_t c = 0; c < detail::grid_classes; ++c) {
        cudaGraph_t workers = nullptr;
        detail::add_conditional_node(round, &step, 1, control.launch[q][c], cudaGraphCondTypeIf, workers);
        detail::add_kernel_node(workers, nullptr, 0, detail::timesliced_entry<Graph>, control.class_blocks[c],
                                launch.layout.block_threads, launch.shared, params);
      }
    }
  }

  void release() {
    if (exec_) cudaGraphExecDestroy(exec_);
    if (graph_) cudaGraphDestroy(graph_);
    exec_ = nullptr;
    graph_ = nullptr;
  }

  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
  DeviceBuffer<detail::GraphRoundCounters> counters_;
  TimeslicedParams params_{};  // the arguments exec_ was built with
  TimeslicedLaunch launch_{};
};

// Runs the seeded graph in device-side timesliced rounds (one CUDA graph launch) until it
// finishes, stops or fails. `cache` keeps the instantiated graph between runs.
template <class Graph>
void run_timesliced_graph(DeviceRuntime& runtime, TimeslicedGraph& cache) {
  constexpr const char* name = "timesliced_graph";
  const TimeslicedLaunch launch = plan_timesliced<Graph>(runtime, name);
  TimeslicedParams params{};
  params.layout = launch.layout;
  params.graph = runtime.begin_run();
  const cudaGraphExec_t exec = cache.prepare<Graph>(params, launch);
  runtime.note_launch(name, launch.max_blocks, launch.layout.block_threads, launch.shared);
  detail::check_graph_call(cudaGraphLaunch(exec, runtime.stream()), "cudaGraphLaunch");
  runtime.supervise();
  if (cudaStreamQuery(runtime.stream()) != cudaSuccess) {
    cache.abandon();
    return;
  }
  const detail::GraphRoundCounters counted = cache.counters();
  runtime.note_rounds(counted.rounds, counted.launches);
}

}  // namespace apiary
