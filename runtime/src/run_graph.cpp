#include <apiary/cuda_check.hpp>
#include <apiary/cuda_graph_nodes.hpp>
#include <apiary/run_graph.hpp>

#include <cstring>

namespace apiary {

namespace {

bool same_kernel(const KernelLaunch& a, const KernelLaunch& b) {
  return a.kernel == b.kernel && a.carveout == b.carveout && a.arg_bytes == b.arg_bytes &&
         a.waits_for_previous == b.waits_for_previous;
}

cudaGraphNode_t add_event_node(cudaGraph_t graph, cudaEvent_t event, cudaGraphNode_t after) {
  cudaGraphNode_t node = nullptr;
  APIARY_CUDA_CHECK(cudaGraphAddEventRecordNode(&node, graph, &after, 1, event));
  return node;
}

}  // namespace

RunGraph::~RunGraph() {
  if (exec_) cudaGraphExecDestroy(exec_);
  if (graph_) cudaGraphDestroy(graph_);
}

bool RunGraph::Node::holds(const KernelLaunch& l) const {
  return same_kernel(launch, l) && launch.grid == l.grid && launch.threads == l.threads && launch.shared == l.shared &&
         std::memcmp(args.data(), l.args, l.arg_bytes) == 0;
}

void RunGraph::Node::remember(const KernelLaunch& l) {
  launch = l;
  args.assign(static_cast<const unsigned char*>(l.args), static_cast<const unsigned char*>(l.args) + l.arg_bytes);
  launch.args = nullptr;  // the caller's copy goes; ours is `args`
}

void RunGraph::launch(const KernelLaunch& start, const KernelLaunch& scheduler, const KernelLaunch& end,
                      cudaStream_t stream) {
  // A different kernel or carveout (another scheduler's kernel, a new plan) is a new graph:
  // a node's function and attributes stay as instantiated.
  const bool rebuild = !exec_ || !same_kernel(start_node_.launch, start) ||
                       !same_kernel(scheduler_node_.launch, scheduler) || !same_kernel(end_node_.launch, end);
  if (rebuild) {
    build(start, scheduler, end);
  } else {
    update(start_node_, start);
    update(scheduler_node_, scheduler);
    update(end_node_, end);
  }
  APIARY_CUDA_CHECK(cudaGraphLaunch(exec_, stream));
}

void RunGraph::update(Node& node, const KernelLaunch& launch) {
  if (node.holds(launch)) return;
  void* args[] = {const_cast<void*>(launch.args)};
  set_kernel_node(exec_, node.node, launch.kernel, launch.grid, launch.threads, launch.shared, args);
  node.remember(launch);
}

// start -> record(start) -> scheduler -> record(stop) -> end -> record(done): the events in the
// chain, so the run's clock spans the scheduler's kernel alone, as for stream launches. A
// kernel that waits for the one before it itself (`waits_for_previous`) hangs off that kernel
// by an early-launch edge instead, beside its event: its blocks are launched while the kernel
// before runs and wait on the device for its end, not for the graph to launch the next node.
void RunGraph::build(const KernelLaunch& start, const KernelLaunch& scheduler, const KernelLaunch& end) {
  if (exec_) APIARY_CUDA_CHECK(cudaGraphExecDestroy(exec_));
  if (graph_) APIARY_CUDA_CHECK(cudaGraphDestroy(graph_));
  exec_ = nullptr;
  graph_ = nullptr;
  APIARY_CUDA_CHECK(cudaGraphCreate(&graph_, 0));
  auto add = [&](Node& node, const KernelLaunch& launch, cudaGraphNode_t after) {
    void* args[] = {const_cast<void*>(launch.args)};
    node.node = add_kernel_node(graph_, launch.kernel, launch.grid, launch.threads, launch.shared, args,
                                after ? &after : nullptr, after ? 1 : 0);
    if (launch.carveout >= 0) {
      cudaKernelNodeAttrValue value{};
      value.sharedMemCarveout = static_cast<unsigned>(launch.carveout);
      APIARY_CUDA_CHECK(
          cudaGraphKernelNodeSetAttribute(node.node, cudaKernelNodeAttributePreferredSharedMemoryCarveout, &value));
    }
    node.remember(launch);
    return node.node;
  };
  // `node` after `kernel` (an early-launch edge) or after `recorded`, the event behind it.
  auto add_after = [&](Node& node, const KernelLaunch& launch, cudaGraphNode_t kernel, cudaGraphNode_t recorded) {
    if (!launch.waits_for_previous) return add(node, launch, recorded);
    const cudaGraphNode_t added = add(node, launch, nullptr);
    add_early_launch_edge(graph_, kernel, added);
    return added;
  };
  const cudaGraphNode_t first = add(start_node_, start, nullptr);
  const cudaGraphNode_t running =
      add_after(scheduler_node_, scheduler, first, add_event_node(graph_, start_, first));
  const cudaGraphNode_t last = add_after(end_node_, end, running, add_event_node(graph_, stop_, running));
  add_event_node(graph_, done_, last);
  APIARY_CUDA_CHECK(cudaGraphInstantiate(&exec_, graph_, 0));
}

}  // namespace apiary
