// Owners (immediate dominators), scopes and the device tables on hand-made type DAGs.
#include <apiary/synthetic/spec.hpp>
#include <apiary/synthetic/tree_tables.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <set>
#include <string>
#include <utility>
#include <vector>

using namespace apiary::synthetic;
using nlohmann::json;

namespace {

// An individual-mode config with types named in `types` (in that order), edges "A>B" and one
// root entry per name in `roots`.
Spec make_spec(const std::vector<std::string>& types, const std::vector<std::pair<std::string, std::string>>& edges,
               const std::vector<std::string>& roots) {
  json c = {{"dependency_mode", "individual"}, {"task_types", json::array()}, {"transitions", json::array()}, {"roots", json::array()}};
  for (const auto& t : types) c["task_types"].push_back({{"name", t}, {"worker_size", 32}});
  for (const auto& [from, to] : edges) c["transitions"].push_back({{"from", from}, {"to", to}});
  for (const auto& r : roots) c["roots"].push_back({{"type", r}, {"count", 1}});
  return parse_spec(c.dump(), "dag.json");
}

std::uint32_t type(const Spec& s, const std::string& name) { return *s.find_type(name); }

std::string owner_of(const Spec& s, const std::string& join) {
  const std::uint32_t j = static_cast<std::uint32_t>(s.dag.join_index[type(s, join)]);
  return s.types[s.dag.owner(j)].name;
}

// Names of the types in the scope of `join`.
std::set<std::string> scope_of(const Spec& s, const std::string& join) {
  const auto j = s.dag.join_index[type(s, join)];
  std::set<std::string> names;
  for (std::uint32_t t = 0; t < s.types.size(); ++t)
    if ((s.dag.scope_mask[t] >> j) & 1u) names.insert(s.types[t].name);
  return names;
}

}  // namespace

TEST_CASE("diamond: the fork owns the join", "[synthetic][dag]") {
  const Spec s = make_spec({"A", "B", "C", "D"}, {{"A", "B"}, {"A", "C"}, {"B", "D"}, {"C", "D"}}, {"A"});
  REQUIRE(s.dag.joins == std::vector<std::uint32_t>{type(s, "D")});
  CHECK(owner_of(s, "D") == "A");
  CHECK(scope_of(s, "D") == std::set<std::string>{"B", "C"});
  CHECK(s.dag.idom[type(s, "B")] == type(s, "A"));
  CHECK(s.dag.idom[type(s, "A")] == TypeDag::no_owner);  // the virtual root
}

TEST_CASE("the owner is the nearest common dominator, not the root", "[synthetic][dag]") {
  const Spec s = make_spec({"R", "A", "B", "C", "D"}, {{"R", "A"}, {"A", "B"}, {"A", "C"}, {"B", "D"}, {"C", "D"}}, {"R"});
  CHECK(owner_of(s, "D") == "A");
  // Long unequal paths from the fork.
  const Spec t = make_spec({"R", "A", "B", "C", "D", "E"}, {{"R", "A"}, {"A", "B"}, {"B", "C"}, {"C", "E"}, {"R", "D"}, {"D", "E"}}, {"R"});
  CHECK(owner_of(t, "E") == "R");
  CHECK(scope_of(t, "E") == std::set<std::string>{"A", "B", "C", "D"});
}

TEST_CASE("nested joins: inner scope inside outer scope", "[synthetic][dag]") {
  // F joins D and E below B; G joins F and C below A.
  const Spec s = make_spec({"A", "B", "C", "D", "E", "F", "G"},
                           {{"A", "B"}, {"A", "C"}, {"B", "D"}, {"B", "E"}, {"D", "F"}, {"E", "F"}, {"F", "G"}, {"C", "G"}}, {"A"});
  CHECK(owner_of(s, "F") == "B");
  CHECK(owner_of(s, "G") == "A");
  CHECK(scope_of(s, "F") == std::set<std::string>{"D", "E"});
  CHECK(scope_of(s, "G") == std::set<std::string>{"B", "C", "D", "E", "F"});
  const TreeTables tables = build_tree_tables(s);
  CHECK(tables.types[type(s, "D")].scope_mask == 0b11u);
  CHECK(tables.types[type(s, "G")].scope_mask == 0u);
  CHECK(tables.types[type(s, "A")].scope_mask == 0u);
}

TEST_CASE("join of joins with one owner, owner as parent", "[synthetic][dag]") {
  // J1 joins B and C; J2 joins J1 and A itself; both owned by A.
  const Spec s = make_spec({"A", "B", "C", "J1", "J2"}, {{"A", "B"}, {"A", "C"}, {"B", "J1"}, {"C", "J1"}, {"J1", "J2"}, {"A", "J2"}}, {"A"});
  CHECK(owner_of(s, "J1") == "A");
  CHECK(owner_of(s, "J2") == "A");
  CHECK(scope_of(s, "J1") == std::set<std::string>{"B", "C"});
  CHECK(scope_of(s, "J2") == std::set<std::string>{"B", "C", "J1"});
  const TreeTables tables = build_tree_tables(s);
  REQUIRE(tables.joins.size() == 2);
  CHECK(tables.joins[0].join_type == type(s, "J1"));
  CHECK(tables.joins[0].owner_is_parent == 0);
  CHECK(tables.joins[1].join_type == type(s, "J2"));
  CHECK(tables.joins[1].owner_is_parent == 1);
  // A owns both, in topological order, so J1's instance can carry J2's dependency.
  const TypeView& a = tables.types[type(s, "A")];
  REQUIRE(a.num_owned_joins == 2);
  CHECK(tables.owned_joins[a.first_owned_join] == 0);
  CHECK(tables.owned_joins[a.first_owned_join + 1] == 1);
  // Dependency edges are not spawn edges: A spawns only B and C.
  CHECK(a.num_transitions == 2);
  CHECK(tables.types[type(s, "J1")].num_transitions == 0);
}

TEST_CASE("tables: thresholds, keys, grouping and view", "[synthetic][dag]") {
  CHECK(probability_threshold(1.0) == always);
  CHECK(probability_threshold(0.0) == 0);
  CHECK(probability_threshold(0.5) == (1ull << 31));
  CHECK(probability_threshold(0.25) == (1ull << 30));
  json c = json::parse(R"({"dependency_mode": "phases", "seed": 99,
    "task_types": [{"name": "A", "worker_size": 1, "phase": 0, "flops": 7, "shared_bytes": 256},
                   {"name": "B", "worker_size": 64, "phase": 1}, {"name": "C", "worker_size": 1024, "phase": 1}],
    "transitions": [{"from": "B", "to": "C", "probability": 0.75, "count": 3},
                    {"from": "A", "to": "C", "probability": 0.5},
                    {"from": "A", "to": "B", "count": 2}],
    "roots": [{"type": "A", "count": 1}]})");
  // C has two incoming transitions, so it would be a join; make it plain by dropping B -> C.
  c["transitions"].erase(0);
  const Spec s = parse_spec(c.dump(), "t.json");
  const TreeTables tables = build_tree_tables(s);
  const TreeView v = tables.view();
  CHECK(v.num_types == 3);
  CHECK(v.num_joins == 0);
  CHECK(v.seed == 99);
  const TypeView& a = v.types[0];
  CHECK(a.flops == 7);
  CHECK(a.shared_bytes == 256);
  CHECK(a.worker_size == 1);
  CHECK(a.phase == 0);
  REQUIRE(a.num_transitions == 2);
  // Config order within a type; the key is the config index.
  CHECK(v.transitions[a.first_transition].to == 2);
  CHECK(v.transitions[a.first_transition].key == 0);
  CHECK(v.transitions[a.first_transition].threshold == (1ull << 31));
  CHECK(v.transitions[a.first_transition + 1].to == 1);
  CHECK(v.transitions[a.first_transition + 1].key == 1);
  CHECK(v.transitions[a.first_transition + 1].count == 2);
  CHECK(v.transitions[a.first_transition + 1].threshold == always);
  CHECK(v.types[2].worker_size == 1024);
}
