#include <apiary/synthetic/tree_tables.hpp>

#include <cmath>

namespace apiary::synthetic {

std::uint64_t probability_threshold(double probability) {
  // Multiplying by a power of two is exact; only the rounding to an integer is not.
  return static_cast<std::uint64_t>(std::llround(std::ldexp(probability, 32)));
}

TreeView TreeTables::view() const {
  TreeView v;
  v.types = types.data();
  v.transitions = transitions.data();
  v.joins = joins.data();
  v.owned_joins = owned_joins.data();
  v.num_types = static_cast<std::uint32_t>(types.size());
  v.num_joins = static_cast<std::uint32_t>(joins.size());
  v.seed = seed;
  return v;
}

TreeTables build_tree_tables(const Spec& spec) {
  const TypeDag& g = spec.dag;
  TreeTables tables;
  tables.seed = spec.seed;
  for (std::uint32_t j = 0; j < g.joins.size(); ++j) {
    JoinView join{g.joins[j], g.owner(j), 0};
    for (std::uint32_t e : g.incoming[g.joins[j]])
      if (spec.transitions[e].from == join.owner_type) join.owner_is_parent = 1;
    tables.joins.push_back(join);
  }
  for (std::uint32_t t = 0; t < spec.types.size(); ++t) {
    const TaskTypeSpec& ts = spec.types[t];
    TypeView type{};
    type.first_transition = static_cast<std::uint32_t>(tables.transitions.size());
    // outgoing[] lists edges in config order; dependency edges (into joins) are not spawned:
    // the owner creates join instances instead.
    for (std::uint32_t e : g.outgoing[t]) {
      const TransitionSpec& tr = spec.transitions[e];
      if (g.is_join(tr.to)) continue;
      tables.transitions.push_back(TransitionView{tr.to, tr.count, probability_threshold(tr.probability), e, 0});
    }
    type.num_transitions = static_cast<std::uint32_t>(tables.transitions.size()) - type.first_transition;
    type.first_owned_join = static_cast<std::uint32_t>(tables.owned_joins.size());
    for (std::uint32_t j = 0; j < g.joins.size(); ++j)
      if (g.owner(j) == t) tables.owned_joins.push_back(j);
    type.num_owned_joins = static_cast<std::uint32_t>(tables.owned_joins.size()) - type.first_owned_join;
    type.scope_mask = static_cast<std::uint32_t>(g.scope_mask[t]);
    type.flops = ts.flops;
    type.worker_size = ts.worker_size;
    type.shared_bytes = ts.shared_bytes;
    type.phase = spec.mode == DependencyMode::phases ? ts.phase : -1;
    tables.types.push_back(type);
  }
  return tables;
}

}  // namespace apiary::synthetic
