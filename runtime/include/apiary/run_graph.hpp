// A whole run of a one-kernel scheduler (the megakernel) as one CUDA graph launch: the run's
// start kernel, the scheduler's kernel and the run's end kernel (run_bookkeeping.hpp), with
// the run's start, stop and summary events recorded by nodes of the graph.
//
// Why: launched one by one, the three kernels cost the host a launch each on the critical
// path of a short run (the megakernel's 6.3 KB of parameters alone took 6-8 us per launch on
// an H100, docs/jacobi.md "a solve's fixed cost"), and the megakernel could start only once
// the host had queued it. A graph keeps the nodes' parameters on the device between runs: a
// run sets the start node's (they change with every run's seeds), the others only where
// they changed, and launches the graph once. Kernels that wait for the one before them on the
// device (KernelLaunch::waits_for_previous: the megakernel, the end kernel) are launched early
// behind it, so their blocks are resident when it ends (docs/benchmarks.md, "Kept: a
// megakernel run as one CUDA graph launch": an MK run of one empty task 35.5-42.1 -> 28.0-30.7
// us of host time on an H200).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <vector>

namespace apiary {

// `kernel<<<grid, threads, shared>>>(args)` for a kernel of one by-value parameter of
// `arg_bytes` bytes at `args`, with the shared memory carveout `carveout` (percent; -1: the
// kernel's own attribute).
struct KernelLaunch {
  const void* kernel = nullptr;
  unsigned grid = 1, threads = 1, shared = 0;
  const void* args = nullptr;
  std::size_t arg_bytes = 0;
  int carveout = -1;
  // The kernel calls cudaGridDependencySynchronize() before it reads anything the kernel before
  // it in the graph writes: it may then be launched early (run_graph.cpp).
  bool waits_for_previous = false;
};

class RunGraph {
 public:
  // The events the graph records: `start` after the start kernel, `stop` after the scheduler's
  // kernel, `done` after the end kernel.
  RunGraph(cudaEvent_t start, cudaEvent_t stop, cudaEvent_t done) : start_(start), stop_(stop), done_(done) {}
  ~RunGraph();
  RunGraph(const RunGraph&) = delete;
  RunGraph& operator=(const RunGraph&) = delete;

  // Launches start, then scheduler, then end on `stream` (built on first use; later runs update
  // only the nodes whose launch differs from the last run's).
  void launch(const KernelLaunch& start, const KernelLaunch& scheduler, const KernelLaunch& end, cudaStream_t stream);

 private:
  // A kernel node and the launch it holds now (its argument bytes copied).
  struct Node {
    cudaGraphNode_t node = nullptr;
    KernelLaunch launch;
    std::vector<unsigned char> args;
    bool holds(const KernelLaunch& l) const;
    void remember(const KernelLaunch& l);
  };
  void build(const KernelLaunch& start, const KernelLaunch& scheduler, const KernelLaunch& end);
  void update(Node& node, const KernelLaunch& launch);

  cudaEvent_t start_, stop_, done_;
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
  Node start_node_, scheduler_node_, end_node_;
};

}  // namespace apiary
