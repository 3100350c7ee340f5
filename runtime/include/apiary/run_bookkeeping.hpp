// A run's bookkeeping on the device: what is reset before the scheduler's kernels start and
// what is read back after they end, each done by one small kernel on the runtime's stream.
//
// Why kernels and not copies: the host used to reset the run state, the queue counters, the
// dependency pool and the trace cursors with synchronous copies and memsets before every run,
// and to read the end state back with one synchronous copy per structure (state, counters,
// waiting storage, dependency pool, cursors). On an H100 a task-graph solve spent 140-215 us
// of host time outside its kernel that way, the cost of a hundred short Jacobi iterations. Now
// the host waits for nothing before a run starts and makes no copy after it ends: small seeds
// and the queue counters wait in mapped pinned memory (the staging arena) until the start
// kernel copies them, and the end kernel writes a RunSummary straight into mapped pinned
// memory, which the host reads once the run's last event has fired.
//
// The kernels are templates in run_bookkeeping.cuh, compiled with the task code (the
// runtime's host library has no device code); Runtime<Graph> hands them to DeviceRuntime as
// RunBookkeeping.
#pragma once

#include <apiary/dependency.hpp>
#include <apiary/phase_table.hpp>
#include <apiary/platform.hpp>
#include <apiary/queue.hpp>
#include <apiary/run_state.hpp>
#include <apiary/trace_writer.hpp>
#include <apiary/waiting_storage.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace apiary {

// The most bytes of the caller's device memory a run's summary carries back (copy_at_end).
inline constexpr std::size_t end_copy_limit = 256;

// What the end-of-run kernel leaves for the host: the counts first (added to by every block in
// a device copy zeroed by the start kernel; the last block to finish copies them over), then
// copies of the end state, of which only the graph's queues' counters are written.
struct RunSummary {
  std::uint32_t unresolved_dependencies;   // pool entries [0, dependencies_used) with a counter != 0
  std::uint32_t parked;                    // filled waiting-storage slots
  std::uint32_t parked_per_queue[max_queues];
  std::uint32_t blocks_done;               // end kernel blocks that added their counts (device copy)
  std::uint32_t dependencies_used;         // min(pool cursor, pool limit)
  TraceCursors cursors;
  RunState state;
  QueueCounters counters[max_queues];
  alignas(16) std::byte end_copy[end_copy_limit];  // the caller's bytes (DeviceRuntime::copy_at_end)

  // The part the start kernel zeroes: the counts and blocks_done (and dependencies_used, which
  // the end kernel writes; cursors are 128-byte aligned, so this is a multiple of 16 bytes).
  static constexpr std::size_t counted_bytes() { return offsetof(RunSummary, cursors); }
};

// A copy the start kernel makes from the staging arena (mapped pinned memory) to the device.
struct StagedCopy {
  std::uint64_t* to = nullptr;
  const std::uint64_t* from = nullptr;     // the arena's device address
  std::uint64_t words = 0;
};

// The start kernel's copy list. A run usually has a few copies (a seed's items and sequence
// numbers, the counters): they travel as kernel parameters. A longer list is copied to device
// memory first (the kernel's threads would otherwise read it across PCIe). Copies of at least
// `wide_copy_words` come first and are copied by the whole grid; each of the rest by one warp.
inline constexpr std::uint32_t inline_copies = 16;
inline constexpr std::uint64_t wide_copy_words = 256;
struct CopyList {
  StagedCopy inline_list[inline_copies] = {};
  const StagedCopy* list = nullptr;        // device memory, when count > inline_copies
  std::uint32_t count = 0;
  std::uint32_t wide = 0;                  // the first `wide` copies have >= wide_copy_words
  APIARY_HD const StagedCopy* entries() const { return count <= inline_copies ? inline_list : list; }
};

// A fill the start kernel makes before the run (DeviceRuntime::fill_before_run): `count`
// elements of `element_bytes` (4 or 8) at `to`, each set to the low `element_bytes` of
// `pattern`. A caller's reset of its own buffers (a solver's iterate, its counters) rides in
// the start kernel's parameters instead of a kernel of its own.
struct StagedFill {
  void* to = nullptr;
  std::uint64_t pattern = 0;
  std::uint64_t count = 0;
  std::uint32_t element_bytes = 0;
};
inline constexpr std::uint32_t max_fills = 8;
struct FillList {
  StagedFill entries[max_fills] = {};
  std::uint32_t count = 0;
  APIARY_HD std::uint64_t largest() const {
    std::uint64_t n = 0;
    for (std::uint32_t f = 0; f < count; ++f) n = entries[f].count > n ? entries[f].count : n;
    return n;
  }
};

// The start kernel's input: where the run's structures are, what it copies from the staging
// arena (the seeds' small pieces, the queue counters, the caller's copy_before_run values),
// what it fills (fill_before_run) and what the run state starts as (computed on the host from
// its copy of the queue counters).
struct RunStart {
  RunState* state = nullptr;
  CopyList copies;
  FillList fills;
  Dependency* pool = nullptr;
  std::uint32_t pool_entries = 0;          // all of them: tasks may use entries by index
  std::uint32_t* pool_next = nullptr;
  TraceCursors* cursors = nullptr;
  RunSummary* summary = nullptr;
  std::uint64_t pending[max_phases + 1] = {};
  std::uint64_t pending_total = 0;
  std::uint64_t phase_word = 0;
  std::uint32_t host_open = 0;
};

// The end kernel's input.
struct RunEnd {
  const RunState* state = nullptr;
  const QueueCounters* counters = nullptr;
  std::uint32_t num_queues = 0;
  const Dependency* pool = nullptr;
  const std::uint32_t* pool_next = nullptr;
  std::uint32_t pool_limit = 0;
  const std::uint32_t* slot_state = nullptr;   // waiting storage
  const std::uint32_t* slot_queue = nullptr;
  std::uint32_t slots = 0;
  const WaitingStorageCounters* storage_counters = nullptr;
  const TraceCursors* cursors = nullptr;
  RunSummary* summary = nullptr;           // device: the counts
  RunSummary* host = nullptr;              // mapped pinned memory: what the host reads
  const std::byte* end_copy_from = nullptr;  // the caller's device memory, copied to host->end_copy
  std::uint32_t end_copy_bytes = 0;
};

// The two kernels' launchers, as instantiated with the task code (run_bookkeeping.cuh); each
// launches at most `max_blocks` blocks on the stream. `start_kernel` and `summarize_kernel`
// are the same kernels' addresses (each takes its RunStart / RunEnd by value), for a run
// launched as one CUDA graph (run_graph.hpp), with the grids of start_blocks() and
// summarize_blocks() and bookkeeping_threads threads per block.
struct RunBookkeeping {
  void (*start)(const RunStart&, unsigned max_blocks, cudaStream_t) = nullptr;
  void (*summarize)(const RunEnd&, unsigned max_blocks, cudaStream_t) = nullptr;
  const void* start_kernel = nullptr;
  const void* summarize_kernel = nullptr;
};

inline constexpr unsigned bookkeeping_threads = 256;

// Blocks for `work` elements, a few per thread, at most a few waves (`max_blocks`).
inline unsigned bookkeeping_blocks(std::size_t work, unsigned max_blocks) {
  const std::size_t per_block = std::size_t(bookkeeping_threads) * 8;
  const std::size_t blocks = (work + per_block - 1) / per_block;
  return static_cast<unsigned>(blocks < 1 ? 1 : blocks > max_blocks ? max_blocks : blocks);
}
// The start kernel's grid: sized for the pool it zeroes and the largest fill.
inline unsigned start_blocks(const RunStart& s, unsigned max_blocks) {
  const std::size_t fill = s.fills.largest();
  return bookkeeping_blocks(s.pool_entries > fill ? s.pool_entries : fill, max_blocks);
}
// The end kernel's grid: sized for the pool, which every run scans; the waiting storage (larger
// by a slot per thread the device holds, waiting_storage.hpp) is scanned only when tasks stayed
// parked.
inline unsigned summarize_blocks(const RunEnd& e, unsigned max_blocks) { return bookkeeping_blocks(e.pool_limit, max_blocks); }

}  // namespace apiary
