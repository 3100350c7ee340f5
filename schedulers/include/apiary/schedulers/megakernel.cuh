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
#include <apiary/schedulers/block_runner.cuh>
#include <apiary/worker.cuh>

#include <cuda_runtime.h>

#include <algorithm>
#include <new>
#include <string>
#include <utility>

namespace apiary {

struct MegakernelParams {
  DeviceGraph graph;
  BlockLayout layout;
};

namespace detail {

// Thread 0 of a block: the next batch, backing off while nothing is eligible (`staging`: the
// block's staging area, free between batches, for a stale batch's give-back). A block that
// holds a task (handoff.hpp) polls its dependency or gate whenever the queues had nothing and
// runs it once it is ready (next_handed_off polled it just before this call).
template <bool Cyclic, std::uint32_t B>
__device__ Batch next_batch(const DeviceGraph& g, const BlockLayout& layout, std::uint32_t& rotor, Handoff<B>& handoff,
                            const Batch& previous, std::byte* staging) {
  const PhaseController pc = g.controller();
  auto max_items = [&](std::uint32_t q, std::int64_t available) { return batch_size(layout, q, available, gridDim.x); };
  auto parked = [&] { return g.waiting.parked_hint(); };
  std::uint32_t backoff = 32;
  std::uint64_t phase_hint = 0;  // pick_batch's: the phase its idle step saw begin
  for (;;) {
    if (blockIdx.x == 0) g.drain_host_input();  // one thread moves host-submitted tasks in
    const Batch batch = pick_batch(g.queues, pc, rotor, max_items, parked, &phase_hint);
    if (batch.stop || batch.count != 0) {
      if (!batch.stale) [[likely]] return batch;
      settle_stale<Cyclic>(g.queues, pc, batch, staging);  // then poll again
    }
    if (handoff.held() && handoff.ready()) return handed_off_batch(previous, handoff.queue);
    if (phase_hint != 0) continue;  // a phase just began: look for its tasks at once
    __nanosleep(backoff);
    // Short sleeps: a chain of single tasks waits at most ~0.3 us. A cap of 1024 or 4096 ns
    // (to load the L2 less with idle polls) measured no throughput gain on an H200 and
    // slower chains through the queues (dependency and parked chains with the hand-off off
    // 1.04-1.08x, the fan tree's latency run 1.06-1.08x).
    backoff = backoff < 256 ? backoff * 2 : backoff;
  }
}

// Thread 0: the trace's release event of a held task that is about to run (its dependency's
// last resolution came from another task; this block saw it).
template <std::uint32_t B>
__device__ void trace_held_release(const DeviceGraph& g, Handoff<B>& handoff) {
  if (!handoff.was_held) return;
  handoff.was_held = 0;
  if (g.trace.enabled())
    g.trace.event(DependencyEvent{global_timer_ns(), handoff.tag, static_cast<std::uint32_t>(DependencyEventKind::release),
                                  no_task, 0, handoff.queue});
}

// Phaseless queues: eligible in every phase, so a task of theirs may wait in a block's slot
// across batches of any phase.
__device__ inline std::uint64_t holdable_queues(const DeviceGraph& g) {
  std::uint64_t mask = 0;
  for (std::uint32_t q = 0; q < g.table.num_queues; ++q)
    if (g.table.queue_phase[q] == no_phase) mask |= std::uint64_t(1) << q;
  return mask;
}

// All threads, when the block starts: zeroes its dynamic shared memory, so that a task may
// keep state there for the tasks its block runs after it (Jacobi's resident rows) and tell by
// a zero that nothing is kept: a block's shared memory otherwise starts with whatever an
// earlier kernel on that SM left there.
__device__ inline void zero_dynamic_shared(std::byte* smem) {
  std::uint32_t bytes;
  asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(bytes));
  const std::uint32_t words = bytes / 16;
  for (std::uint32_t i = threadIdx.x; i < words; i += blockDim.x) reinterpret_cast<uint4*>(smem)[i] = make_uint4(0, 0, 0, 0);
  for (std::uint32_t i = words * 16 + threadIdx.x; i < bytes; i += blockDim.x) smem[i] = std::byte{0};
}

template <class Graph>
__global__ void megakernel_entry(const __grid_constant__ MegakernelParams params) {
  extern __shared__ __align__(16) std::byte smem[];
  __shared__ Batch batch;
  __shared__ std::uint32_t rotor;
  __shared__ BlockHandoff<Graph> handoff;
  __shared__ BlockDependencies dependencies;  // lives as long as the run: it may keep a share of the pool
  const DeviceGraph& g = params.graph;
  const BlockLayout& layout = params.layout;
  zero_dynamic_shared(smem);
  // Launched early behind the run's start kernel (run_graph.hpp): its reset of the run state,
  // the queue counters and the pool must be complete and visible before any of them is read.
  cudaGridDependencySynchronize();
  // The run's end kernel, launched early behind this grid, may start its blocks now: they take
  // only the room this grid leaves and wait for its end.
  cudaTriggerProgrammaticLaunchCompletion();
  if (threadIdx.x == 0) {
    rotor = blockIdx.x % g.table.num_queues;
    handoff.reset();
    handoff.hold_accept = layout.handoff ? holdable_queues(g) : 0;
    dependencies.reset();
  }
  __syncthreads();
  for (;;) {
    if (threadIdx.x == 0) {
      // A task handed off by the last batch runs first (in the same phase: the accepted
      // queues stay). Otherwise any queue eligible in the new batch's phase may hand one off,
      // since this block runs every task type.
      if (next_handed_off(g.queues, g.controller(), handoff, batch, batch)) {
        if (blockIdx.x == 0) g.drain_host_input();  // as next_batch does: block 0 takes host input
      } else {
        batch = next_batch<GraphTraits<Graph>::cyclic>(g, layout, rotor, handoff, batch, smem);
        if (!batch.handed_off)
          handoff.accept = layout.handoff && !batch.stop ? g.table.queues_running_in(batch.phase.phase) : 0;
      }
      if (batch.stop) give_back_held(g.queues, handoff);
      else {
        trace_held_release(g, handoff);
        prepare_worker_barriers(g, layout, batch, smem);
      }
    }
    __syncthreads();
    if (batch.stop) break;
    execute_batch<Graph, /*GatedHops=*/true>(g, layout, batch, handoff, dependencies, smem);
  }
}

}  // namespace detail

// The megakernel's blocks: as many as fit the device (occupancy x SMs), or
// megakernel.blocks_per_sm per SM where that is fewer, with the shared memory carveout that
// holds them and leaves the rest of each SM to L1. Refuses blocks that cannot run.
template <class Graph>
ResidentBlocks plan_megakernel(const PhaseTable& table, const Config& config, const DeviceInfo& device) {
  ResidentBlocks plan = plan_resident_blocks(detail::megakernel_entry<Graph>, table, config, device, "megakernel");
  if (config.megakernel.blocks_per_sm) plan.per_sm = std::min(plan.per_sm, config.megakernel.blocks_per_sm);
  plan.shared_carveout = fit_shared_carveout(detail::megakernel_entry<Graph>, int(plan.layout.block_threads),
                                             plan.per_sm, plan.shared, device);
  return plan;
}

// Runs the seeded graph with the megakernel (blocks as plan_megakernel planned them) until it
// finishes, stops or fails. The run's start kernel, the megakernel and the end kernel go to the
// device as one CUDA graph launch (DeviceRuntime::run_in_graph): the megakernel's parameters
// stay on the device from one run to the next instead of travelling with every launch.
template <class Graph>
void run_megakernel(DeviceRuntime& runtime, const ResidentBlocks& plan) {
  allow_dynamic_shared(detail::megakernel_entry<Graph>, plan.shared);
  set_shared_carveout(detail::megakernel_entry<Graph>, plan.shared_carveout);
  MegakernelParams params{};
  params.layout = plan.layout;
  params.graph = runtime.view();
  runtime.note_launch("megakernel", plan.blocks(), params.layout.block_threads, plan.shared);
  runtime.run_in_graph(KernelLaunch{reinterpret_cast<const void*>(detail::megakernel_entry<Graph>), plan.blocks(),
                                    params.layout.block_threads, static_cast<unsigned>(plan.shared), &params,
                                    sizeof(params), plan.shared_carveout, /*waits_for_previous=*/true});
}

}  // namespace apiary
