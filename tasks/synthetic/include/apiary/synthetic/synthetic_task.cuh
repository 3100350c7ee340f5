// The device task that runs every synthetic task type: one compiled code, one queue per JSON
// task type (DataGraph<SyntheticTask>). It expands its children with tree_rules.hpp — the
// same code the host model runs — does its synthetic floating-point work, and in individual
// mode holds and resolves the dependencies of the joins whose scope it is in.
#pragma once

#include <apiary/context.cuh>
#include <apiary/synthetic/tree_rules.hpp>
#include <apiary/synthetic/tree_view.hpp>
#include <apiary/worker.cuh>

#include <cstdint>

namespace apiary::synthetic {

// Parameters the tasks read through ctx.user_data<TreeParams>() (device memory).
struct TreeParams {
  TreeView view;                          // arrays in device memory
  std::uint32_t queue_of_type[max_queues];
  std::uint32_t type_of_queue[max_queues];
  std::uint32_t individual;               // 1: dependency mode "individual"
  float* sink;                            // receives work results that would be impossible
};

// Bytes at the start of each task's shared memory used by the task itself (dependency indices
// of owned joins); the config's shared_bytes follow.
inline constexpr std::uint32_t scratch_bytes = max_joins * sizeof(std::uint32_t);

// `flops` floating-point operations shared by the worker's threads (2 per FMA), on values
// that depend on the task identity so nothing can be folded away.
__device__ inline float synthetic_work(std::uint64_t id, std::uint32_t flops, std::uint32_t rank, std::uint32_t size) {
  const std::uint32_t fmas = flops / 2 / size + ((flops / 2) % size > rank ? 1u : 0u);
  float a = float(id & 0xffu) * 1e-3f + float(rank);
  const float b = 0.999f, c = 1e-4f;
  for (std::uint32_t i = 0; i < fmas; ++i) a = fmaf(a, b, c);
  return a;
}

struct SyntheticTask {
  using Item = synthetic::Item;
  static constexpr unsigned threads = 32;  // default; every queue sets its own worker size
  static constexpr unsigned shared_bytes = 0;
  static constexpr const char* name = "synthetic";

  template <class Ctx>
  __device__ void operator()(Worker w, const Item& item, Ctx& ctx) const {
    const TreeParams& p = *ctx.template user_data<TreeParams>();
    const TreeView& v = p.view;
    const std::uint32_t type = p.type_of_queue[ctx.queue()];
    auto* owned_deps = w.template shared<std::uint32_t>();
    const TypeView& t = v.types[type];

    // Rank 0 hands this task's counts to its in-scope children before any of them can run.
    if (w.rank() == 0 && p.individual) {
      if (item.num_scopes != 0) {
        const ScopeCounts counts = count_scope_children(v, type, item);
        for (std::uint32_t i = 0; i < item.num_scopes; ++i)
          ctx.retain(ctx.dependency(item.scope_dep[i]), std::int32_t(counts.held[i]));
      }
      for (std::uint32_t k = 0; k < t.num_owned_joins; ++k) owned_deps[k] = ctx.new_dependency_index();
    }
    w.sync();
    spawn_children(w, ctx, p, type, item, owned_deps);
    create_joins(w, ctx, p, type, item, owned_deps);

    const float result = synthetic_work(item.id, t.flops, w.rank(), w.size());
    if (t.shared_bytes >= w.size() * sizeof(float)) touch_shared(w, result);
    if (result == -1.0f) *p.sink = result;  // never true; keeps the work alive
    w.sync();  // the whole task is done before its dependencies see it

    if (w.rank() == 0 && p.individual) {
      for (std::uint32_t i = 0; i < item.num_scopes; ++i) ctx.resolve(ctx.dependency(item.scope_dep[i]));
      for (std::uint32_t k = 0; k < t.num_owned_joins; ++k)
        if (v.joins[owned_join(v, type, k)].owner_is_parent) ctx.resolve(ctx.dependency(owned_deps[k]));
    }
  }

 private:
  // One child per thread, all spawned at once (child n of for_each_spawned_child's order by
  // the thread of rank n, or n mod the worker size in later rounds where a task has more
  // children than threads), before the joins, so that the children are queued as early as
  // possible. Spawns made together share their memory round trips: enqueue reserves the slots
  // of a warp's spawns into one queue with one atomic and publishes them with one fence. With
  // one thread spawning at a time, a root of the 11-type tree (about seven children) took
  // 25-34 us against 4.5-5 us for a task without children (traces of the megakernel;
  // docs/benchmarks.md, "Kept: a synthetic task spawns its children at once").
  template <class Ctx>
  __device__ static void spawn_children(Worker w, Ctx& ctx, const TreeParams& p, std::uint32_t type, const Item& item,
                                        const std::uint32_t* owned_deps) {
    const TreeView& v = p.view;
    const std::uint32_t* deps = p.individual ? owned_deps : nullptr;
    std::uint32_t count = 1;  // known after the first pass
    for (std::uint32_t round = 0; round < count; round += w.size()) {
      const SpawnedChild mine = nth_spawned_child(v, type, item.id, round + w.rank());
      count = mine.count;
      if (round + w.rank() < count)
        ctx.spawn_to(p.queue_of_type[mine.child.type], make_child_item(v, item, type, deps, mine.child));
    }
  }

  // The join instances the task owns, one per thread: spawned (phases mode) or parked on the
  // dependency rank 0 created for it, waiting for the children that hold it (individual mode).
  template <class Ctx>
  __device__ static void create_joins(Worker w, Ctx& ctx, const TreeParams& p, std::uint32_t type, const Item& item,
                                      const std::uint32_t* owned_deps) {
    const TreeView& v = p.view;
    const TypeView& t = v.types[type];
    for (std::uint32_t k = w.rank(); k < t.num_owned_joins; k += w.size()) {
      const Child join = owned_join_child(v, t, item.id, k);
      const std::uint32_t queue = p.queue_of_type[join.type];
      if (!p.individual) {
        ctx.spawn_to(queue, make_child_item(v, item, type, nullptr, join));
        continue;
      }
      const ScopeCounts counts = count_scope_children(v, type, item);
      ctx.spawn_when_to(queue, ctx.dependency(owned_deps[k]), make_child_item(v, item, type, owned_deps, join),
                        std::int32_t(join_wait_count(v, type, k, counts)));
    }
  }

  // Uses the task's configured shared memory: each thread publishes its value, reads a
  // neighbour's after the worker barrier.
  __device__ static void touch_shared(Worker w, float value) {
    float* shared = reinterpret_cast<float*>(w.template shared<std::byte>() + scratch_bytes);
    shared[w.rank()] = value;
    w.sync();
    const float neighbour = shared[(w.rank() + 1) % w.size()];
    if (neighbour == -2.0f) shared[0] = neighbour;
  }
};

}  // namespace apiary::synthetic
