// The megakernel scheduler (thesis 3.3 and 6.2): a persistent grid sized to fill the GPU;
// every block repeatedly picks a batch from an eligible queue (batch_picker.hpp), runs it with
// as many workers as fit the block, frees the slots and reports the batch finished. Phase
// advance and termination come from the shared phase controller.
#pragma once

#include <apiary/context.cuh>
#include <apiary/cuda_check.hpp>
#include <apiary/device_graph.hpp>
#include <apiary/device_runtime.hpp>
#include <apiary/error.hpp>
#include <apiary/graph.hpp>
#include <apiary/schedulers/batch_picker.hpp>
#include <apiary/worker.cuh>

#include <cuda_runtime.h>

#include <algorithm>
#include <new>
#include <string>
#include <utility>

namespace apiary {

struct MegakernelLayout {
  std::uint32_t block_threads = 0;
  std::uint32_t max_rounds = 8;                 // tasks per worker per batch, at most
  std::uint32_t trace_slot_bytes = 0;           // per-worker trace index area (tracing only)
  std::uint32_t task_shared_offset = 0;         // where task shared memory starts
  std::uint32_t slot_size[max_queues];
  std::uint32_t slots[max_queues];
  std::uint32_t shared_stride[max_queues];      // task shared bytes rounded to 16
};

struct MegakernelParams {
  DeviceGraph graph;
  MegakernelLayout layout;
};

namespace detail {

template <class... Ts, class F>
__device__ void dispatch_code(TypeList<Ts...>, std::uint32_t code, F&& f) {
  std::uint32_t i = 0;
  ((code == i++ ? (f.template operator()<Ts>(), 0) : 0), ...);
}

// One worker runs its share of a batch: tasks slot, slot + slots, ...
template <class Graph, class T>
__device__ void run_worker_tasks(const DeviceGraph& g, const MegakernelLayout& layout, const Batch& batch,
                                 std::byte* smem, std::uint32_t slot, std::uint32_t rank) {
  using Item = typename T::Item;
  const std::uint32_t q = batch.queue;
  const std::uint32_t size = g.table.worker_size[q];
  auto* trace_index = reinterpret_cast<std::uint32_t*>(smem);
  auto* barriers = reinterpret_cast<Worker::BlockBarrier*>(smem + layout.trace_slot_bytes);
  void* task_shared = smem + layout.task_shared_offset + slot * layout.shared_stride[q];
  const Worker worker(rank, size, slot, layout.slot_size[q], task_shared, barriers + slot % WorkerShape::max_block_barriers);
  const QueueView& queue = g.queues[q];
  const bool traced = g.trace.enabled();
  const std::int16_t phase = g.table.queue_phase[q] == no_phase ? phaseless_phase : std::int16_t(batch.phase.phase);

  for (std::uint32_t i = slot; i < batch.count; i += layout.slots[q]) {
    const std::uint64_t ticket = batch.first + i;
    if (!queue.wait_published(ticket)) return;
    alignas(8) unsigned char raw[queue_stride(sizeof(Item))];
    queue.read(ticket, raw, sizeof(Item));
    const Item& item = *std::launder(reinterpret_cast<const Item*>(raw));

    std::uint32_t task = no_task;
    std::uint64_t start = 0;
    if (traced) {
      if (rank == 0) trace_index[slot] = g.trace.begin_task();
      worker.sync();
      task = trace_index[slot];
      start = global_timer_ns();
    }
    const Context<Graph> ctx(g, q, task);
    T{}(worker, item, ctx);
    if (traced) {
      worker.sync();
      if (rank == 0)
        g.trace.write_task(task, TaskRecord{start, global_timer_ns(), queue.tag(ticket), task, q, sm_id(),
                                            blockIdx.x, std::uint16_t(slot), phase, batch.phase.epoch});
    }
  }
}

template <class Graph>
__device__ void run_batch(const DeviceGraph& g, const MegakernelLayout& layout, const Batch& batch, std::byte* smem) {
  const std::uint32_t q = batch.queue;
  const std::uint32_t slot = threadIdx.x / layout.slot_size[q];
  const std::uint32_t rank = threadIdx.x % layout.slot_size[q];
  if (slot >= layout.slots[q] || rank >= g.table.worker_size[q]) return;
  dispatch_code(typename GraphTraits<Graph>::Codes{}, g.table.code[q],
                [&]<class T>() { run_worker_tasks<Graph, T>(g, layout, batch, smem, slot, rank); });
}

// Thread 0 of a block: the next batch, backing off while nothing is eligible.
__device__ inline Batch next_batch(const DeviceGraph& g, const MegakernelLayout& layout, std::uint32_t& rotor) {
  const PhaseController pc = g.controller();
  auto max_items = [&](std::uint32_t q, std::int64_t available) {
    const std::uint64_t per_round = std::uint64_t(layout.slots[q]) * gridDim.x;
    std::uint64_t rounds = std::uint64_t(available) / per_round;
    rounds = rounds < 1 ? 1 : (rounds > layout.max_rounds ? layout.max_rounds : rounds);
    return static_cast<std::uint32_t>(rounds * layout.slots[q]);
  };
  auto parked = [&] { return g.waiting.parked_hint(); };
  std::uint32_t backoff = 32;
  for (;;) {
    const Batch batch = pick_batch(g.queues, pc, rotor, max_items, parked);
    if (batch.stop || batch.count != 0) return batch;
    __nanosleep(backoff);
    backoff = backoff < 2048 ? backoff * 2 : backoff;
  }
}

template <class Graph>
__global__ void megakernel_entry(const __grid_constant__ MegakernelParams params) {
  extern __shared__ __align__(16) std::byte smem[];
  __shared__ Batch batch;
  __shared__ std::uint32_t rotor;
  const DeviceGraph& g = params.graph;
  const MegakernelLayout& layout = params.layout;
  if (threadIdx.x == 0) rotor = blockIdx.x % g.table.num_queues;
  auto* barriers = reinterpret_cast<Worker::BlockBarrier*>(smem + layout.trace_slot_bytes);
  __syncthreads();
  for (;;) {
    if (threadIdx.x == 0) {
      batch = next_batch(g, layout, rotor);
      // Workers wider than a warp synchronise through one barrier object per slot, set up
      // for this batch's worker size before the block-wide barrier below publishes it.
      const std::uint32_t size = batch.stop ? 0u : g.table.worker_size[batch.queue];
      if (size > 32)
        for (std::uint32_t s = 0; s < layout.slots[batch.queue]; ++s) init(&barriers[s], std::ptrdiff_t(size));
    }
    __syncthreads();
    if (batch.stop) break;
    run_batch<Graph>(g, layout, batch, smem);
    __syncthreads();
    const QueueView& queue = g.queues[batch.queue];
    for (std::uint32_t i = threadIdx.x; i < batch.count; i += blockDim.x) queue.release(batch.first + i);
    if (threadIdx.x == 0) {
      DeviceAtomic<std::uint64_t>(queue.counters->executed).fetch_add(batch.count, mo::relaxed);
      g.controller().finish(batch.queue, batch.count);
    }
    __syncthreads();
  }
}

// Host: block size, worker slots and shared memory for a graph's layout.
inline MegakernelLayout plan_megakernel(const PhaseTable& table, const Config& config, bool traced,
                                        std::uint32_t& dynamic_shared) {
  MegakernelLayout layout{};
  const std::uint32_t widest = (table.max_worker_size() + 31) / 32 * 32;
  layout.block_threads = config.megakernel.block_threads ? config.megakernel.block_threads : std::max(256u, widest);
  if (layout.block_threads < widest)
    throw InputError("megakernel.block_threads",
                     std::to_string(layout.block_threads) + " threads cannot run a task of " +
                         std::to_string(table.max_worker_size()) + " threads; use at least " + std::to_string(widest));
  std::uint32_t max_slots = 1, task_shared = 0;
  for (std::uint32_t q = 0; q < table.num_queues(); ++q) {
    const WorkerShape shape = WorkerShape::of(table.queues()[q].worker_size);
    layout.slot_size[q] = shape.slot_size;
    layout.slots[q] = std::min(layout.block_threads / shape.slot_size, shape.max_slots);
    layout.shared_stride[q] = (table.queues()[q].shared_bytes + 15) / 16 * 16;
    max_slots = std::max(max_slots, layout.slots[q]);
    task_shared = std::max(task_shared, layout.slots[q] * layout.shared_stride[q]);
  }
  layout.trace_slot_bytes = traced ? (max_slots * 4 + 15) / 16 * 16 : 0;
  layout.task_shared_offset =
      layout.trace_slot_bytes + std::uint32_t(WorkerShape::max_block_barriers * sizeof(Worker::BlockBarrier));
  dynamic_shared = layout.task_shared_offset + task_shared;
  return layout;
}

}  // namespace detail

// Runs the seeded graph with the megakernel until it finishes, stops or fails.
template <class Graph>
void run_megakernel(DeviceRuntime& runtime) {
  const Config& config = runtime.config();
  std::uint32_t shared = 0;
  MegakernelParams params{};
  params.layout = detail::plan_megakernel(runtime.table(), config, config.trace, shared);
  const auto kernel = detail::megakernel_entry<Graph>;
  const DeviceInfo& device = runtime.device();
  if (shared > device.max_shared_per_block)
    throw InputError("megakernel", "a block needs " + std::to_string(shared) + " bytes of shared memory (workers x "
                                   "shared_bytes), more than the device's " +
                                   std::to_string(device.max_shared_per_block) +
                                   "; lower shared_bytes or megakernel.block_threads");
  APIARY_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared)));
  int per_sm = 0;
  APIARY_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, int(params.layout.block_threads), shared));
  if (per_sm == 0)
    throw InputError("megakernel", "no block of " + std::to_string(params.layout.block_threads) +
                                       " threads fits on an SM (registers or shared memory); lower megakernel.block_threads");
  if (config.megakernel.blocks_per_sm) per_sm = std::min<int>(per_sm, int(config.megakernel.blocks_per_sm));
  const unsigned grid = unsigned(per_sm) * device.sm_count;
  params.graph = runtime.begin_run();
  runtime.note_launch("megakernel", grid, params.layout.block_threads, shared);
  kernel<<<grid, params.layout.block_threads, shared, runtime.stream()>>>(params);
  APIARY_CUDA_CHECK(cudaGetLastError());
  runtime.supervise();
}

}  // namespace apiary
