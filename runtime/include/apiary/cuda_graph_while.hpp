// A CUDA graph WHILE loop (conditional node, CUDA 12.4+): the baseline a user would otherwise
// write for an iterative GPU computation, shared by the runtime benchmark and the Jacobi app.
#pragma once

#include <apiary/cuda_check.hpp>

#include <cuda_runtime.h>

#include <cstddef>

namespace apiary {

struct GraphWhileLoop {
  cudaGraphConditionalHandle handle{};  // the body sets it with cudaGraphSetConditional
  cudaGraph_t body = nullptr;           // owned by `graph`: add the body's nodes here
  cudaGraphNode_t node = nullptr;
};

// Adds a WHILE node to `graph` after `dependencies`. The condition is 1 at every launch, so
// the body runs at least once and then decides itself whether to run again.
inline GraphWhileLoop add_graph_while_loop(cudaGraph_t graph, const cudaGraphNode_t* dependencies = nullptr,
                                           std::size_t count = 0) {
  GraphWhileLoop loop;
  APIARY_CUDA_CHECK(cudaGraphConditionalHandleCreate(&loop.handle, graph, 1, cudaGraphCondAssignDefault));
  cudaGraphNodeParams params{};
  params.type = cudaGraphNodeTypeConditional;
  params.conditional.handle = loop.handle;
  params.conditional.type = cudaGraphCondTypeWhile;
  params.conditional.size = 1;
  APIARY_CUDA_CHECK(cudaGraphAddNode(&loop.node, graph, dependencies, nullptr, count, &params));
  loop.body = params.conditional.phGraph_out[0];
  return loop;
}

}  // namespace apiary
