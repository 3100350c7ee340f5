// The device context a task receives: spawn tasks, spawn tasks that wait on a dependency,
// resolve dependencies, stop the run. Scheduler-independent: every scheduler hands the same
// Context to the task code.
#pragma once

#include <apiary/dependency.hpp>
#include <apiary/device_graph.hpp>
#include <apiary/graph.hpp>
#include <apiary/handoff.hpp>
#include <apiary/trace_writer.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace apiary {

namespace detail {
template <class Codes>
struct MaxItemSize;
template <class... Ts>
struct MaxItemSize<TypeList<Ts...>> {
  static constexpr std::uint32_t value = [] {
    std::uint32_t m = 8;
    ((m = sizeof(typename Ts::Item) > m ? std::uint32_t(sizeof(typename Ts::Item)) : m), ...);
    return m;
  }();
};

__device__ inline std::uint32_t lane_id() {
  std::uint32_t lane;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  return lane;
}
}  // namespace detail

// `CarriesUnfreedSlot`: whether a released task's waiting-storage slot is left for this
// thread's next release fence to free (release, resolve), or freed when it is read. The task
// loop chooses per task type (block_runner.cuh): carrying it costs a register through every
// resolution of a task, which a type heavy on registers (Jacobi's) feels.
template <class Graph, bool CarriesUnfreedSlot = true>
class Context {
 public:
  using Traits = GraphTraits<Graph>;
  static constexpr std::uint32_t max_item_bytes = queue_stride(detail::MaxItemSize<typename Traits::Codes>::value);
  using BlockHandoff = Handoff<max_item_bytes>;

  // `handoff`: the block's hand-off slot (handoff.hpp; its accept masks say what it takes).
  // `dependencies`: the block's share of the dependency pool (dependency_pool.hpp; a block
  // that ends with its launch takes no share). References: a pointer that may be null costs a
  // test per use, which the compiler cannot drop for a shared-memory object.
  // `unfreed_slot`: the waiting-storage slot this thread's previous task read and left taken
  // (unfreed_slot() after that task), or no_slot.
  __device__ Context(const DeviceGraph& graph, std::uint32_t queue, std::uint32_t trace_task, BlockHandoff& handoff,
                     BlockDependencies& dependencies, std::uint32_t unfreed_slot = no_slot)
      : g_(&graph),
        queue_(queue),
        trace_task_(trace_task),
        handoff_(&handoff),
        dependencies_(&dependencies),
        unfreed_slot_(unfreed_slot) {}

  // Scheduler use, after the task: the waiting-storage slot of the last task this thread
  // released, read but not yet freed (no_slot if none). The next task of this thread gets it
  // back (its next resolution frees it after that resolution's fence); the scheduler frees
  // what is left with free_unfreed_slot when the thread's tasks end.
  __device__ std::uint32_t unfreed_slot() const { return unfreed_slot_; }
  __device__ static void free_unfreed_slot(const DeviceGraph& g, std::uint32_t slot) {
    if (slot == no_slot) return;
    release_only_fence();
    g.waiting.free_after_fence(slot);
  }

  // Scheduler use: whether this thread put a ready task into the block's hand-off slot
  // (ctx.spawn_next, or a release it routed there) or readied the task held there (its
  // resolution completed the wait); held and gated tasks that still wait do not count.
  __device__ bool handed_off() const { return handed_off_; }
  // Scheduler use: this thread held the task's continuation at a gate (hold_next_at), which
  // the worker may wait for itself (a gated local hop, handoff.hpp).
  __device__ bool held_at_gate() const { return held_at_gate_; }

  // Scheduler use, right after the task: if the task held its continuation in the block's slot
  // (spawn_next_when), the wait begins now, for the resolutions the task did not supply
  // itself (Handoff::begin_hold). Where nothing remains (a held chain's link that resolves
  // the dependency it held the next link on) or the rest came first, the held task is ready
  // now, as if handed off (handed_off() turns true: the next link runs without a poll and can
  // be a local hop), traced as a release by this task, as the release of a parked task is.
  // Only the holding thread touches the slot's wait while the batch runs, so nothing races
  // with its fields (compute-sanitizer's racecheck flags a read of them by any other thread of
  // the batch). After the task, not in resolve: a task whose code is not inlined (Jacobi's)
  // would otherwise carry this at every resolution (+7 KB per Jacobi worker kernel; a
  // non-inlined call there made parked chains 1.38x and fan trees 1.16x slower on an H100).
  // A task type that never holds leaves held_ nullptr, and where its code is inlined this
  // compiles to nothing.
  __device__ void begin_hold() const {
    if (held_ == nullptr || !handoff_->begin_hold(held_needs_)) return;
    record(DependencyEventKind::release, dependency_id(*held_), 0, handoff_->queue);
    handed_off_ = true;
  }

  // Enqueues a task of type U (declared graphs). It may start at once on another block,
  // while this task still runs.
  template <class U>
  __device__ void spawn(const typename U::Item& item) const {
    enqueue(queue_of<U>(), &item, sizeof(item), no_dependency, Route::queue);
  }
  // Enqueues an item into queue `queue` (data-driven graphs).
  template <class Item>
  __device__ void spawn_to(std::uint32_t queue, const Item& item) const {
    static_assert(std::is_trivially_copyable_v<Item>);
    enqueue(queue, &item, sizeof(item), no_dependency, Route::queue);
  }

  // Spawns this task's continuation: a task of type U that has nothing to do before this
  // task ends (call it last). Where the scheduler can, it runs next in this block, skipping
  // the queue round trip (the block's hand-off slot, handoff.hpp); otherwise it is queued as
  // by spawn(). Either way it may start before this task returns, so it must not rely on that.
  template <class U>
  __device__ void spawn_next(const typename U::Item& item) const {
    enqueue(queue_of<U>(), &item, sizeof(item), no_dependency, Route::handoff);
  }
  template <class Item>
  __device__ void spawn_next_to(std::uint32_t queue, const Item& item) const {
    static_assert(std::is_trivially_copyable_v<Item>);
    enqueue(queue, &item, sizeof(item), no_dependency, Route::handoff);
  }

  // Spawns a task of type U that runs once `dep` received `n` resolutions (resolutions that
  // came earlier count). The task waits in the waiting storage meanwhile.
  template <class U>
  __device__ void spawn_when(Dependency& dep, const typename U::Item& item, std::int32_t n) const {
    spawn_when_to(queue_of<U>(), dep, item, n);
  }
  template <class Item>
  __device__ void spawn_when_to(std::uint32_t queue, Dependency& dep, const Item& item, std::int32_t n) const {
    const std::uint64_t id = dependency_id(dep);
    record(DependencyEventKind::park, id, n, queue);
    const WaitingStorageView& ws = g_->waiting;
    apiary::spawn_when(
        dep, n,
        [&] {
          const std::uint32_t slot = ws.reserve(id ^ (std::uint64_t(blockIdx.x) << 32) ^ threadIdx.x);
          if (slot != no_slot) ws.write(slot, queue, &item, sizeof(Item), id);
          return slot;
        },
        [&](std::uint32_t slot) { ws.discard(slot); },
        [&] {
          record(DependencyEventKind::release, id, 0, queue);
          enqueue(queue, &item, sizeof(Item), id, Route::queue);
        });
  }

  // A continuation that also waits for `n` resolutions of `dep` (resolutions that came earlier
  // count): spawn_when's semantics, for a task with nothing to do before this one ends (call
  // it last). Under the megakernel it waits in this block's hand-off slot when that is free,
  // the type is phaseless and Config::handoff is on: no waiting-storage slot, no release and
  // no queue hop, the block polls the dependency between batches (handoff.hpp). Otherwise it
  // parks as by spawn_when.
  template <class U>
  __device__ void spawn_next_when(Dependency& dep, const typename U::Item& item, std::int32_t n) const {
    spawn_next_when_to(queue_of<U>(), dep, item, n);
  }
  template <class Item>
  __device__ void spawn_next_when_to(std::uint32_t queue, Dependency& dep, const Item& item, std::int32_t n) const {
    static_assert(std::is_trivially_copyable_v<Item>);
    if (n > 0 && handoff_->try_hold(queue)) {
      record(DependencyEventKind::park, dependency_id(dep), n, queue);
      handoff_->put_held(queue, &item, sizeof(Item), dep);  // counted pending when this batch finishes
      held_ = &dep;
      held_needs_ = n;
      return;
    }
    spawn_when_to(queue, dep, item, n);
  }

  // A continuation that waits in this block's hand-off slot until `gate` opens (gate.hpp):
  // for barriers whose arrivals count up one word, which then releases all its waiters with
  // the last arrival's atomic. Call it last, from one thread. Returns false, spawning nothing,
  // where the task cannot be held (anything but the megakernel, hand-off off, U phased, the
  // slot taken): nobody else would release it, so the caller must start it another way.
  template <class U>
  __device__ bool hold_next_at(const Gate& gate, const typename U::Item& item) const {
    constexpr std::uint32_t q = queue_of<U>();
    if (!handoff_->try_hold(q)) return false;
    handoff_->put_gated(q, &item, sizeof(item), gate);  // counted pending when this batch finishes
    held_at_gate_ = true;
    return true;
  }

  // One resolution of `dep`; the resolution that completes it moves the waiting task to its
  // queue, or, where the scheduler can, to this block's hand-off slot: its inputs are ready
  // (dependencies are resolved once the work they guard is done), so it may as well run next here.
  //
  // The acq_rel atomic is split into its halves (platform.hpp), at the same cost, so that the
  // slot of the task this thread released last can be freed with a plain store after the
  // release fence, instead of with a fence of its own when it was read (release). That fence
  // was a fifth of a parked chain's hop (docs/benchmarks.md, "Kept: slots freed after the next
  // resolution's fence").
  __device__ void resolve(Dependency& dep) const {
    const std::uint64_t id = dependency_id(dep);
    record(DependencyEventKind::resolve, id, 0, no_task);
    if (&dep == held_) return supply_held();
    release_only_fence();
    free_unfreed_slot_after_fence();
    apiary::resolve_after_fence(dep, [&](std::uint32_t slot) { release(slot, id, Route::handoff); });
  }

  // The same, for a thread that issued __threadfence() after the work `dep` guards and before
  // this call: a thread resolving many dependencies fences once instead of once per atomic.
  // A slot this thread holds unfreed may have been read after the caller's fence (released
  // by an earlier call of the series, or by resolve), so it is freed behind a fence of its own
  // (free_unfreed_slot): a series pays that only where a call follows a release, or the
  // thread's previous task left a slot.
  __device__ void resolve_after_fence(Dependency& dep) const {
    const std::uint64_t id = dependency_id(dep);
    record(DependencyEventKind::resolve, id, 0, no_task);
    if (&dep == held_) return supply_held();
    if constexpr (CarriesUnfreedSlot) {
      free_unfreed_slot(*g_, unfreed_slot_);
      unfreed_slot_ = no_slot;
    }
    apiary::resolve_after_fence(dep, [&](std::uint32_t slot) { release(slot, id, Route::handoff); });
  }

  // Adds k expected resolutions to a dependency this task holds a count of (see dependency.hpp).
  __device__ void retain(Dependency& dep, std::int32_t k) const { apiary::retain(dep, k); }

  // A dependency from the runtime's pool (zeroed before each run); nullptr and a
  // dependency_pool_full error when the pool (Config::dependency_capacity) is exhausted.
  __device__ Dependency* new_dependency() const {
    const std::uint32_t i = new_dependency_index();
    return i == no_slot ? nullptr : &g_->pool.deps[i];
  }
  // The same, as an index for ctx.dependency(i) (fits in work items); no_slot when exhausted.
  __device__ std::uint32_t new_dependency_index() const {
    const DependencyPool& pool = g_->pool;
    const std::uint32_t i = dependencies_->take(pool);
    if (i < pool.limit) return i;
    raise_error(g_->state->error, ErrorCode::dependency_pool_full, 0, g_->pool.capacity, std::uint64_t(i) + 1);
    return no_slot;
  }
  // Dependency i of the runtime's pool (the host hands out indices through Runtime::dependencies()).
  __device__ Dependency& dependency(std::uint32_t i) const { return g_->pool.deps[i]; }

  // Ends the run after the running tasks finish; queued tasks do not run, and the phase does
  // not change again. (A block that runs a chain of handed-off tasks sees a stop from another
  // block within 16 of them, handoff.hpp.)
  __device__ void stop() const {
    g_->controller().stop();
    detail::block_store(handoff_->stopping, 1u);  // this block runs no handed-off task after it
  }
  // True once the run is ending (stop, watchdog, error): long-running tasks may poll it.
  __device__ bool cancelled() const { return !g_->controller().running(); }
  // The current phase and how many phase changes happened so far.
  __device__ PhaseWord phase() const { return g_->controller().current(); }
  // This task's index in the trace (no_task when tracing is off).
  __device__ std::uint32_t trace_task() const { return trace_task_; }
  // The queue (task type index in the phase table) this task came from.
  __device__ std::uint32_t queue() const { return queue_; }
  // The pointer given to Runtime::set_user_data (device memory the tasks read).
  template <class T>
  __device__ const T* user_data() const {
    return static_cast<const T*>(g_->user_data);
  }

 private:
  template <class U>
  __device__ static constexpr std::uint32_t queue_of() {
    static_assert(Traits::declared, "apiary: spawn<U> needs a declared graph; use spawn_to(queue, item)");
    constexpr std::uint32_t q = Traits::template queue_of<U>;
    static_assert(q != ~0u, "apiary: spawn<U>: U is not a task type of this graph");
    return q;
  }

  // Where an enqueued task goes: its queue, or the block's hand-off slot if it is free and
  // accepts the queue (continuations and released tasks only: a task spawned while its
  // parent still works must stay free to start elsewhere).
  enum class Route { queue, handoff };

  // Warp-aggregated enqueue: the threads of a warp that enqueue to the same queue at the same
  // time reserve their tickets with one atomic and commit them with one more. A lone task
  // routed to the hand-off slot goes there instead when the scheduler accepts it.
  __device__ void enqueue(std::uint32_t q, const void* item, std::uint32_t bytes, std::uint64_t tag, Route route) const {
    const QueueView& queue = g_->queues[q];
    const std::uint32_t active = __activemask();
    const std::uint32_t peers = __match_any_sync(active, q);
    const std::uint32_t lane = detail::lane_id();
    const std::uint32_t leader = __ffs(peers) - 1;
    const std::uint32_t rank = __popc(peers & ((1u << lane) - 1u));
    const std::uint32_t count = __popc(peers);
    if (route == Route::handoff && count == 1 && handoff_->try_take(q)) {
      handoff_->put(q, item, bytes, tag);  // counted pending when this batch finishes
      handed_off_ = true;
      return;
    }
    unsigned long long first = 0;
    int reserved = 1;
    if (lane == leader) {
      if (q == queue_) handoff_->note_own_queue_spawn();
      g_->controller().add_pending(q, count);
      std::uint64_t f = 0;
      reserved = queue.reserve(count, f) ? 1 : 0;
      first = f;
    }
    first = __shfl_sync(peers, first, leader);
    reserved = __shfl_sync(peers, reserved, leader);
    if (!reserved) return;  // queue_full was raised; the run stops
    const std::uint64_t ticket = first + rank;
    if (queue.wait_free(ticket)) {
      queue.write(ticket, item, bytes, tag);
      queue.publish(ticket);
    }
    __syncwarp(peers);
    if (lane == leader) queue.commit(count);
  }

  // Moves a parked task from the waiting storage to its queue. Called right after a
  // resolution's atomic, which came after the release fence that freed the slot read before
  // (resolve), so this thread holds no other unfreed slot: its slot is left taken until the
  // next fence of this thread (its next resolution, or free_unfreed_slot after its tasks).
  __device__ void release(std::uint32_t slot, std::uint64_t id, Route route) const {
    alignas(8) std::byte buffer[max_item_bytes];
    std::uint32_t q;
    if constexpr (CarriesUnfreedSlot) {
      q = g_->waiting.read(slot, buffer, max_item_bytes);
      unfreed_slot_ = slot;
    } else {
      q = g_->waiting.extract(slot, buffer, max_item_bytes);
    }
    record(DependencyEventKind::release, id, 0, q);
    enqueue(q, buffer, g_->queues[q].stride, id, route);
  }

  // After a release fence of this thread that followed the read of the slot.
  __device__ void free_unfreed_slot_after_fence() const {
    if (!CarriesUnfreedSlot || unfreed_slot_ == no_slot) return;
    g_->waiting.free_after_fence(unfreed_slot_);
    unfreed_slot_ = no_slot;
  }

  // A resolution of the dependency this thread held its continuation on: counted here, the
  // wait (begin_hold, after the task) asks the word only for the others.
  __device__ void supply_held() const { --held_needs_; }

  __device__ void record(DependencyEventKind kind, std::uint64_t id, std::int32_t count, std::uint32_t queue) const {
    if (!g_->trace.enabled()) return;
    g_->trace.event(DependencyEvent{global_timer_ns(), id, static_cast<std::uint32_t>(kind), trace_task_, count, queue});
  }

  const DeviceGraph* g_;
  std::uint32_t queue_;
  std::uint32_t trace_task_;
  BlockHandoff* handoff_;             // never null
  BlockDependencies* dependencies_;  // never null
  mutable bool handed_off_ = false;  // this thread put a ready task into the slot (handed_off())
  mutable bool held_at_gate_ = false;  // this thread held a task at a gate (held_at_gate())
  mutable Dependency* held_ = nullptr;  // the dependency this thread's task held its continuation on
  mutable std::int32_t held_needs_ = 0;  // the resolutions of held_ still to come (n less this task's)
  mutable std::uint32_t unfreed_slot_;   // the waiting-storage slot released last, read, not yet freed
};

}  // namespace apiary
