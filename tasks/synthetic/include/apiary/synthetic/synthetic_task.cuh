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
// of owned joins and how many resolutions each waits for); the config's shared_bytes follow.
inline constexpr std::uint32_t scratch_bytes = 2 * max_joins * sizeof(std::uint32_t);

// `flops` floating-point operations shared by the worker's threads (2 per FMA), on values
// that depend on the task identity so nothing can be folded away.
__device__ inline float synthetic_work(std::uint64_t id, std::uint32_t flops, std::uint32_t rank, std::uint32_t size) {
  const std::uint32_t fmas = flops / 2 / size + ((flops / 2) % size > rank ? 1u : 0u);
  float a = float(id & 0xffu) * 1e-3f + float(rank);
  const float b = 0.999f, c = 1e-4f;
  for (std::uint32_t i = 0; i < fmas; ++i) a = fmaf(a, b, c);
  return a;
}

// The threads that expand a task: its first min(size, 32) ranks, which share one warp; in
// each round every one of them takes one trial of the expansion (nth_trial), so the votes of
// the warp count what one thread would find by walking all of them.
struct ExpansionLanes {
  std::uint32_t count;  // trials per round
  std::uint32_t mask;   // their lanes in the warp
  bool mine;            // this thread is one of them

  __device__ explicit ExpansionLanes(Worker w) {
    count = w.size() < 32u ? w.size() : 32u;
    mine = w.rank() < count;
    // A worker of up to 32 threads sits in consecutive lanes from lane - rank (WorkerShape);
    // a larger one starts at a warp's lane 0.
    const std::uint32_t base = (threadIdx.x & 31u) - (w.rank() & 31u);
    mask = (count == 32u ? ~0u : ((1u << count) - 1u)) << base;
  }
};

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
    const TypeView& t = v.types[type];
    auto* owned_deps = w.template shared<std::uint32_t>();
    std::uint32_t* owned_waits = owned_deps + max_joins;
    const ExpansionLanes lanes(w);
    const std::uint32_t trials = num_trials(v, type);

    // This thread's trial of the first round, kept for the spawns. In individual mode the
    // lanes then hand this task's counts to its in-scope children (retain) and take the
    // dependencies of its owned joins, both before any child can run; how many resolutions
    // each join waits for is counted after the spawns (expand), before its park.
    Trial first{};
    if (lanes.mine) {
      first = nth_trial(v, type, item.id, w.rank());
      if (p.individual) {
        if (item.num_scopes != 0) {
          const std::uint32_t held = count_scope_holders(lanes, w.rank(), v, type, item, trials, first);
          if (w.rank() < item.num_scopes) ctx.retain(ctx.dependency(item.scope_dep[w.rank()]), std::int32_t(held));
        }
        for (std::uint32_t k = w.rank(); k < t.num_owned_joins; k += lanes.count) owned_deps[k] = ctx.new_dependency_index();
      }
    }
    w.sync();
    if (lanes.mine) expand(lanes, w.rank(), ctx, p, type, item, trials, first, owned_deps, owned_waits);

    const float result = synthetic_work(item.id, t.flops, w.rank(), w.size());
    if (t.shared_bytes >= w.size() * sizeof(float)) touch_shared(w, result);
    if (result == -1.0f) *p.sink = result;  // never true; keeps the work alive
    w.sync();  // the whole task is done before its dependencies see it

    // The resolutions, one per lane: the scopes held, then the owned joins whose owner is a parent.
    if (lanes.mine && p.individual) {
      for (std::uint32_t i = w.rank(); i < item.num_scopes + t.num_owned_joins; i += lanes.count) {
        if (i < item.num_scopes) ctx.resolve(ctx.dependency(item.scope_dep[i]));
        else if (v.joins[owned_join(v, type, i - item.num_scopes)].owner_is_parent)
          ctx.resolve(ctx.dependency(owned_deps[i - item.num_scopes]));
      }
    }
  }

 private:
  // The trial this lane takes in the round starting at `round` (the first is kept).
  __device__ static Trial trial_of(const TreeView& v, std::uint32_t type, const Item& item, std::uint32_t round,
                                   std::uint32_t rank, const Trial& first) {
    return round == 0 ? first : nth_trial(v, type, item.id, round + rank);
  }

  // The trial's children type's scope mask (0 where it yields no child).
  __device__ static std::uint32_t scope_mask_of(const TreeView& v, const Trial& trial) {
    return trial.fired ? v.types[trial.child.type].scope_mask : 0u;
  }

  // count_scope_children's `held`, by votes of the lanes round after round: to the lane of
  // rank i < item.num_scopes, how many children will hold the task's scope i.
  __device__ static std::uint32_t count_scope_holders(const ExpansionLanes& lanes, std::uint32_t rank, const TreeView& v,
                                                      std::uint32_t type, const Item& item, std::uint32_t trials, const Trial& first) {
    std::uint32_t held = 0;
    for (std::uint32_t round = 0; round < trials; round += lanes.count) {
      const std::uint32_t mask = scope_mask_of(v, trial_of(v, type, item, round, rank, first));
      for (std::uint32_t i = 0; i < item.num_scopes; ++i) {
        const std::uint32_t n = __popc(__ballot_sync(lanes.mask, (mask >> item.scope_join[i]) & 1u));
        if (rank == i) held += n;
      }
    }
    return held;
  }

  // join_wait_count for every owned join k, by votes of the lanes: lane 0 stores it in
  // waits[k], visible to the lanes when this returns.
  __device__ static void count_join_waits(const ExpansionLanes& lanes, std::uint32_t rank, const TreeView& v,
                                          std::uint32_t type, const Item& item, std::uint32_t trials, const Trial& first,
                                          std::uint32_t* waits) {
    const TypeView& t = v.types[type];
    for (std::uint32_t k = rank; k < t.num_owned_joins; k += lanes.count) waits[k] = v.joins[owned_join(v, type, k)].owner_is_parent;
    __syncwarp(lanes.mask);
    for (std::uint32_t round = 0; round < trials; round += lanes.count) {
      const std::uint32_t mask = scope_mask_of(v, trial_of(v, type, item, round, rank, first));
      for (std::uint32_t k = 0; k < t.num_owned_joins; ++k) {
        const std::uint32_t n = __popc(__ballot_sync(lanes.mask, (mask >> owned_join(v, type, k)) & 1u));
        if (rank == 0) waits[k] += n;
      }
    }
    __syncwarp(lanes.mask);
  }

  // Spawns the children a trial per lane, all of a round at once (spawns made together share
  // their memory round trips: enqueue reserves a warp's spawns into one queue with one atomic
  // and publishes them with one fence), the join instances with them in phases mode; in
  // individual mode the joins' waits are counted and the joins parked after every spawn,
  // since neither is needed before a child runs, and a park in a branch of the same warp
  // delayed the children's spawns behind it. One thread walking the
  // trials alone (0.5 us of dependent integer arithmetic per trial) made a root of the 11-type
  // tree take 2-5 us longer to queue its children (docs/benchmarks.md, "Kept: a synthetic
  // task expands a trial per thread").
  template <class Ctx>
  __device__ static void expand(const ExpansionLanes& lanes, std::uint32_t rank, Ctx& ctx, const TreeParams& p,
                                std::uint32_t type, const Item& item, std::uint32_t trials, const Trial& first,
                                const std::uint32_t* owned_deps, std::uint32_t* owned_waits) {
    const TreeView& v = p.view;
    const std::uint32_t* deps = p.individual ? owned_deps : nullptr;
    auto parks = [&](const Trial& trial) { return p.individual && trial.child.owned != not_owned; };
    for (std::uint32_t round = 0; round < trials; round += lanes.count) {
      const Trial trial = trial_of(v, type, item, round, rank, first);
      if (trial.fired && !parks(trial))
        ctx.spawn_to(p.queue_of_type[trial.child.type], make_child_item(v, item, type, deps, trial.child));
    }
    if (!p.individual || v.types[type].num_owned_joins == 0) return;
    count_join_waits(lanes, rank, v, type, item, trials, first, owned_waits);
    for (std::uint32_t round = 0; round < trials; round += lanes.count) {
      const Trial trial = trial_of(v, type, item, round, rank, first);
      if (!trial.fired || !parks(trial)) continue;
      const std::uint32_t k = trial.child.owned;
      ctx.spawn_when_to(p.queue_of_type[trial.child.type], ctx.dependency(owned_deps[k]),
                        make_child_item(v, item, type, deps, trial.child), std::int32_t(owned_waits[k]));
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
