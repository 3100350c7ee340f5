// Baseline: a device graph that launches itself again from the device (device graph launch,
// cudaStreamGraphTailLaunch), the mechanism under the device controller's wave mode; ns per wave.
//   shape=one node   one kernel node that counts the wave and tail-launches its own graph;
//   shape=pdc_wave   the PDC wave graph's shape with empty work: a controller node enables one
//                    of two device-updatable worker nodes (its grid set from the device), disables
//                    the other and tail-launches the graph; the worker counts the wave. The last
//                    controller disables both and ends.
// The device counts the waves and the worker runs; both are checked.
#include "bench.hpp"

#include <apiary/cuda_check.hpp>

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

namespace apiary_bench {

#if defined(__CUDACC_RDC__)
namespace {

struct WaveState {
  std::uint32_t waves;         // controller runs (shape one node: node runs)
  std::uint32_t worker_runs;
  std::uint32_t iterations;
  cudaGraphDeviceNode_t workers[2];
};

__global__ void relaunch_one_node(WaveState* s) {
  if (++s->waves < s->iterations) (void)cudaGraphLaunch(cudaGetCurrentGraphExec(), cudaStreamGraphTailLaunch);
}

__global__ void wave_controller(WaveState* s) {
  const std::uint32_t wave = s->waves++;
  const bool go = wave < s->iterations;
  for (std::uint32_t w = 0; w < 2; ++w) {
    if (go && wave % 2 == w) {
      (void)cudaGraphKernelNodeSetGridDim(s->workers[w], dim3(1));
      (void)cudaGraphKernelNodeSetEnabled(s->workers[w], true);
    } else {
      (void)cudaGraphKernelNodeSetEnabled(s->workers[w], false);
    }
  }
  if (go) (void)cudaGraphLaunch(cudaGetCurrentGraphExec(), cudaStreamGraphTailLaunch);
}

__global__ void wave_worker(WaveState* s) {
  if (threadIdx.x == 0) atomicAdd(&s->worker_runs, 1u);
}

// A graph and its executable, instantiated for device launch.
struct DeviceGraph {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  DeviceGraph() { APIARY_CUDA_CHECK(cudaGraphCreate(&graph, 0)); }
  ~DeviceGraph() {
    if (exec) cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
  }
  DeviceGraph(const DeviceGraph&) = delete;
  DeviceGraph& operator=(const DeviceGraph&) = delete;
  cudaGraphNode_t add(void* kernel, unsigned threads, void** args, const cudaGraphNode_t* after) {
    cudaKernelNodeParams p{};
    p.func = kernel;
    p.gridDim = dim3(1);
    p.blockDim = dim3(threads);
    p.kernelParams = args;
    cudaGraphNode_t node = nullptr;
    APIARY_CUDA_CHECK(cudaGraphAddKernelNode(&node, graph, after, after ? 1 : 0, &p));
    return node;
  }
  void instantiate(cudaStream_t s) {
    APIARY_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, cudaGraphInstantiateFlagDeviceLaunch));
    APIARY_CUDA_CHECK(cudaGraphUpload(exec, s));
  }
};

cudaGraphDeviceNode_t make_device_updatable(cudaGraphNode_t node) {
  cudaKernelNodeAttrValue v{};
  v.deviceUpdatableKernelNode.deviceUpdatable = 1;
  APIARY_CUDA_CHECK(cudaGraphKernelNodeSetAttribute(node, cudaKernelNodeAttributeDeviceUpdatableKernelNode, &v));
  if (v.deviceUpdatableKernelNode.devNode == nullptr)
    APIARY_CUDA_CHECK(cudaGraphKernelNodeGetAttribute(node, cudaKernelNodeAttributeDeviceUpdatableKernelNode, &v));
  if (v.deviceUpdatableKernelNode.devNode == nullptr)
    throw Failure("device_graph_relaunch", "no device handle for a device-updatable node");
  return v.deviceUpdatableKernelNode.devNode;
}

}  // namespace

Measurement measure_device_graph_relaunch(const char* shape, std::uint32_t iterations, int repeats) {
  const std::string how(shape);
  const bool wave = how == "pdc_wave";
  WaveState* state = nullptr;
  APIARY_CUDA_CHECK(cudaMalloc(&state, sizeof(WaveState)));
  struct Free {
    void* p;
    ~Free() { cudaFree(p); }
  } guard{state};
  cudaStream_t stream = nullptr;
  APIARY_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  struct StreamGuard {
    cudaStream_t s;
    ~StreamGuard() { cudaStreamDestroy(s); }
  } stream_guard{stream};

  DeviceGraph g;
  void* args[] = {&state};
  WaveState init{0, 0, iterations, {nullptr, nullptr}};
  if (wave) {
    const cudaGraphNode_t controller = g.add(reinterpret_cast<void*>(wave_controller), 1, args, nullptr);
    for (auto& w : init.workers)
      w = make_device_updatable(g.add(reinterpret_cast<void*>(wave_worker), 32, args, &controller));
  } else {
    g.add(reinterpret_cast<void*>(relaunch_one_node), 1, args, nullptr);
  }
  g.instantiate(stream);

  cudaEvent_t start = nullptr, stop = nullptr;
  APIARY_CUDA_CHECK(cudaEventCreate(&start));
  APIARY_CUDA_CHECK(cudaEventCreate(&stop));
  struct EventGuard {
    cudaEvent_t a, b;
    ~EventGuard() {
      cudaEventDestroy(a);
      cudaEventDestroy(b);
    }
  } event_guard{start, stop};
  Measurement m;
  m.benchmark = "device_graph_relaunch";
  m.config = {Field::str("shape", how), Field::num("iterations", iterations)};
  m.tasks = iterations;
  m.baseline = "none";
  for (int r = -1; r < repeats; ++r) {  // one warm-up
    APIARY_CUDA_CHECK(cudaMemcpyAsync(state, &init, sizeof(init), cudaMemcpyHostToDevice, stream));
    APIARY_CUDA_CHECK(cudaEventRecord(start, stream));
    APIARY_CUDA_CHECK(cudaGraphLaunch(g.exec, stream));
    APIARY_CUDA_CHECK(cudaEventRecord(stop, stream));
    APIARY_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    APIARY_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    WaveState seen{};
    APIARY_CUDA_CHECK(cudaMemcpy(&seen, state, sizeof(seen), cudaMemcpyDeviceToHost));
    const std::uint32_t want_waves = wave ? iterations + 1 : iterations, want_runs = wave ? iterations : 0;
    if (seen.waves != want_waves || seen.worker_runs != want_runs)
      throw Failure("device_graph_relaunch", how + ": " + std::to_string(seen.waves) + " waves and " +
                                                 std::to_string(seen.worker_runs) + " worker runs, expected " +
                                                 std::to_string(want_waves) + " and " + std::to_string(want_runs));
    if (r >= 0) m.ms.push_back(ms);
  }
  return m;
}

#else

Measurement measure_device_graph_relaunch(const char*, std::uint32_t, int) {
  throw Failure("device_graph_relaunch", "needs relocatable device code (apiary_enable_device_controller)");
}

#endif

}  // namespace apiary_bench
