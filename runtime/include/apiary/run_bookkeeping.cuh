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

inline constexpr unsigned bookkeeping_threads = 256;
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

// Adds every thread's `count` to `*total`: one atomic per warp that has any.
__device__ inline void add_by_warp(std::uint32_t* total, std::uint32_t count) {
  const unsigned active = __activemask();
  const std::uint32_t sum = __reduce_add_sync(active, count);
  if (sum != 0 && threadIdx.x % 32 == unsigned(__ffs(active) - 1)) atomicAdd(total, sum);
}

// Counts the pool's unresolved entries at `first`, `first + stride`, ... and, when tasks are
// parked, the filled waiting-storage slots per queue, into the summary's counts.
__device__ inline void count_left_behind(const RunEnd& e, std::size_t first, std::size_t stride) {
  RunSummary* counts = e.summary;
  const std::uint32_t used = std::min(*e.pool_next, e.pool_limit);
  std::uint32_t mine = 0;
  for (std::size_t i = first; i < used; i += stride) mine += Dependency::counter_of(e.pool[i].word) != 0;
  add_by_warp(&counts->unresolved_dependencies, mine);
  // Parked tasks are the exception (a graph that left a dependency unresolved): scan the
  // storage only then, one atomic per parked task.
  if (e.storage_counters->parked == 0) return;
  for (std::size_t i = first; i < e.slots; i += stride)
    if (e.slot_state[i] == slot_filled && e.slot_queue[i] < max_queues) {
      atomicAdd(&counts->parked_per_queue[e.slot_queue[i]], 1u);
      atomicAdd(&counts->parked, 1u);
    }
}

// The last block: the counts again from scratch, by this block alone (some block could not
// count its share while other blocks were still running tasks).
__device__ inline void recount_left_behind(const RunEnd& e) {
  RunSummary* counts = e.summary;
  for (unsigned q = threadIdx.x; q < max_queues; q += blockDim.x) counts->parked_per_queue[q] = 0;
  if (threadIdx.x == 0) counts->unresolved_dependencies = counts->parked = 0;
  __syncthreads();
  count_left_behind(e, threadIdx.x, blockDim.x);
  __threadfence();
  __syncthreads();
}

// The last block: the run's end state, its counts and the caller's end copy into the host's
// mapped summary.
__device__ inline void hand_summary_to_host(const RunEnd& e) {
  static_assert(sizeof(RunState) % 16 == 0 && sizeof(QueueCounters) % 16 == 0 && sizeof(TraceCursors) % 16 == 0);
  RunSummary* host = e.host;
  const volatile RunSummary* done = e.summary;
  copy_by_block(&host->state, e.state, sizeof(RunState));
  copy_by_block(host->counters, e.counters, std::size_t(e.num_queues) * sizeof(QueueCounters));
  copy_by_block(&host->cursors, e.cursors, sizeof(TraceCursors));
  copy_any_by_block(host->end_copy, e.end_copy_from, e.end_copy_bytes);
  for (unsigned q = threadIdx.x; q < max_queues; q += blockDim.x) host->parked_per_queue[q] = done->parked_per_queue[q];
  if (threadIdx.x == 0) {
    host->dependencies_used = std::min(*e.pool_next, e.pool_limit);
    host->unresolved_dependencies = done->unresolved_dependencies;
    host->parked = done->parked;
  }
}

// A block's part in the end of a run (every thread of the block calls it once, with the same
// `share_ready`): it counts its share of what the run left behind when `share_ready` (no task
// of the run runs any more), and the last block to arrive hands the summary to the host
// (threadFenceReduction's pattern), counting everything itself if some block could not.
// The end kernel's blocks call it, and the megakernel's as they leave (its own end).
__device__ inline void summarize_by_block(const RunEnd& e, bool share_ready) {
  RunSummary* counts = e.summary;
  if (share_ready)
    count_left_behind(e, std::size_t(blockIdx.x) * blockDim.x + threadIdx.x, std::size_t(gridDim.x) * blockDim.x);
  __threadfence();
  __syncthreads();
  bool last = false;
  if (threadIdx.x == 0) {
    if (share_ready) atomicAdd(&counts->shares_counted, 1u);
    last = atomicAdd(&counts->blocks_done, 1u) == gridDim.x - 1;
  }
  if (!__syncthreads_or(last)) return;
  __threadfence();
  const volatile RunSummary* done = counts;
  if (done->shares_counted != gridDim.x) recount_left_behind(e);
  hand_summary_to_host(e);
}

// Thread 0 reads the run's status for the whole block: true when it finished, so that no task
// of it runs any more (a stopped or failed run's other blocks may still be inside a batch).
__device__ inline bool run_finished_for_block(const RunState* state) {
  bool finished = false;
  if (threadIdx.x == 0) finished = load_acquire(state->status) == static_cast<std::uint32_t>(RunStatus::finished);
  return __syncthreads_or(finished);
}

// A persistent kernel's blocks as they leave, the run over for them: its own end (no end
// kernel). Not inlined: the kernel's task code keeps its register allocation (inlined, two of
// Jacobi's megakernels took 94 and 96 registers instead of 90 and 80). A template, as the
// kernels here: one definition in every translation unit that includes this header.
template <int = 0>
__device__ __noinline__ void leave_run(const RunEnd& e) { summarize_by_block(e, run_finished_for_block(e.state)); }

// The end kernel: behind the run's kernels on the stream, so every share is ready.
template <int = 0>
__global__ void __launch_bounds__(bookkeeping_threads) summarize_run_kernel(const __grid_constant__ RunEnd e) {
  summarize_by_block(e, true);
}

// Blocks for `work` elements, a few per thread, at most a few waves.
inline unsigned bookkeeping_blocks(std::size_t work, unsigned max_blocks) {
  const std::size_t per_block = std::size_t(bookkeeping_threads) * 8;
  return static_cast<unsigned>(std::clamp<std::size_t>((work + per_block - 1) / per_block, 1, max_blocks));
}

template <int = 0>
void launch_start_run(const RunStart& s, unsigned max_blocks, cudaStream_t stream) {
  const std::size_t work = std::max<std::size_t>(s.pool_entries, s.fills.largest());
  start_run_kernel<><<<bookkeeping_blocks(work, max_blocks), bookkeeping_threads, 0, stream>>>(s);
}

template <int = 0>
void launch_summarize_run(const RunEnd& e, unsigned max_blocks, cudaStream_t stream) {
  const std::size_t work = std::max<std::size_t>(e.pool_limit, e.slots);
  summarize_run_kernel<><<<bookkeeping_blocks(work, max_blocks), bookkeeping_threads, 0, stream>>>(e);
}

}  // namespace detail

// The kernels as DeviceRuntime takes them (instantiated in the including translation unit).
inline RunBookkeeping run_bookkeeping() {
  return RunBookkeeping{&detail::launch_start_run<>, &detail::launch_summarize_run<>};
}

}  // namespace apiary
