// How one synthetic task expands: its children, their identities and the join scopes they
// inherit. Header-only and free of std containers so that the host model (model.cpp) and the
// device task (synthetic_task.cuh) run the very same code: the tree is a pure function of the
// config and the seed, whatever the scheduler does.
//
// Children of a task (type, id), in this order:
//   1. spawn edges: for each transition of `type` (config order), for each trial k < count
//      that `fires`, a child of the transition's target with id child_id(id, key, k);
//   2. owned joins: for each join the type owns (topological order), one join instance with
//      id join_id(id, j).
//
// Individual dependencies, per task (the device task follows these steps):
//   c = count_scope_children(view, type, item);
//   for each held scope i:   retain(item.scope_dep[i], c.held[i])      (before any spawn)
//   for each owned join k:   dep[k] = new dependency
//   for each spawned child:  spawn(make_child_item(view, item, type, dep, child))
//   for each owned join k:   spawn_when(dep[k], make_child_item(...), join_wait_count(view, type, k, c))
// (The spawns and parks may come in any order: a resolution that comes before its spawn_when
// counts. The device task expands a task a trial per thread (nth_trial), counts the scope
// children by warp votes, spawns its children all at once, then parks its joins.)
//   ... the task's work ...
//   at the end:              resolve(item.scope_dep[i]) for each held scope,
//                            resolve(dep[k]) for each owned join with owner_is_parent.
// Phases mode ignores scopes: every child (join instances included) is spawned directly.
#pragma once

#include <apiary/platform.hpp>
#include <apiary/synthetic/tree_view.hpp>

#include <cstdint>

namespace apiary::synthetic {

inline constexpr std::uint32_t not_owned = 0xffffffffu;

// One child of a task.
struct Child {
  std::uint32_t type;
  std::uint32_t owned;  // position k among the parent type's owned joins, or not_owned (spawn edge)
  std::uint64_t id;
};

// Identity and scopes of the k-th root task of roots entry `entry`.
APIARY_HD inline Item root_item(const TreeView& v, std::uint32_t entry, std::uint64_t k) {
  Item item{};
  item.id = root_id(v.seed, entry, k);
  item.num_scopes = 0;
  return item;
}

// Calls f(Child) for every spawn-edge child of the task (type, id).
template <class F>
APIARY_HD void for_each_spawned_child(const TreeView& v, std::uint32_t type, std::uint64_t id, F&& f) {
  const TypeView& t = v.types[type];
  for (std::uint32_t i = 0; i < t.num_transitions; ++i) {
    const TransitionView& tr = v.transitions[t.first_transition + i];
    for (std::uint32_t k = 0; k < tr.count; ++k)
      if (fires(v.seed, id, tr, k)) f(Child{tr.to, not_owned, child_id(id, tr.key, k)});
  }
}

// The k-th join instance a task of type `t` with identity `id` owns (k < t.num_owned_joins).
APIARY_HD inline Child owned_join_child(const TreeView& v, const TypeView& t, std::uint64_t id, std::uint32_t k) {
  const std::uint32_t j = v.owned_joins[t.first_owned_join + k];
  return Child{v.joins[j].join_type, k, join_id(id, j)};
}

// Calls f(Child) for every join instance the task (type, id) owns.
template <class F>
APIARY_HD void for_each_owned_join(const TreeView& v, std::uint32_t type, std::uint64_t id, F&& f) {
  const TypeView& t = v.types[type];
  for (std::uint32_t k = 0; k < t.num_owned_joins; ++k) f(owned_join_child(v, t, id, k));
}

// Spawned children first, then owned join instances.
template <class F>
APIARY_HD void for_each_child(const TreeView& v, std::uint32_t type, std::uint64_t id, F&& f) {
  for_each_spawned_child(v, type, id, f);
  for_each_owned_join(v, type, id, f);
}

// A task's expansion as a sequence of trials, in for_each_child's order: the Bernoulli trials
// of its spawn edges, transition by transition, then one trial per owned join, which always
// yields the join instance. Each trial yields at most one child and needs no other trial, so
// the threads of a worker take one each and expand a task at once (the device task).
struct Trial {
  bool fired = false;  // it yields `child` (false: its draw failed, or it is past the end)
  Child child{};
};

// How many trials the expansion of a task of type `type` has.
APIARY_HD inline std::uint32_t num_trials(const TreeView& v, std::uint32_t type) {
  const TypeView& t = v.types[type];
  std::uint32_t n = t.num_owned_joins;
  for (std::uint32_t i = 0; i < t.num_transitions; ++i) n += v.transitions[t.first_transition + i].count;
  return n;
}

// Trial n of the expansion of the task (type, id); unfired where n >= num_trials.
APIARY_HD inline Trial nth_trial(const TreeView& v, std::uint32_t type, std::uint64_t id, std::uint32_t n) {
  const TypeView& t = v.types[type];
  for (std::uint32_t i = 0; i < t.num_transitions; ++i) {
    const TransitionView& tr = v.transitions[t.first_transition + i];
    if (n < tr.count) {
      const std::uint64_t child = child_id(id, tr.key, n);
      return Trial{draws(v.seed, child, tr), Child{tr.to, not_owned, child}};
    }
    n -= tr.count;
  }
  if (n < t.num_owned_joins) return Trial{true, owned_join_child(v, t, id, n)};
  return Trial{};
}

// Join index of the k-th join owned by `type`.
APIARY_HD inline std::uint32_t owned_join(const TreeView& v, std::uint32_t type, std::uint32_t k) {
  return v.owned_joins[v.types[type].first_owned_join + k];
}

APIARY_HD inline bool in_scope(const TreeView& v, std::uint32_t type, std::uint32_t join) {
  return ((v.types[type].scope_mask >> join) & 1u) != 0;
}

// The work item of `child`: its id, plus every scope it is in — scopes the parent holds, then
// dependencies the parent created for its owned joins (owned_deps[k] for the k-th; may be null
// if the parent type owns no joins or in phases mode).
APIARY_HD inline Item make_child_item(const TreeView& v, const Item& parent, std::uint32_t parent_type,
                                      const std::uint32_t* owned_deps, const Child& child) {
  Item item{};
  item.id = child.id;
  item.num_scopes = 0;
  for (std::uint32_t i = 0; i < parent.num_scopes; ++i) {
    if (in_scope(v, child.type, parent.scope_join[i]) && item.num_scopes < max_join_scopes) {
      item.scope_join[item.num_scopes] = parent.scope_join[i];
      item.scope_dep[item.num_scopes++] = parent.scope_dep[i];
    }
  }
  if (owned_deps == nullptr) return item;
  const TypeView& pt = v.types[parent_type];
  for (std::uint32_t k = 0; k < pt.num_owned_joins; ++k) {
    const std::uint32_t j = v.owned_joins[pt.first_owned_join + k];
    if (in_scope(v, child.type, j) && item.num_scopes < max_join_scopes) {
      item.scope_join[item.num_scopes] = static_cast<std::uint8_t>(j);
      item.scope_dep[item.num_scopes++] = owned_deps[k];
    }
  }
  return item;
}

// How many children of a task will hold each of its scopes.
struct ScopeCounts {
  std::uint32_t held[max_join_scopes];  // per scope the task holds (item.scope_join[i])
  std::uint32_t owned[max_joins];       // per owned join k
};

APIARY_HD inline ScopeCounts count_scope_children(const TreeView& v, std::uint32_t type, const Item& item) {
  ScopeCounts c{};
  const TypeView& t = v.types[type];
  for_each_child(v, type, item.id, [&](const Child& child) {
    const std::uint32_t mask = v.types[child.type].scope_mask;
    for (std::uint32_t i = 0; i < item.num_scopes; ++i) c.held[i] += (mask >> item.scope_join[i]) & 1u;
    for (std::uint32_t k = 0; k < t.num_owned_joins; ++k) c.owned[k] += (mask >> v.owned_joins[t.first_owned_join + k]) & 1u;
  });
  return c;
}

// The n of spawn_when for the task's k-th owned join: the children that will hold its
// dependency, plus one for the owner itself when it is a parent of the join.
APIARY_HD inline std::uint32_t join_wait_count(const TreeView& v, std::uint32_t type, std::uint32_t k, const ScopeCounts& c) {
  return c.owned[k] + v.joins[owned_join(v, type, k)].owner_is_parent;
}

}  // namespace apiary::synthetic
