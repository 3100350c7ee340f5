// The data contract of a synthetic task tree: flat, trivially copyable arrays that the host
// builds from a validated JSON config (spec.hpp) and that both the host model (model.hpp) and
// the device task (synthetic_task.cuh) read. Both sides expand a task with the same rules
// (tree_rules.hpp), so the tree is a pure function of config and seed.
//
// Semantics
// ---------
// * Task types form a DAG. A transition (from, to, probability, count) whose target has one
//   incoming transition is a *spawn edge*: every instance of `from` draws `count` Bernoulli
//   trials with the given probability and spawns one child of `to` per success.
// * A type with two or more incoming transitions is a *join*. Its *owner* is the immediate
//   dominator of the join in the type DAG (every path from a root type to the join passes
//   through it). Every owner instance creates exactly one join instance (id = join_id(owner id,
//   join index)). Transitions into a join are *dependency edges*: probability 1 and count 1.
//   The join instance waits for every instance of its parent types that descends from its
//   owner instance ("the parents that were actually spawned").
// * Phases mode: the owner spawns the join directly; the join's phase is later than every
//   parent's phase, so phase order gives the dependency. Individual mode: the owner parks the
//   join with spawn_when(dep, join, r); every task in the join's *scope* (types on a path from
//   the owner to a parent, parents included) holds one count of that dependency, adds its own
//   in-scope children before spawning them (retain) and gives its count back when it ends
//   (resolve). An owner that is itself a parent (JoinView::owner_is_parent) also holds one
//   count. So the join runs after each parent instance ended.
// * A task's scopes are the (join, dependency) pairs it holds; at most max_join_scopes.
#pragma once

#include <apiary/platform.hpp>

#include <cstdint>

namespace apiary::synthetic {

inline constexpr std::uint32_t max_join_scopes = 4;
inline constexpr std::uint32_t max_joins = 32;        // scope masks are 32-bit
inline constexpr std::uint64_t always = 1ull << 32;   // threshold for probability 1

struct TransitionView {
  std::uint32_t to;         // target type index
  std::uint32_t count;      // Bernoulli trials per instance
  std::uint64_t threshold;  // fires when (rng >> 32) < threshold; probability * 2^32, 2^32 = always
  std::uint32_t key;        // index of the transition in the config: part of the RNG key
  std::uint32_t pad = 0;
};

struct JoinView {
  std::uint32_t join_type;   // the join's task type
  std::uint32_t owner_type;  // its immediate dominator
  // 1 if the owner is itself a parent (a transition owner -> join exists). The owner is never
  // in its own join's scope, so it holds one extra count of the dependency itself (n + 1 in
  // spawn_when) and resolves it when it ends; otherwise the join could start while its owner
  // still runs.
  std::uint32_t owner_is_parent = 0;
};

struct TypeView {
  std::uint32_t first_transition;  // spawn edges out of this type: transitions[first, first+n)
  std::uint32_t num_transitions;
  std::uint32_t first_owned_join;  // joins owned by this type: owned_joins[first, first+n)
  std::uint32_t num_owned_joins;
  std::uint32_t scope_mask;        // bit j: instances of this type hold join j's dependency
  std::uint32_t flops;             // synthetic work per task (floating-point operations)
  std::uint32_t worker_size;       // threads per task
  std::uint32_t shared_bytes;      // shared memory per task
  std::int32_t phase;              // phase index, -1 phaseless
  std::uint32_t pad = 0;
};

struct TreeView {
  const TypeView* types = nullptr;
  const TransitionView* transitions = nullptr;
  const JoinView* joins = nullptr;         // indexed by join index j
  const std::uint32_t* owned_joins = nullptr;  // join indices, grouped by owner type
  std::uint32_t num_types = 0;
  std::uint32_t num_joins = 0;
  std::uint64_t seed = 0;
};

// The work item of every synthetic task.
struct Item {
  std::uint64_t id;                             // identity: drives all random decisions
  std::uint32_t scope_dep[max_join_scopes];     // dependency index held for scope_join[i]
  std::uint8_t scope_join[max_join_scopes];     // join index of each held scope
  std::uint32_t num_scopes;
};

// Identity of the k-th root of roots entry r.
APIARY_HD constexpr std::uint64_t root_id(std::uint64_t seed, std::uint32_t entry, std::uint64_t k) {
  return mix64(mix64(seed ^ 0x726f6f74ull) ^ mix64((std::uint64_t(entry) << 40) ^ k));
}
// Identity of the child spawned by trial k of transition `key` of the task `parent`.
APIARY_HD constexpr std::uint64_t child_id(std::uint64_t parent, std::uint32_t key, std::uint32_t k) {
  return mix64(parent ^ mix64((std::uint64_t(key) << 32) | k));
}
// Identity of the instance of join j owned by the task `owner`.
APIARY_HD constexpr std::uint64_t join_id(std::uint64_t owner, std::uint32_t j) {
  return mix64(owner ^ mix64(0x6a6f696e00000000ull | j));
}
// Whether the trial of transition t whose child would have identity `child` fires.
APIARY_HD constexpr bool draws(std::uint64_t seed, std::uint64_t child, const TransitionView& t) {
  return (mix64(seed ^ child) >> 32) < t.threshold;
}
// Whether trial k of transition t fires for the task `id`.
APIARY_HD constexpr bool fires(std::uint64_t seed, std::uint64_t id, const TransitionView& t, std::uint32_t k) {
  return draws(seed, child_id(id, t.key, k), t);
}

}  // namespace apiary::synthetic
