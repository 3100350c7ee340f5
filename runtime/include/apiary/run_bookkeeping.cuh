// The kernels of a run's bookkeeping (run_bookkeeping.hpp): the start kernel copies what the
// host staged (seeds, queue counters) and resets the run state, the dependency pool, the trace
// cursors and the summary's counts; the end kernel counts what the run left behind and writes
// the summary into the host's mapped memory.
#pragma once

#include <apiary/run_bookkeeping.hpp>

#include <cuda_runtime.h>

#include <algorithm>

namespace apiary {

namespace detail {

static_assert(bookkeeping_threads >= max_queues, "one thread per queue in the bookkeeping kernels");

// Zeroes `bytes` (a multiple of 16) at `p` with the threads of one block.
__device__ inline void zero_by_block(void* p, std::size_t bytes) {
  auto* words = static_cast<uint4*>(p);
  for (std::size_t i = threadIdx.x; i < bytes / 16; i += blockDim.x) words[i] = make_uint4(0, 0, 0, 0);
}

// Copies `bytes` (a multiple of 16) with the threads of one block.
__device__ inline void copy_by_block(void* to, const void* from, std::size_t bytes) {
  auto* d = static_cast<uint4*>(to);
  const auto* s = static_cast<const uint4*>(from);
  for (std::size_t i = threadIdx.x; i < bytes / 16; i += blockDim.x) d[i] = s[i];
}

// Copies the caller's `bytes` at `from` (any alignment) to `to` (16-byte aligned) with the
// threads of one block: in 8-byte words where `from` and `bytes` allow, else byte by byte.
__device__ inline void copy_any_by_block(std::byte* to, const std::byte* from, std::size_t bytes) {
  if (reinterpret_cast<std::uintptr_t>(from) % 8 == 0 && bytes % 8 == 0) {
    auto* d = reinterpret_cast<std::uint64_t*>(to);
    const auto* s = reinterpret_cast<const std::uint64_t*>(from);
    for (std::size_t i = threadIdx.x; i < bytes / 8; i += blockDim.x) d[i] = s[i];
    return;
  }
  for (std::size_t i = threadIdx.x; i < bytes; i += blockDim.x) to[i] = from[i];
}

template <int = 0>
__global__ void __launch_bounds__(bookkeeping_threads) start_run_kernel(const __grid_constant__ RunStart s) {
  // A scheduler kernel launched early behind this one (run_graph.hpp) may start its blocks now;
  // it waits for this kernel's end and writes before it reads anything (a no-op otherwise).
  cudaTriggerProgrammaticLaunchCompletion();
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  const std::size_t first = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  for (std::size_t i = first; i < s.pool_entries; i += stride) s.pool[i].word = 0;
  for (std::uint32_t f = 0; f < s.fills.count; ++f) {
    const StagedFill fill = s.fills.entries[f];
    if (fill.element_bytes == 8)
      for (std::size_t i = first; i < fill.count; i += stride) static_cast<std::uint64_t*>(fill.to)[i] = fill.pattern;
    else
      for (std::size_t i = first; i < fill.count; i += stride)
        static_cast<std::uint32_t*>(fill.to)[i] = static_cast<std::uint32_t>(fill.pattern);
  }
  // The staged copies go to distinct words (the host stages each queue's counters once).
  const StagedCopy* copies = s.copies.entries();
  for (std::uint32_t c = 0; c < s.copies.wide; ++c) {
    const StagedCopy copy = copies[c];
    for (std::size_t i = first; i < copy.words; i += stride) copy.to[i] = copy.from[i];
  }
  const std::size_t warps = stride / 32, lane = threadIdx.x % 32;
  for (std::size_t c = s.copies.wide + first / 32; c < s.copies.count; c += warps) {
    const StagedCopy copy = copies[c];
    for (std::size_t i = lane; i < copy.words; i += 32) copy.to[i] = copy.from[i];
  }
  if (blockIdx.x != 0) return;
  static_assert(sizeof(RunState) % 16 == 0 && RunSummary::counted_bytes() % 16 == 0);
  zero_by_block(s.state, sizeof(RunState));
  zero_by_block(s.summary, RunSummary::counted_bytes());
  __syncthreads();
  for (std::uint32_t slot = threadIdx.x; slot <= max_phases; slot += blockDim.x)
    s.state->pending[slot].value = s.pending[slot];
  if (threadIdx.x == 0) {
    s.state->pending_total.value = s.pending_total;
    s.state->phase_word = s.phase_word;
    s.state->status = static_cast<std::uint32_t>(RunStatus::running);
    s.state->host_open = s.host_open;
    *s.pool_next = 0;
    s.cursors->tasks = 0;
    s.cursors->events = 0;
  }
}

// Counts the pool's unresolved entries and, when tasks are parked, the filled slots per queue:
// every block a share, added to the summary once per block.
template <int = 0>
__global__ void __launch_bounds__(bookkeeping_threads) summarize_run_kernel(const __grid_constant__ RunEnd e) {
  // Launched early behind the scheduler's kernel (run_graph.hpp): what it leaves must be
  // complete and visible before this kernel reads it (a no-op otherwise).
  cudaGridDependencySynchronize();
  __shared__ std::uint32_t unresolved;
  __shared__ std::uint32_t parked[max_queues];
  if (threadIdx.x == 0) unresolved = 0;
  if (threadIdx.x < max_queues) parked[threadIdx.x] = 0;
  __syncthreads();
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  const std::size_t first = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::uint32_t used = std::min(*e.pool_next, e.pool_limit);
  std::uint32_t mine = 0;
  for (std::size_t i = first; i < used; i += stride) mine += Dependency::counter_of(e.pool[i].word) != 0;
  if (mine) atomicAdd(&unresolved, mine);
  // Parked tasks are the exception (a graph that left a dependency unresolved): scan the
  // storage only then.
  if (e.storage_counters->parked != 0)
    for (std::size_t i = first; i < e.slots; i += stride)
      if (e.slot_state[i] == slot_filled && e.slot_queue[i] < max_queues) atomicAdd(&parked[e.slot_queue[i]], 1u);
  __syncthreads();
  RunSummary* counts = e.summary;
  if (threadIdx.x == 0 && unresolved) atomicAdd(&counts->unresolved_dependencies, unresolved);
  if (threadIdx.x < max_queues && parked[threadIdx.x]) {
    atomicAdd(&counts->parked_per_queue[threadIdx.x], parked[threadIdx.x]);
    atomicAdd(&counts->parked, parked[threadIdx.x]);
  }
  RunSummary* host = e.host;
  if (blockIdx.x == 0) {
    static_assert(sizeof(RunState) % 16 == 0 && sizeof(QueueCounters) % 16 == 0 && sizeof(TraceCursors) % 16 == 0);
    copy_by_block(&host->state, e.state, sizeof(RunState));
    copy_by_block(host->counters, e.counters, std::size_t(e.num_queues) * sizeof(QueueCounters));
    copy_by_block(&host->cursors, e.cursors, sizeof(TraceCursors));
    copy_any_by_block(host->end_copy, e.end_copy_from, e.end_copy_bytes);
    if (threadIdx.x == 0) host->dependencies_used = used;
  }
  // The last block to add its counts hands them to the host (threadFenceReduction's pattern).
  __shared__ bool last;
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) last = atomicAdd(&counts->blocks_done, 1u) == gridDim.x - 1;
  __syncthreads();
  if (!last) return;
  __threadfence();
  const volatile RunSummary* done = counts;
  if (threadIdx.x < max_queues) host->parked_per_queue[threadIdx.x] = done->parked_per_queue[threadIdx.x];
  if (threadIdx.x == 0) {
    host->unresolved_dependencies = done->unresolved_dependencies;
    host->parked = done->parked;
  }
}

template <int = 0>
void launch_start_run(const RunStart& s, unsigned max_blocks, cudaStream_t stream) {
  start_run_kernel<><<<start_blocks(s, max_blocks), bookkeeping_threads, 0, stream>>>(s);
}

template <int = 0>
void launch_summarize_run(const RunEnd& e, unsigned max_blocks, cudaStream_t stream) {
  summarize_run_kernel<><<<summarize_blocks(e, max_blocks), bookkeeping_threads, 0, stream>>>(e);
}

}  // namespace detail

// The kernels as DeviceRuntime takes them (instantiated in the including translation unit).
inline RunBookkeeping run_bookkeeping() {
  return RunBookkeeping{&detail::launch_start_run<>, &detail::launch_summarize_run<>,
                        reinterpret_cast<const void*>(&detail::start_run_kernel<>),
                        reinterpret_cast<const void*>(&detail::summarize_run_kernel<>)};
}

}  // namespace apiary
