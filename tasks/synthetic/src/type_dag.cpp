#include <apiary/synthetic/type_dag.hpp>

#include <algorithm>
#include <functional>
#include <queue>

namespace apiary::synthetic {

std::vector<std::uint32_t> find_cycle(std::uint32_t num_types, const std::vector<TypeEdge>& edges) {
  std::vector<std::vector<std::uint32_t>> out(num_types);
  for (std::uint32_t e = 0; e < edges.size(); ++e) out[edges[e].from].push_back(e);
  enum : std::uint8_t { unseen, open, done };
  std::vector<std::uint8_t> state(num_types, unseen);
  std::vector<std::uint32_t> path;  // edges from the DFS start to the current type
  std::vector<std::uint32_t> cycle;
  // Recursion depth is bounded by the number of types, which is small.
  std::function<bool(std::uint32_t)> visit = [&](std::uint32_t t) {
    state[t] = open;
    for (std::uint32_t e : out[t]) {
      const std::uint32_t to = edges[e].to;
      path.push_back(e);
      if (state[to] == open) {
        // The cycle is the suffix of `path` that starts at the edge leaving `to`.
        auto first = std::find_if(path.begin(), path.end(), [&](std::uint32_t pe) { return edges[pe].from == to; });
        cycle.assign(first, path.end());
        return true;
      }
      if (state[to] == unseen && visit(to)) return true;
      path.pop_back();
    }
    state[t] = done;
    return false;
  };
  for (std::uint32_t t = 0; t < num_types; ++t)
    if (state[t] == unseen && visit(t)) return cycle;
  return {};
}

namespace {

std::vector<std::uint32_t> topological_order(const TypeDag& g, const std::vector<TypeEdge>& edges) {
  std::vector<std::uint32_t> indegree(g.num_types), order;
  // Smallest ready index first, so that the order (and with it the join numbering) is stable.
  std::priority_queue<std::uint32_t, std::vector<std::uint32_t>, std::greater<>> ready;
  for (std::uint32_t t = 0; t < g.num_types; ++t) {
    indegree[t] = static_cast<std::uint32_t>(g.incoming[t].size());
    if (indegree[t] == 0) ready.push(t);
  }
  while (!ready.empty()) {
    const std::uint32_t t = ready.top();
    ready.pop();
    order.push_back(t);
    for (std::uint32_t e : g.outgoing[t])
      if (--indegree[edges[e].to] == 0) ready.push(edges[e].to);
  }
  return order;
}

// Immediate dominators on a DAG: in topological order, idom(t) is the nearest common
// dominator-tree ancestor of all of t's predecessors (the virtual root for root types).
void compute_dominators(TypeDag& g, const std::vector<TypeEdge>& edges) {
  const std::uint32_t virtual_root = g.num_types;
  std::vector<std::uint32_t> idom(g.num_types + 1, TypeDag::no_owner), depth(g.num_types + 1, 0);
  auto common = [&](std::uint32_t a, std::uint32_t b) {
    while (a != b) {
      if (depth[a] < depth[b]) std::swap(a, b);
      a = idom[a];
    }
    return a;
  };
  for (std::uint32_t t : g.topo_order) {
    if (!g.reachable[t]) continue;
    std::uint32_t dom = g.is_root[t] ? virtual_root : TypeDag::no_owner;
    for (std::uint32_t e : g.incoming[t]) {
      const std::uint32_t p = edges[e].from;
      if (!g.reachable[p]) continue;
      dom = dom == TypeDag::no_owner ? p : common(dom, p);
    }
    idom[t] = dom;
    depth[t] = depth[dom] + 1;
  }
  g.idom.assign(g.num_types, TypeDag::no_owner);
  for (std::uint32_t t = 0; t < g.num_types; ++t)
    if (g.reachable[t] && idom[t] != virtual_root) g.idom[t] = idom[t];
}

// reach[t][u]: u can be reached from t by one or more edges.
std::vector<std::vector<bool>> reachability(const TypeDag& g, const std::vector<TypeEdge>& edges) {
  std::vector<std::vector<bool>> reach(g.num_types, std::vector<bool>(g.num_types, false));
  for (auto it = g.topo_order.rbegin(); it != g.topo_order.rend(); ++it) {
    for (std::uint32_t e : g.outgoing[*it]) {
      const std::uint32_t to = edges[e].to;
      reach[*it][to] = true;
      for (std::uint32_t u = 0; u < g.num_types; ++u)
        if (reach[to][u]) reach[*it][u] = true;
    }
  }
  return reach;
}

void compute_scopes(TypeDag& g, const std::vector<TypeEdge>& edges) {
  const auto reach = reachability(g, edges);
  g.scope_mask.assign(g.num_types, 0);
  for (std::uint32_t j = 0; j < g.joins.size() && j < 64; ++j) {
    const std::uint32_t owner = g.owner(j);
    if (owner == TypeDag::no_owner) continue;
    std::vector<bool> parent(g.num_types, false);
    for (std::uint32_t e : g.incoming[g.joins[j]]) parent[edges[e].from] = true;
    for (std::uint32_t t = 0; t < g.num_types; ++t) {
      if (t == owner || !reach[owner][t]) continue;
      bool leads_to_parent = parent[t];
      for (std::uint32_t u = 0; u < g.num_types && !leads_to_parent; ++u) leads_to_parent = parent[u] && reach[t][u];
      if (leads_to_parent) g.scope_mask[t] |= std::uint64_t{1} << j;
    }
  }
}

}  // namespace

TypeDag analyze_dag(std::uint32_t num_types, const std::vector<TypeEdge>& edges,
                    const std::vector<std::uint32_t>& root_types) {
  TypeDag g;
  g.num_types = num_types;
  g.incoming.resize(num_types);
  g.outgoing.resize(num_types);
  for (std::uint32_t e = 0; e < edges.size(); ++e) {
    g.outgoing[edges[e].from].push_back(e);
    g.incoming[edges[e].to].push_back(e);
  }
  g.is_root.assign(num_types, false);
  for (std::uint32_t r : root_types) g.is_root[r] = true;
  g.topo_order = topological_order(g, edges);

  g.reachable = g.is_root;
  for (std::uint32_t t : g.topo_order)
    if (g.reachable[t])
      for (std::uint32_t e : g.outgoing[t]) g.reachable[edges[e].to] = true;

  g.join_index.assign(num_types, -1);
  for (std::uint32_t t : g.topo_order) {
    if (g.incoming[t].size() >= 2) {
      g.join_index[t] = static_cast<std::int32_t>(g.joins.size());
      g.joins.push_back(t);
    }
  }
  compute_dominators(g, edges);
  compute_scopes(g, edges);
  return g;
}

}  // namespace apiary::synthetic
