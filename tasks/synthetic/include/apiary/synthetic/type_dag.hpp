// Structure of the task-type DAG of a synthetic tree: which types are joins, who owns each
// join (its immediate dominator) and which types lie in each join's scope. spec.cpp uses it to
// validate a config, tree_tables.cpp to fill the device tables; both see the same answer.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace apiary::synthetic {

// A type-level edge: `from` -> `to` (one per config transition).
struct TypeEdge {
  std::uint32_t from;
  std::uint32_t to;
};

struct TypeDag {
  static constexpr std::uint32_t no_owner = 0xffffffffu;

  std::uint32_t num_types = 0;
  std::vector<std::vector<std::uint32_t>> incoming;  // per type: indices into the edge list
  std::vector<std::vector<std::uint32_t>> outgoing;  // per type: indices into the edge list
  std::vector<bool> is_root;                         // seeded by a roots entry
  std::vector<bool> reachable;                       // from some root type
  std::vector<std::uint32_t> topo_order;             // every type, parents before children
  // Immediate dominator of every reachable type, with a virtual root above all root types;
  // no_owner where that is the virtual root (or the type is unreachable).
  std::vector<std::uint32_t> idom;
  std::vector<std::uint32_t> joins;                  // join types (>= 2 incoming), topological order
  std::vector<std::int32_t> join_index;              // per type: its join index or -1
  std::vector<std::uint64_t> scope_mask;             // per type: bit j = in scope of join j

  bool is_join(std::uint32_t t) const { return join_index[t] >= 0; }
  std::uint32_t owner(std::uint32_t j) const { return idom[joins[j]]; }
};

// Finds a directed cycle; returns the edge indices along it (empty if the graph is a DAG).
std::vector<std::uint32_t> find_cycle(std::uint32_t num_types, const std::vector<TypeEdge>& edges);

// Analyses an acyclic type graph (call find_cycle first). Scope masks are computed for the
// first 64 joins only; callers reject configs with more than max_joins joins anyway.
TypeDag analyze_dag(std::uint32_t num_types, const std::vector<TypeEdge>& edges,
                    const std::vector<std::uint32_t>& root_types);

}  // namespace apiary::synthetic
