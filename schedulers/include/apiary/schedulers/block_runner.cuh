// How a block runs a claimed batch, shared by every scheduler whose workers are blocks
// (megakernel, timesliced, the device controller's workers): the block layout (threads,
// worker slots, shared memory, batch size), the staging of a batch out of its queue, the
// dispatch from queue to compiled task type, the per-worker task loop (with tracing), and the
// batch epilogue (count the tasks, report the batch finished).
#pragma once

#include <apiary/config.hpp>
#include <apiary/context.cuh>
#include <apiary/cuda_check.hpp>
#include <apiary/device_graph.hpp>
#include <apiary/device_runtime.hpp>
#include <apiary/error.hpp>
#include <apiary/graph.hpp>
#include <apiary/handoff.hpp>
#include <apiary/phase_table.hpp>
#include <apiary/schedulers/batch_picker.hpp>
#include <apiary/schedulers/batch_staging.hpp>
#include <apiary/schedulers/handoff_batches.hpp>
#include <apiary/schedulers/shared_carveout.hpp>
#include <apiary/worker.cuh>

#include <algorithm>
#include <new>
#include <string>

namespace apiary {

// A block's dynamic shared memory, in order: the staging area (batch_staging.hpp), the
// per-worker trace index (tracing only), the worker barriers, the tasks' shared memory.
struct BlockLayout {
  std::uint32_t block_threads = 0;
  bool handoff = true;                          // Config::handoff
  std::uint32_t staging_bytes = 0;              // the staging area; the trace index starts here
  std::uint32_t barrier_offset = 0;             // where the worker barriers start
  std::uint32_t task_shared_offset = 0;         // where task shared memory starts
  std::uint32_t slot_size[max_queues];
  std::uint32_t slots[max_queues];
  std::uint32_t shared_stride[max_queues];      // task shared bytes rounded to 16
  std::uint32_t max_batch[max_queues];          // tasks per batch at most (batch_limit)
};

namespace detail {

template <class... Ts, class F>
__device__ void dispatch_code(TypeList<Ts...>, std::uint32_t code, F&& f) {
  std::uint32_t i = 0;
  ((code == i++ ? (f.template operator()<Ts>(), 0) : 0), ...);
}

template <class Graph>
using BlockHandoff = typename Context<Graph>::BlockHandoff;

// A task type's worker size: its own where the graph is declared (a constant, so that a
// one-thread worker's barriers and votes compile to nothing), its queue's in a data-driven
// graph (one compiled type serves queues of any worker size there).
template <class Graph, class T>
__device__ std::uint32_t worker_size_of(const DeviceGraph& g, std::uint32_t q) {
  if constexpr (GraphTraits<Graph>::declared) return T::threads;
  else return g.table.worker_size[q];
}

// Whether the task loop keeps its batch's count and stride in registers through every task
// (run_worker_tasks): for a declared type without task shared memory, and for a data-driven
// graph's type. Such tasks are short enough for a reload per task to show (an empty task, a
// chain's link, a fan tree's fork); a type that stages data in shared memory works long enough
// per task that the reload is noise, while its body needs the registers. Measured on an H100
// (docs/benchmarks.md, "Kept: the batch in registers for tasks without shared memory"): kept
// for every type, Jacobi's megakernels were 2-16 registers larger (fp32: a block per SM less,
// solves up to 1.4x slower); reloaded for every type, the fan trees' megakernel lost a block
// per SM (1.3x slower) and small tasks up to 19% of their throughput; reloaded for the
// data-driven synthetic trees, their phased run took 3% longer.
template <class Graph, class T>
constexpr bool batch_in_registers() {
  if constexpr (GraphTraits<Graph>::declared) return T::shared_bytes == 0;
  else return true;
}

// Every thread of the worker copies its next task into `raw`: the batch's task staged at
// `staged` (stage_batch), or the block's hand-off slot's task (`from_slot`), which is then freed.
template <class Item, std::uint32_t B>
__device__ void take_task(Handoff<B>& handoff, bool from_slot, const Worker& worker, bool traced,
                          const std::byte* staged, void* raw, std::uint64_t& tag) {
  if (from_slot) {
    copy_words(raw, handoff.item, sizeof(Item));
    tag = traced ? handoff.tag : no_dependency;
  } else {
    copy_words(raw, staged, sizeof(Item));
    tag = traced ? *reinterpret_cast<const std::uint64_t*>(staged + queue_stride(sizeof(Item))) : no_dependency;
  }
  // The barrier also keeps the worker's next task from touching task shared memory while a
  // thread of the worker still runs this one.
  if (worker.size() > 1) worker.sync();
  if (worker.rank() == 0 && from_slot) handoff.clear();
}

// The worker of a handed-off batch of one, after its task: whether the task it handed off
// runs next in this worker (take_local_hop, handoff_batches.hpp). Every thread of the worker gets the answer.
// `handed_off`: this thread put a ready task into the slot (Context::handed_off) or held one
// at a gate (Context::held_at_gate: the hop waits for the gate). A task that handed nothing
// off (it ended a chain, or held its continuation for a dependency)
// costs one vote, not the barrier pair around the slot's check (measured on an H100 against
// the pair: Jacobi's gated stages in fp64 1.007x -> 0.992x the time without local hops). A
// worker of one thread needs no barrier either: its barrier is a fence (Worker::sync), which
// would wait for the task's last atomics (a held chain's hop 2.64 -> 2.93 us under the MK).
template <bool GatedHops, std::uint32_t B>
__device__ bool next_local_link(const DeviceGraph& g, const Worker& worker, Handoff<B>& handoff, std::uint32_t q,
                                bool handed_off) {
  if (!worker.may_any(handed_off)) return false;
  if (worker.size() == 1) return take_local_hop<GatedHops>(g.queues, g.controller(), handoff, q);
  worker.sync();  // every thread of the task is done; what it put in the slot is visible
  if (worker.rank() == 0) handoff.chained = take_local_hop<GatedHops>(g.queues, g.controller(), handoff, q);
  worker.sync();
  return handoff.chained != 0;
}

// One worker runs its share of a batch, from the staging area: tasks slot, slot + slots, ...
// GatedHops: the scheduler holds tasks at gates (the megakernel), so a chain of a task type
// that declares waits_at_gates (task_type.hpp) may wait for one, if the type is phaseless in
// this graph (only those are held): compiled into Jacobi's phased graph as well, the wait took
// its megakernel from 96 to 114 registers and stages_phases 1.07x the time (fp64, H200).
template <class Graph, class T, bool GatedHops>
__device__ void run_worker_tasks(const DeviceGraph& g, const BlockLayout& layout, const Batch& batch,
                                 BlockHandoff<Graph>& handoff, BlockDependencies& dependencies, std::byte* smem,
                                 std::uint32_t slot, std::uint32_t rank) {
  using Item = typename T::Item;
  const std::uint32_t q = batch.queue;
  const std::uint32_t size = worker_size_of<Graph, T>(g, q);
  auto* trace_index = reinterpret_cast<std::uint32_t*>(smem + layout.staging_bytes);
  auto* barriers = reinterpret_cast<Worker::BlockBarrier*>(smem + layout.barrier_offset);
  void* task_shared = smem + layout.task_shared_offset + slot * layout.shared_stride[q];
  const Worker worker(rank, size, slot, layout.slot_size[q], task_shared, barriers + slot % WorkerShape::max_block_barriers);
  const bool traced = g.trace.enabled();
  const std::uint32_t staged_bytes = staged_task_bytes(queue_stride(sizeof(Item)), traced);
  const std::int16_t phase = g.table.queue_phase[q] == no_phase ? phaseless_phase : std::int16_t(batch.phase.phase);

  // A handed-off batch of one (slot 0 runs it) goes on with the chain of tasks it hands
  // itself while each hop is local (next_local_link), running the batch again. Block 0 goes
  // back to the scheduler's loop after every task while host input is open: it drains the
  // host's tasks there. (The check sits outside the task loop: inside it, its code made the
  // loop 1.6x longer and empty tasks 1.6% slower in geomean on an H100; docs/benchmarks.md.)
  const bool from_slot = batch.handed_off;
  const bool chains = from_slot && slot == 0 && (g.mailbox == nullptr || blockIdx.x != 0);
  // The waiting-storage slot of the task this thread released last, left for its next
  // resolution's fence to free (Context::resolve), and freed after the tasks otherwise. Only
  // types whose batch stays in registers carry it; the others free a slot as they read it
  // (carried, it cost Jacobi's fp32 megakernel 4 registers and a block per SM).
  constexpr bool carries = batch_in_registers<Graph, T>();
  constexpr bool gated_hops = GatedHops && waits_at_gates<T>() && GraphTraits<Graph>::template phaseless_type<T>;
  using TaskContext = Context<Graph, carries>;
  std::uint32_t unfreed_slot = no_slot;
  auto run_task = [&](std::uint32_t i, bool in_slot) {
    alignas(8) unsigned char raw[queue_stride(sizeof(Item))];
    std::uint64_t tag = no_dependency;
    take_task<Item>(handoff, in_slot, worker, traced, smem + i * staged_bytes, raw, tag);
    const Item& item = *std::launder(reinterpret_cast<const Item*>(raw));

    std::uint32_t task = no_task;
    std::uint64_t start = 0;
    if (traced) {
      if (rank == 0) trace_index[slot] = g.trace.begin_task();
      worker.sync();
      task = trace_index[slot];
      start = global_timer_ns();
    }
    const TaskContext ctx(g, q, task, handoff, dependencies, unfreed_slot);
    T{}(worker, item, ctx);
    if constexpr (carries) unfreed_slot = ctx.unfreed_slot();
    ctx.begin_hold();
    if (traced) {
      worker.sync();
      if (rank == 0)
        g.trace.write_task(task, TaskRecord{start, global_timer_ns(), tag, task, q, sm_id(), blockIdx.x,
                                            std::uint16_t(slot), phase, batch.phase.epoch});
    }
    // if constexpr, not `&&`: the constant-false operand of `handed_off() || (false && ...)`
    // cost Jacobi's phased megakernel 18 registers (96 -> 114) and stages_phases 1.07x (fp64).
    if constexpr (gated_hops) return ctx.handed_off() || ctx.held_at_gate();
    else return ctx.handed_off();
  };
  // batch_in_registers: the batch's count and stride are read once, into registers. The task
  // may write shared memory, so the compiler would otherwise reload them from the block's
  // batch around every task (two loads and their address arithmetic per hop of a chain). A
  // handed-off batch is one task, slot 0's: its stride needs no lookup. Otherwise they are
  // read as the loop goes, and a chain's batch (one task) skips them.
  [[maybe_unused]] const std::uint32_t count = batch.count, stride = from_slot ? 1u : layout.slots[q];
  for (;;) {
    bool handed_off = false;
    if constexpr (batch_in_registers<Graph, T>()) {
      for (std::uint32_t i = slot; i < count; i += stride) handed_off = run_task(i, from_slot);
    } else {
      for (std::uint32_t i = slot; chains || i < batch.count; i += layout.slots[q]) {
        handed_off = run_task(i, chains || batch.handed_off);
        if (chains) break;
      }
    }
    if (!chains || !next_local_link<gated_hops>(g, worker, handoff, q, handed_off)) break;
  }
  if constexpr (carries) TaskContext::free_unfreed_slot(g, unfreed_slot);
}

// All threads, after the barrier that publishes a batch claimed from a queue and before any of
// its tasks runs: copy every task of the batch into the staging area (at `staging`, the start
// of dynamic shared memory) and free its queue slot (batch_staging.hpp says why). Each of
// them was published before it could be claimed (queue.hpp), so this waits for no task to be
// written. False if the run failed meanwhile.
template <class Item>
__device__ bool stage_batch(const QueueView& queue, const Batch& batch, bool traced, std::byte* staging) {
  constexpr std::uint32_t stride = queue_stride(sizeof(Item));
  const std::uint32_t bytes = staged_task_bytes(stride, traced);
  bool ok = true;
  for (std::uint32_t i = threadIdx.x; i < batch.count; i += blockDim.x) {
    const std::uint64_t ticket = batch.first + i;
    if (!queue.wait_published(ticket)) {
      ok = false;
      break;
    }
    std::byte* task = staging + i * bytes;
    queue.read(ticket, task, stride);
    if (traced) *reinterpret_cast<std::uint64_t*>(task + stride) = queue.tag(ticket);
    queue.release(ticket);
  }
  return __syncthreads_or(!ok) == 0;
}

// All threads: stage the batch (unless it is the hand-off slot's task), then every worker
// runs its share (GatedHops: run_worker_tasks).
template <class Graph, bool GatedHops = false>
__device__ void run_batch(const DeviceGraph& g, const BlockLayout& layout, const Batch& batch,
                          BlockHandoff<Graph>& handoff, BlockDependencies& dependencies, std::byte* smem) {
  const std::uint32_t q = batch.queue;
  dispatch_code(typename GraphTraits<Graph>::Codes{}, g.table.code[q], [&]<class T>() {
    // batch.handed_off is the same in every thread: the barrier inside is reached by all.
    if (!batch.handed_off && !stage_batch<typename T::Item>(g.queues[q], batch, g.trace.enabled(), smem)) return;
    const std::uint32_t slot = threadIdx.x / layout.slot_size[q];
    const std::uint32_t rank = threadIdx.x % layout.slot_size[q];
    if (slot >= layout.slots[q] || rank >= worker_size_of<Graph, T>(g, q)) return;
    run_worker_tasks<Graph, T, GatedHops>(g, layout, batch, handoff, dependencies, smem, slot, rank);
  });
}

}  // namespace detail

using detail::BlockHandoff;
using detail::run_batch;

// Thread 0: how many tasks of queue q, which holds `available`, a block claims while `blocks`
// blocks drain it: a task per worker slot for each round the queue fills on all of them, at
// least one round and at most max_batch_rounds, and no more than the staging area holds.
__device__ inline std::uint32_t batch_size(const BlockLayout& layout, std::uint32_t q, std::int64_t available,
                                           std::uint32_t blocks) {
  const std::uint64_t per_round = std::uint64_t(layout.slots[q]) * blocks;
  std::uint64_t rounds = available > 0 ? std::uint64_t(available) / per_round : 1;
  rounds = rounds < 1 ? 1 : (rounds > max_batch_rounds ? max_batch_rounds : rounds);
  const std::uint64_t tasks = rounds * layout.slots[q];
  return tasks < layout.max_batch[q] ? std::uint32_t(tasks) : layout.max_batch[q];
}

// Thread 0, before the block-wide barrier that publishes a batch: workers wider than a warp
// synchronise through one barrier object per slot, set up for this batch's worker size.
__device__ inline void prepare_worker_barriers(const DeviceGraph& g, const BlockLayout& layout, const Batch& batch,
                                               std::byte* smem) {
  const std::uint32_t size = g.table.worker_size[batch.queue];
  if (size <= 32) return;
  auto* barriers = reinterpret_cast<Worker::BlockBarrier*>(smem + layout.barrier_offset);
  for (std::uint32_t s = 0; s < layout.slots[batch.queue]; ++s) init(&barriers[s], std::ptrdiff_t(size));
}

// All threads: run the batch (its queue slots freed as it is staged), report it finished
// (counting the task it handed off, if any). Ends with a block-wide barrier, so `batch` may
// be overwritten afterwards. `dependencies`: the block's share of the dependency pool (one
// that takes no share where the block ends with its launch; dependency_pool.hpp).
template <class Graph, bool GatedHops = false>
__device__ void execute_batch(const DeviceGraph& g, const BlockLayout& layout, const Batch& batch,
                              BlockHandoff<Graph>& handoff, BlockDependencies& dependencies, std::byte* smem) {
  run_batch<Graph, GatedHops>(g, layout, batch, handoff, dependencies, smem);
  __syncthreads();
  if (threadIdx.x == 0) finish_batch(g.queues, g.controller(), handoff, batch);
  __syncthreads();
}

// Host: block size, worker slots and shared memory for a graph's layout, without the staging
// area yet (place_staging adds it).
inline BlockLayout plan_blocks(const PhaseTable& table, const Config& config, bool traced,
                                        std::uint32_t& dynamic_shared) {
  BlockLayout layout{};
  const std::uint32_t widest = (table.max_worker_size() + 31) / 32 * 32;
  layout.handoff = config.handoff;
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
  layout.barrier_offset = traced ? (max_slots * 4 + 15) / 16 * 16 : 0;  // after the trace index
  layout.task_shared_offset =
      layout.barrier_offset + std::uint32_t(WorkerShape::max_block_barriers * sizeof(Worker::BlockBarrier));
  dynamic_shared = layout.task_shared_offset + task_shared;
  return layout;
}

// Host: bytes a staged task of queue q takes (what the device computes from sizeof(Item)).
inline std::uint32_t staged_task_bytes(const PhaseTable& table, std::uint32_t q, bool traced) {
  return staged_task_bytes(queue_stride(table.queues()[q].item_size), traced);
}

// Host: what the graph's queues ask of the staging area.
inline StagingDemand staging_demand(const PhaseTable& table, const BlockLayout& layout, bool traced) {
  StagingDemand demand;
  for (std::uint32_t q = 0; q < table.num_queues(); ++q) demand.add(layout.slots[q], staged_task_bytes(table, q, traced));
  return demand;
}

// Host: puts a staging area of `bytes` (a multiple of 16) in front of the layout's shared memory
// and limits every queue's batches to what it holds. Refuses a queue of which not one task fits.
inline void place_staging(const PhaseTable& table, BlockLayout& layout, std::uint32_t bytes, bool traced,
                          const char* scheduler) {
  layout.staging_bytes = bytes;
  layout.barrier_offset += bytes;
  layout.task_shared_offset += bytes;
  for (std::uint32_t q = 0; q < table.num_queues(); ++q) {
    const std::uint32_t task_bytes = staged_task_bytes(table, q, traced);
    layout.max_batch[q] = batch_limit(bytes, layout.slots[q], task_bytes);
    if (layout.max_batch[q] == 0)
      throw InputError(scheduler, "a block has no shared memory left to stage one task of " + table.queues()[q].name +
                                      " (" + std::to_string(task_bytes) + " bytes); lower shared_bytes or the item size");
  }
}

// Host: lets `kernel` launch with up to `bytes` of dynamic shared memory. The limit belongs to
// the kernel, not to a runtime: planning raises it to ask the occupancy of larger blocks, and
// another runtime of the same graph planned since (its staging sized by its own config) may
// have set a smaller one, so a run sets its plan's again before its launches
// (Runtime<Graph> keeps its plans).
template <class KernelPointer>
void allow_dynamic_shared(KernelPointer kernel, std::size_t bytes) {
  APIARY_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
}

// Host: the kernel's shared memory carveout preference (a percentage, or
// cudaSharedmemCarveoutDefault). Like the dynamic shared memory limit it stays with the kernel,
// for every runtime of the graph: a run sets its plan's again (fit_shared_carveout).
template <class KernelPointer>
void set_shared_carveout(KernelPointer kernel, int percent) {
  APIARY_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, percent));
}

// Host: the carveout (percent of an SM's unified memory made shared memory) that holds `per_sm`
// blocks of `kernel` (with `shared` dynamic bytes each) and leaves the rest to L1
// (shared_carveout.hpp), set on the kernel; the driver's default where the occupancy calculator
// says that would not hold them, so that a persistent kernel's blocks stay resident together.
// Without it the driver's choice left Jacobi's held tasks (3 blocks of 42 KB per SM where 5 fit)
// no L1 to speak of: fp64 gathers through L1 measured 1.00x the time of gathers through L2, and
// 0.86x on A5 with it (docs/jacobi.md). Asks the driver four times, so a plan does it once and a
// run only sets the answer again (set_shared_carveout): asked before every run it cost 2.2 us
// of a megakernel run's 35 us host overhead (H200, docs/schedulers.md).
template <class KernelPointer>
int fit_shared_carveout(KernelPointer kernel, int threads, std::uint32_t per_sm, std::uint32_t shared,
                        const DeviceInfo& device) {
  cudaFuncAttributes attributes{};
  APIARY_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
  const std::uint64_t bytes =
      resident_shared_bytes(per_sm, std::uint64_t(attributes.sharedSizeBytes) + shared, device.reserved_shared_per_block);
  int percent = carveout_percent_for(bytes, device.max_shared_per_sm);
  set_shared_carveout(kernel, percent);
  int resident = 0;
  APIARY_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, threads, int(shared)));
  if (resident < int(per_sm)) set_shared_carveout(kernel, percent = cudaSharedmemCarveoutDefault);
  return percent;
}

// Host: the shared memory a block of `kernel` may still take beyond `base` bytes: `room` without
// losing a block of the `per_sm` that fit without it, `block_room` at all. The occupancy query
// answers no more than the kernel's dynamic shared memory limit allows, so that is raised to
// the device's first (the caller sets it to the final size after).
struct SharedRoom {
  std::uint64_t room = 0;
  std::uint64_t block_room = 0;
};
template <class KernelPointer>
SharedRoom shared_room(KernelPointer kernel, int threads, int per_sm, std::uint32_t base, const DeviceInfo& device) {
  cudaFuncAttributes attributes{};
  APIARY_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
  const std::size_t device_max = device.max_shared_per_block;
  const std::size_t limit = device_max - std::min<std::size_t>(device_max, attributes.sharedSizeBytes);
  allow_dynamic_shared(kernel, limit);
  std::size_t free_shared = 0;
  APIARY_CUDA_CHECK(cudaOccupancyAvailableDynamicSMemPerBlock(&free_shared, kernel, per_sm, threads));
  auto beyond_base = [&](std::size_t bytes) { return std::uint64_t(bytes - std::min<std::size_t>(bytes, base)); };
  return SharedRoom{beyond_base(free_shared), beyond_base(limit)};
}

// A scheduler kernel's block layout and how many of its blocks the device holds at once.
struct ResidentBlocks {
  BlockLayout layout;
  std::uint32_t shared = 0;    // dynamic shared memory per block
  std::uint32_t per_sm = 0;    // resident blocks per SM (occupancy, or a configured cap)
  std::uint32_t sm_count = 0;
  int shared_carveout = cudaSharedmemCarveoutDefault;  // what a run asks of the kernel (fit_shared_carveout)
  std::uint32_t blocks() const { return per_sm * sm_count; }
  // Workers of queue q running at once: one full wave of q's task type.
  std::uint64_t workers(std::uint32_t q) const { return std::uint64_t(blocks()) * layout.slots[q]; }
};

// Host: the layout of `kernel`'s blocks and their occupancy (the kernel's registers decide it
// as much as the layout: a graph's heaviest task type sets the register count of the whole
// scheduler kernel). Refuses, before any run, blocks that cannot run on the device; `scheduler`
// names the scheduler in the error.
template <class KernelPointer>
ResidentBlocks plan_resident_blocks(KernelPointer kernel, const PhaseTable& table, const Config& config,
                                    const DeviceInfo& device, const char* scheduler) {
  ResidentBlocks plan;
  plan.layout = plan_blocks(table, config, config.trace, plan.shared);
  plan.sm_count = device.sm_count;
  if (plan.shared > device.max_shared_per_block)
    throw InputError(scheduler, "a block needs " + std::to_string(plan.shared) +
                                    " bytes of shared memory (worker slots x shared_bytes), more than the device's " +
                                    std::to_string(device.max_shared_per_block) +
                                    "; lower shared_bytes or megakernel.block_threads");
  const int threads = int(plan.layout.block_threads);
  // The occupancy calculator answers within the kernel's carveout preference, and a megakernel
  // plan leaves the one it fitted to its own blocks (fit_shared_carveout): a plan starts from
  // the driver's default, or it would count the blocks per SM of the last plan or run.
  set_shared_carveout(kernel, cudaSharedmemCarveoutDefault);
  auto resident = [&](std::uint32_t shared) {
    allow_dynamic_shared(kernel, shared);
    int per_sm = 0;
    APIARY_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, shared));
    if (per_sm == 0)
      throw InputError(scheduler, "no block of " + std::to_string(threads) + " threads with " + std::to_string(shared) +
                                      " bytes of shared memory fits on an SM (registers or shared memory); lower "
                                      "megakernel.block_threads or shared_bytes");
    return per_sm;
  };
  // The staging area takes what shared memory the occupancy without it leaves, and at least
  // one round of every queue (batch_staging.hpp).
  const int base_per_sm = resident(plan.shared);
  const SharedRoom room = shared_room(kernel, threads, base_per_sm, plan.shared, device);
  const std::uint32_t staging = staging_size(staging_demand(table, plan.layout, config.trace), room.room,
                                             room.block_room, staging_cap(std::uint32_t(base_per_sm)));
  place_staging(table, plan.layout, staging, config.trace, scheduler);
  plan.shared += staging;
  plan.per_sm = std::uint32_t(resident(plan.shared));
  return plan;
}

}  // namespace apiary
