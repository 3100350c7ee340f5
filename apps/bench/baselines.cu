// The baselines the runtime's per-task cost is compared with, measured in the same process:
//   host_launch   one empty <<<1, 32>>> kernel launched from the host per task, back to back;
//   graph_node    one empty <<<1, 32>>> kernel node per task, a chain captured into a CUDA
//                 graph and replayed;
//   graph_while   a CUDA graph whose conditional WHILE node runs a 1-kernel body N times: the
//                 body kernel decrements a device counter and sets the loop condition with
//                 cudaGraphSetConditional (CUDA 12.4+); ns per iteration;
//   host_round_trip  what one host-driven round costs with nothing in it: per iteration the host
//                 launches an empty <<<1, 32>>> kernel and waits until it ended, seen through
//                 a spin on cudaEventQuery (`wait=event`) or on a word the kernel writes into
//                 mapped host memory (`wait=mapped`); `shape=tsk_round` is the timesliced
//                 round's launch shape with empty kernels (control kernel, event, host wait,
//                 a worker kernel on its own stream that the next control kernel waits for);
//   launch_wait   one empty <<<1, 32>>> kernel launch and a cudaStreamSynchronize, host wall
//                 clock: the least a host can do to run something on the GPU and know it
//                 ended (what the runtime's run_overhead is compared with);
//   plain_kernel  one data-parallel kernel for all tasks (a worker of 1/32/256 threads per
//                 item, each reading its item like the runtime's empty task): what the same
//                 "tasks" cost with no scheduling at all.
//   device_graph_relaunch  a device graph launching itself again from the device (device
//                 graph launch, cudaStreamGraphTailLaunch), the mechanism under the device
//                 controller's wave mode; ns per wave. shape=one node: one kernel node that
//                 counts the wave and relaunches its graph; shape=pdc_wave: the wave graph's
//                 shape with empty work (a controller node enables one of two device-updatable
//                 worker nodes, its grid set from the device, disables the other and relaunches
//                 the graph; the last controller disables both and ends); shape=pdc_wave_batched:
//                 the same updates in one cudaGraphKernelNodeUpdatesApply call;
//                 shape=pdc_wave_fixed: the same graph with no updates (both workers enabled,
//                 one block each; a worker that is not the wave's returns at once), what the
//                 shape costs without device-side node updates. The device counts the waves and
//                 the worker runs; both are checked.
#include "bench.hpp"

#include <apiary/cuda_check.hpp>
#include <apiary/cuda_graph_nodes.hpp>
#include <apiary/cuda_graph_while.hpp>

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

namespace apiary_bench {
namespace {

__global__ void empty_kernel() {}

// graph_while: the node before the loop sets the counter, the body counts it down.
__global__ void while_reset(std::uint32_t* counter, std::uint32_t iterations) {
  if (threadIdx.x == 0) *counter = iterations;
}
__global__ void while_body(std::uint32_t* counter, cudaGraphConditionalHandle handle) {
  if (threadIdx.x == 0) {
    const std::uint32_t left = --*counter;
    cudaGraphSetConditional(handle, left > 0 ? 1u : 0u);
  }
}

// host_round_trip, wait=mapped: the kernel publishes the iteration it belongs to.
__global__ void publish_kernel(volatile std::uint64_t* word, std::uint64_t value) {
  if (threadIdx.x == 0) {
    __threadfence_system();
    *word = value;
  }
}

__global__ void plain_tasks(const std::uint32_t* items, std::uint64_t tasks, std::uint32_t shift) {
  const std::uint64_t task = (std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x) >> shift;
  if (task < tasks && items[task] == 0xffffffffu) __trap();  // never: items are 0..tasks-1
}

// CUDA resources released however the measurement ends.
struct Stream {
  cudaStream_t s = nullptr;
  Stream() { APIARY_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)); }
  ~Stream() { cudaStreamDestroy(s); }
};
struct Events {
  cudaEvent_t start = nullptr, stop = nullptr;
  Events() {
    APIARY_CUDA_CHECK(cudaEventCreate(&start));
    APIARY_CUDA_CHECK(cudaEventCreate(&stop));
  }
  ~Events() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
  // Milliseconds between the two events around `work` on stream s.
  template <class Work>
  double time(cudaStream_t s, Work&& work) {
    APIARY_CUDA_CHECK(cudaEventRecord(start, s));
    work();
    APIARY_CUDA_CHECK(cudaEventRecord(stop, s));
    APIARY_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    APIARY_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    return ms;
  }
};

// An event the host waits on (no timing).
struct Event {
  cudaEvent_t e = nullptr;
  Event() { APIARY_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming)); }
  ~Event() { cudaEventDestroy(e); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  // Records it on stream s and spins on cudaEventQuery until the work before it ended.
  void record_and_spin(cudaStream_t s) const {
    APIARY_CUDA_CHECK(cudaEventRecord(e, s));
    cudaError_t status;
    while ((status = cudaEventQuery(e)) == cudaErrorNotReady) {
    }
    APIARY_CUDA_CHECK(status);
  }
};

// Device memory, a graph and an instantiated graph, freed with the guard.
struct DeviceMemory {
  void* p;
  ~DeviceMemory() { cudaFree(p); }
};
struct GraphOwner {
  cudaGraph_t g;
  ~GraphOwner() { cudaGraphDestroy(g); }
};
struct GraphExecOwner {
  cudaGraphExec_t e;
  ~GraphExecOwner() { cudaGraphExecDestroy(e); }
};

// One 64-bit word of mapped pinned host memory, and its device address.
struct MappedWord {
  std::uint64_t* host = nullptr;
  std::uint64_t* device = nullptr;
  MappedWord() {
    APIARY_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&host), sizeof(std::uint64_t), cudaHostAllocMapped));
    *host = 0;
    APIARY_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device), host, 0));
  }
  ~MappedWord() { cudaFreeHost(host); }
  MappedWord(const MappedWord&) = delete;
  MappedWord& operator=(const MappedWord&) = delete;
};

template <class Work>
std::vector<double> repeat(int repeats, Stream& stream, Events& events, Work&& work) {
  std::vector<double> ms;
  events.time(stream.s, work);  // warm-up
  for (int r = 0; r < repeats; ++r) ms.push_back(events.time(stream.s, work));
  return ms;
}

}  // namespace

Measurement measure_host_launches(std::uint32_t launches, int repeats) {
  Stream stream;
  Events events;
  Measurement m;
  m.benchmark = "host_launch";
  m.config = {Field::num("grid", 1), Field::num("block", 32), Field::num("launches", launches)};
  m.tasks = launches;
  m.baseline = "none";
  m.ms = repeat(repeats, stream, events, [&] {
    for (std::uint32_t i = 0; i < launches; ++i) empty_kernel<<<1, 32, 0, stream.s>>>();
    APIARY_CUDA_CHECK(cudaGetLastError());
  });
  return m;
}

Measurement measure_graph_nodes(std::uint32_t nodes, int repeats) {
  Stream stream;
  Events events;
  cudaGraph_t graph = nullptr;
  APIARY_CUDA_CHECK(cudaStreamBeginCapture(stream.s, cudaStreamCaptureModeThreadLocal));
  for (std::uint32_t i = 0; i < nodes; ++i) empty_kernel<<<1, 32, 0, stream.s>>>();
  APIARY_CUDA_CHECK(cudaStreamEndCapture(stream.s, &graph));
  cudaGraphExec_t exec = nullptr;
  const cudaError_t instantiated = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  APIARY_CUDA_CHECK(instantiated);
  GraphExecOwner guard{exec};
  APIARY_CUDA_CHECK(cudaGraphUpload(exec, stream.s));  // the upload is not part of a replay

  Measurement m;
  m.benchmark = "graph_node";
  m.config = {Field::num("grid", 1), Field::num("block", 32), Field::num("nodes", nodes),
              Field::str("shape", "chain")};
  m.tasks = nodes;
  m.baseline = "none";
  m.ms = repeat(repeats, stream, events, [&] { APIARY_CUDA_CHECK(cudaGraphLaunch(exec, stream.s)); });
  return m;
}

Measurement measure_graph_while(std::uint32_t iterations, int repeats) {
  std::uint32_t* counter = nullptr;
  APIARY_CUDA_CHECK(cudaMalloc(&counter, sizeof(std::uint32_t)));
  DeviceMemory counter_guard{counter};

  cudaGraph_t graph = nullptr;
  APIARY_CUDA_CHECK(cudaGraphCreate(&graph, 0));
  GraphOwner graph_guard{graph};
  // reset -> WHILE(handle) { while_body }
  void* reset_args[] = {&counter, &iterations};
  const cudaGraphNode_t reset =
      apiary::add_kernel_node(graph, reinterpret_cast<const void*>(while_reset), 32, 0, reset_args);
  const apiary::GraphWhileLoop loop = apiary::add_graph_while_loop(graph, &reset, 1);
  cudaGraphConditionalHandle handle = loop.handle;  // while_body's argument
  void* body_args[] = {&counter, &handle};
  apiary::add_kernel_node(loop.body, reinterpret_cast<const void*>(while_body), 32, 0, body_args);
  cudaGraphExec_t exec = nullptr;
  APIARY_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  GraphExecOwner exec_guard{exec};

  Stream stream;
  Events events;
  APIARY_CUDA_CHECK(cudaGraphUpload(exec, stream.s));
  Measurement m;
  m.benchmark = "graph_while";
  m.config = {Field::num("grid", 1), Field::num("block", 32), Field::num("iterations", iterations),
              Field::str("body", "1 kernel")};
  m.tasks = iterations;
  m.baseline = "none";
  m.ms = repeat(repeats, stream, events, [&] { APIARY_CUDA_CHECK(cudaGraphLaunch(exec, stream.s)); });
  // The loop really ran `iterations` times: the counter reached zero.
  std::uint32_t left = 1;
  APIARY_CUDA_CHECK(cudaMemcpy(&left, counter, sizeof(left), cudaMemcpyDeviceToHost));
  if (left != 0) throw Failure("graph_while", "counter ended at " + std::to_string(left) + ", expected 0");
  return m;
}

namespace {

// wait=event: launch an empty kernel, spin on its event.
std::vector<double> time_event_round_trips(std::uint32_t iterations, int repeats) {
  Stream stream;
  Events events;
  Event done;
  return repeat(repeats, stream, events, [&] {
    for (std::uint32_t i = 0; i < iterations; ++i) {
      empty_kernel<<<1, 32, 0, stream.s>>>();
      done.record_and_spin(stream.s);
    }
  });
}

// wait=mapped: launch a kernel that writes the iteration into mapped memory, spin on the word.
std::vector<double> time_mapped_round_trips(std::uint32_t iterations, int repeats) {
  Stream stream;
  Events events;
  MappedWord word;
  volatile std::uint64_t* seen = word.host;
  std::uint64_t published = 0;
  return repeat(repeats, stream, events, [&] {
    for (std::uint32_t i = 0; i < iterations; ++i) {
      publish_kernel<<<1, 32, 0, stream.s>>>(word.device, ++published);
      APIARY_CUDA_CHECK(cudaGetLastError());
      while (*seen != published) {
      }
    }
  });
}

// shape=tsk_round: the timesliced round's launch shape with empty kernels: the control kernel,
// a host wait on its event, the round's worker kernel on its own stream, which the next
// control kernel waits for.
std::vector<double> time_tsk_round_shape(std::uint32_t iterations, int repeats) {
  Stream stream, worker;
  Events events;
  Event control_done, worker_done;
  return repeat(repeats, stream, events, [&] {
    for (std::uint32_t i = 0; i < iterations; ++i) {
      empty_kernel<<<1, 1, 0, stream.s>>>();  // the control kernel
      control_done.record_and_spin(stream.s);
      empty_kernel<<<1, 32, 0, worker.s>>>();  // the round's worker kernel
      APIARY_CUDA_CHECK(cudaEventRecord(worker_done.e, worker.s));
      APIARY_CUDA_CHECK(cudaStreamWaitEvent(stream.s, worker_done.e, 0));
    }
  });
}

}  // namespace

Measurement measure_launch_wait(std::uint32_t iterations, int repeats) {
  Stream stream;
  Measurement m;
  m.benchmark = "launch_wait";
  m.config = {Field::num("grid", 1), Field::num("block", 32), Field::num("iterations", iterations),
              Field::str("clock", "host")};
  m.tasks = iterations;
  m.baseline = "none";
  m.ms = host_timed(repeats, [&] {
    for (std::uint32_t i = 0; i < iterations; ++i) {
      empty_kernel<<<1, 32, 0, stream.s>>>();
      APIARY_CUDA_CHECK(cudaGetLastError());
      APIARY_CUDA_CHECK(cudaStreamSynchronize(stream.s));
    }
  });
  return m;
}

Measurement measure_host_round_trips(const char* wait, std::uint32_t iterations, int repeats) {
  const std::string how(wait);
  Measurement m;
  m.benchmark = "host_round_trip";
  m.tasks = iterations;
  m.baseline = "none";
  if (how == "event") {
    m.config = {Field::str("wait", "event"), Field::str("shape", "one kernel"), Field::num("iterations", iterations)};
    m.ms = time_event_round_trips(iterations, repeats);
  } else if (how == "mapped") {
    m.config = {Field::str("wait", "mapped"), Field::str("shape", "one kernel"), Field::num("iterations", iterations)};
    m.ms = time_mapped_round_trips(iterations, repeats);
  } else {  // tsk_round
    m.config = {Field::str("wait", "event"), Field::str("shape", "tsk_round"), Field::num("iterations", iterations)};
    m.ms = time_tsk_round_shape(iterations, repeats);
  }
  return m;
}

Measurement measure_plain_kernel(std::uint32_t worker_size, std::uint64_t tasks, int repeats) {
  std::vector<std::uint32_t> host(tasks);
  for (std::uint64_t i = 0; i < tasks; ++i) host[i] = static_cast<std::uint32_t>(i);
  std::uint32_t* items = nullptr;
  APIARY_CUDA_CHECK(cudaMalloc(&items, tasks * sizeof(std::uint32_t)));
  DeviceMemory guard{items};
  APIARY_CUDA_CHECK(cudaMemcpy(items, host.data(), tasks * sizeof(std::uint32_t), cudaMemcpyHostToDevice));

  std::uint32_t shift = 0;
  while ((1u << shift) < worker_size) ++shift;
  const std::uint32_t block = 256;
  const std::uint64_t threads = tasks << shift;
  const auto grid = static_cast<unsigned>((threads + block - 1) / block);

  Stream stream;
  Events events;
  Measurement m;
  m.benchmark = "plain_kernel";
  m.config = {Field::num("worker_size", worker_size), Field::num("block", block), Field::num("grid", grid)};
  m.tasks = tasks;
  m.baseline = "none";
  m.ms = repeat(repeats, stream, events, [&] {
    plain_tasks<<<grid, block, 0, stream.s>>>(items, tasks, shift);
    APIARY_CUDA_CHECK(cudaGetLastError());
  });
  return m;
}

#if defined(__CUDACC_RDC__)
namespace {

struct WaveState {
  std::uint32_t waves;  // controller runs (shape one node: node runs)
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

// The same updates as wave_controller, applied in one call.
__global__ void wave_controller_batched(WaveState* s) {
  const std::uint32_t wave = s->waves++;
  const bool go = wave < s->iterations;
  // Raw storage: the update's union holds a dim3, which deletes its default constructor.
  alignas(cudaGraphKernelNodeUpdate) unsigned char raw[3 * sizeof(cudaGraphKernelNodeUpdate)];
  auto* updates = reinterpret_cast<cudaGraphKernelNodeUpdate*>(raw);
  std::uint32_t n = 0;
  for (std::uint32_t w = 0; w < 2; ++w) {
    const bool on = go && wave % 2 == w;
    if (on) {
      updates[n].node = s->workers[w];
      updates[n].field = cudaGraphKernelNodeFieldGridDim;
      updates[n++].updateData.gridDim = dim3(1);
    }
    updates[n].node = s->workers[w];
    updates[n].field = cudaGraphKernelNodeFieldEnabled;
    updates[n++].updateData.isEnabled = on ? 1u : 0u;
  }
  (void)cudaGraphKernelNodeUpdatesApply(updates, n);
  if (go) (void)cudaGraphLaunch(cudaGetCurrentGraphExec(), cudaStreamGraphTailLaunch);
}

// No updates: both workers always run; the wave's own does the work.
__global__ void wave_controller_fixed(WaveState* s) {
  const std::uint32_t wave = s->waves++;
  if (wave < s->iterations) (void)cudaGraphLaunch(cudaGetCurrentGraphExec(), cudaStreamGraphTailLaunch);
}

__global__ void wave_worker(WaveState* s) {
  if (threadIdx.x == 0) atomicAdd(&s->worker_runs, 1u);
}

// Worker `w` of the fixed shape: counts a run only in the waves that are its own (the controller
// has already counted the wave: waves - 1 is this wave's number).
__global__ void wave_worker_fixed(WaveState* s, std::uint32_t w) {
  const std::uint32_t wave = s->waves - 1;
  if (threadIdx.x == 0 && wave < s->iterations && wave % 2 == w) atomicAdd(&s->worker_runs, 1u);
}

}  // namespace

Measurement measure_device_graph_relaunch(const char* shape, std::uint32_t iterations, int repeats) {
  const std::string how(shape);
  const bool batched = how == "pdc_wave_batched", fixed = how == "pdc_wave_fixed";
  const bool wave = how == "pdc_wave" || batched || fixed;
  if (!wave && how != "one node") throw Failure("device_graph_relaunch", "unknown shape '" + how + "'");
  WaveState* state = nullptr;
  APIARY_CUDA_CHECK(cudaMalloc(&state, sizeof(WaveState)));
  DeviceMemory state_guard{state};
  cudaGraph_t graph = nullptr;
  APIARY_CUDA_CHECK(cudaGraphCreate(&graph, 0));
  GraphOwner graph_guard{graph};
  void* args[] = {&state};
  WaveState init{0, 0, iterations, {nullptr, nullptr}};
  if (fixed) {
    const cudaGraphNode_t controller =
        apiary::add_kernel_node(graph, reinterpret_cast<const void*>(wave_controller_fixed), 1, 0, args);
    for (std::uint32_t w = 0; w < 2; ++w) {
      void* worker_args[] = {&state, &w};
      apiary::add_kernel_node(graph, reinterpret_cast<const void*>(wave_worker_fixed), 32, 0, worker_args, &controller);
    }
  } else if (wave) {
    const void* kernel = reinterpret_cast<const void*>(batched ? wave_controller_batched : wave_controller);
    const cudaGraphNode_t controller = apiary::add_kernel_node(graph, kernel, 1, 0, args);
    for (auto& w : init.workers)
      w = apiary::make_device_updatable(
          apiary::add_kernel_node(graph, reinterpret_cast<const void*>(wave_worker), 32, 0, args, &controller));
  } else {
    apiary::add_kernel_node(graph, reinterpret_cast<const void*>(relaunch_one_node), 1, 0, args);
  }
  cudaGraphExec_t exec = nullptr;
  APIARY_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, cudaGraphInstantiateFlagDeviceLaunch));
  GraphExecOwner exec_guard{exec};
  Stream stream;
  Events events;
  APIARY_CUDA_CHECK(cudaGraphUpload(exec, stream.s));

  Measurement m;
  m.benchmark = "device_graph_relaunch";
  m.config = {Field::str("shape", how), Field::num("iterations", iterations)};
  m.tasks = iterations;
  m.baseline = "none";
  const std::uint32_t want_waves = wave ? iterations + 1 : iterations, want_runs = wave ? iterations : 0;
  for (int r = -1; r < repeats; ++r) {  // one warm-up
    APIARY_CUDA_CHECK(cudaMemcpyAsync(state, &init, sizeof(init), cudaMemcpyHostToDevice, stream.s));
    const double ms = events.time(stream.s, [&] { APIARY_CUDA_CHECK(cudaGraphLaunch(exec, stream.s)); });
    WaveState seen{};
    APIARY_CUDA_CHECK(cudaMemcpy(&seen, state, sizeof(seen), cudaMemcpyDeviceToHost));
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
