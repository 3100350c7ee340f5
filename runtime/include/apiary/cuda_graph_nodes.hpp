// Kernel nodes of a CUDA graph built by hand, and device-updatable ones (CUDA 12.4+: a kernel
// sets their grid or enables them from the device). Shared by the device controller's wave
// graph, the timesliced scheduler's round graph and the runtime benchmark's device-graph
// baseline.
#pragma once

#include <apiary/cuda_check.hpp>
#include <apiary/error.hpp>

#include <cuda_runtime.h>

#include <cstddef>

namespace apiary {

// The parameters of a kernel node `kernel<<<grid, threads, shared>>>(args...)`.
inline cudaKernelNodeParams kernel_node_params(const void* kernel, unsigned grid, unsigned threads, unsigned shared,
                                               void** args) {
  cudaKernelNodeParams p{};
  p.func = const_cast<void*>(kernel);
  p.gridDim = dim3(grid);
  p.blockDim = dim3(threads);
  p.sharedMemBytes = shared;
  p.kernelParams = args;
  return p;
}

// Adds `kernel<<<grid, threads, shared>>>(args...)` to `graph`, after the `dependencies` nodes
// at `after` (none: a root).
inline cudaGraphNode_t add_kernel_node(cudaGraph_t graph, const void* kernel, unsigned grid, unsigned threads,
                                       unsigned shared, void** args, const cudaGraphNode_t* after,
                                       std::size_t dependencies) {
  const cudaKernelNodeParams p = kernel_node_params(kernel, grid, threads, shared, args);
  cudaGraphNode_t node = nullptr;
  APIARY_CUDA_CHECK(cudaGraphAddKernelNode(&node, graph, after, dependencies, &p));
  return node;
}

// Sets node `node` of `exec` to `kernel<<<grid, threads, shared>>>(args...)` for later launches.
inline void set_kernel_node(cudaGraphExec_t exec, cudaGraphNode_t node, const void* kernel, unsigned grid,
                            unsigned threads, unsigned shared, void** args) {
  const cudaKernelNodeParams p = kernel_node_params(kernel, grid, threads, shared, args);
  APIARY_CUDA_CHECK(cudaGraphExecKernelNodeSetParams(exec, node, &p));
}

// Makes kernel node `to` depend on kernel node `from` with an early launch (programmatic
// dependent launch, sm_90+): `to` is launched once every block of `from` has started, and its
// threads wait in cudaGridDependencySynchronize() until `from` completed and its memory writes
// are visible. `to` must call it before it reads anything `from` writes.
inline void add_early_launch_edge(cudaGraph_t graph, cudaGraphNode_t from, cudaGraphNode_t to) {
  cudaGraphEdgeData edge{};
  edge.from_port = cudaGraphKernelNodePortLaunchCompletion;
  edge.type = cudaGraphDependencyTypeProgrammatic;
  APIARY_CUDA_CHECK(cudaGraphAddDependencies(graph, &from, &to, &edge, 1));
}

// Adds `kernel<<<1, threads, shared>>>(args...)` to `graph`, after `after` (nullptr: a root).
// The grid is one block until the node is updated.
inline cudaGraphNode_t add_kernel_node(cudaGraph_t graph, const void* kernel, unsigned threads, unsigned shared,
                                       void** args, const cudaGraphNode_t* after = nullptr) {
  return add_kernel_node(graph, kernel, 1, threads, shared, args, after, after ? 1 : 0);
}

// Makes a kernel node device-updatable and returns the handle device code updates it through.
inline cudaGraphDeviceNode_t make_device_updatable(cudaGraphNode_t node) {
  cudaKernelNodeAttrValue value{};
  value.deviceUpdatableKernelNode.deviceUpdatable = 1;
  APIARY_CUDA_CHECK(cudaGraphKernelNodeSetAttribute(node, cudaKernelNodeAttributeDeviceUpdatableKernelNode, &value));
  if (value.deviceUpdatableKernelNode.devNode == nullptr)  // not every driver writes it back
    APIARY_CUDA_CHECK(cudaGraphKernelNodeGetAttribute(node, cudaKernelNodeAttributeDeviceUpdatableKernelNode, &value));
  if (value.deviceUpdatableKernelNode.devNode == nullptr)
    throw CudaError("CUDA returned no device handle for a device-updatable kernel node");
  return value.deviceUpdatableKernelNode.devNode;
}

}  // namespace apiary
