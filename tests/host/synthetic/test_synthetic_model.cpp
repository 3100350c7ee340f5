// The host model against an independent brute-force enumeration, closed forms, determinism,
// the individual-dependency protocol of tree_rules.hpp, and the shipped configs.
#include <apiary/synthetic/model.hpp>
#include <apiary/synthetic/plan_command.hpp>
#include <apiary/synthetic/spec.hpp>
#include <apiary/synthetic/tree_rules.hpp>
#include <apiary/synthetic/tree_tables.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <queue>
#include <sstream>

using namespace apiary::synthetic;
using nlohmann::json;

namespace {

const std::filesystem::path config_dir = APIARY_SYNTHETIC_CONFIG_DIR;

// --- an independent reference: works on the raw config, recomputes owners by brute force ---

class Reference {
 public:
  explicit Reference(const Spec& s) : s_(s), n_(static_cast<std::uint32_t>(s.types.size())), counts_(n_, 0) {
    std::vector<std::uint32_t> indegree(n_, 0);
    for (const auto& t : s.transitions) ++indegree[t.to];
    // Joins are numbered in topological order, smallest type index first among ready types.
    std::priority_queue<std::uint32_t, std::vector<std::uint32_t>, std::greater<>> ready;
    std::vector<std::uint32_t> left = indegree;
    for (std::uint32_t t = 0; t < n_; ++t)
      if (left[t] == 0) ready.push(t);
    while (!ready.empty()) {
      const std::uint32_t t = ready.top();
      ready.pop();
      if (indegree[t] >= 2) joins_.push_back(t);
      for (const auto& e : s.transitions)
        if (e.from == t && --left[e.to] == 0) ready.push(e.to);
    }
    for (std::uint32_t join : joins_) owners_.push_back(immediate_dominator(join));
  }

  std::vector<std::uint64_t> counts() {
    for (std::uint32_t r = 0; r < s_.roots.size(); ++r)
      for (std::uint64_t k = 0; k < s_.roots[r].count; ++k) visit(s_.roots[r].type, root_id(s_.seed, r, k));
    return counts_;
  }

  std::uint32_t owner(std::uint32_t join_type) const {
    return owners_[std::find(joins_.begin(), joins_.end(), join_type) - joins_.begin()];
  }

 private:
  bool reachable_without(std::uint32_t target, std::uint32_t removed) const {
    std::vector<bool> seen(n_, false);
    std::vector<std::uint32_t> todo;
    for (const auto& r : s_.roots)
      if (r.type != removed && !seen[r.type]) seen[r.type] = true, todo.push_back(r.type);
    while (!todo.empty()) {
      const std::uint32_t t = todo.back();
      todo.pop_back();
      for (const auto& e : s_.transitions)
        if (e.from == t && e.to != removed && !seen[e.to]) seen[e.to] = true, todo.push_back(e.to);
    }
    return seen[target];
  }

  // The dominators of a type form a chain; the immediate one is dominated by all the others.
  std::uint32_t immediate_dominator(std::uint32_t t) const {
    std::vector<std::uint32_t> doms;
    for (std::uint32_t d = 0; d < n_; ++d)
      if (d != t && !reachable_without(t, d)) doms.push_back(d);
    for (std::uint32_t d : doms) {
      bool innermost = true;
      for (std::uint32_t other : doms) innermost = innermost && (other == d || !reachable_without(d, other));
      if (innermost) return d;
    }
    return ~0u;
  }

  bool is_join(std::uint32_t t) const { return std::find(joins_.begin(), joins_.end(), t) != joins_.end(); }

  void visit(std::uint32_t type, std::uint64_t id) {
    ++counts_[type];
    for (std::uint32_t key = 0; key < s_.transitions.size(); ++key) {
      const TransitionSpec& e = s_.transitions[key];
      if (e.from != type || is_join(e.to)) continue;
      const double scaled = e.probability * 4294967296.0;
      const std::uint64_t threshold = static_cast<std::uint64_t>(std::floor(scaled + 0.5));
      for (std::uint32_t k = 0; k < e.count; ++k) {
        const std::uint64_t child = child_id(id, key, k);
        if ((apiary::mix64(s_.seed ^ child) >> 32) < threshold) visit(e.to, child);
      }
    }
    for (std::uint32_t j = 0; j < joins_.size(); ++j)
      if (owners_[j] == type) visit(joins_[j], join_id(id, j));
  }

  const Spec& s_;
  std::uint32_t n_;
  std::vector<std::uint64_t> counts_;
  std::vector<std::uint32_t> joins_, owners_;
};

Spec spec_of(const json& c) { return parse_spec(c.dump(), "model.json"); }

json config(const std::string& mode, std::uint64_t seed, const std::vector<json>& types, const std::vector<json>& transitions,
            const std::vector<json>& roots) {
  return {{"dependency_mode", mode}, {"seed", seed}, {"task_types", types}, {"transitions", transitions}, {"roots", roots}};
}
json ty(const std::string& name, int phase = -1) {
  json t = {{"name", name}, {"worker_size", 32}, {"flops", 10}};
  if (phase >= 0) t["phase"] = phase;
  return t;
}
json tr(const std::string& from, const std::string& to, double p = 1.0, int count = 1) {
  return {{"from", from}, {"to", to}, {"probability", p}, {"count", count}};
}
json root(const std::string& type, std::uint64_t count) { return {{"type", type}, {"count", count}}; }

// Nested joins with probabilities, a join of joins owned by the same type, an owner that is a
// parent, and a type in three scopes.
json nested_config(std::uint64_t seed) {
  return config("individual", seed,
                {ty("A"), ty("B"), ty("C"), ty("D"), ty("E"), ty("F"), ty("G"), ty("H"), ty("K")},
                {tr("A", "B", 0.7, 3), tr("A", "C", 0.5, 2), tr("B", "D", 0.6, 3), tr("B", "E", 0.3, 4), tr("D", "F"), tr("E", "F"),
                 tr("F", "G"), tr("C", "G"), tr("G", "H", 0.5, 3), tr("D", "K"), tr("A", "K"), tr("F", "K")},
                {root("A", 40), root("A", 7)});
}

// Closed-form spec list used by several tests.
std::vector<std::filesystem::path> shipped_configs() {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(config_dir))
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

TEST_CASE("probability-1 trees have products of counts", "[synthetic][model]") {
  const Spec chain = spec_of(config("phases", 5, {ty("R", 0), ty("A", 1), ty("B", 1)}, {tr("R", "A", 1.0, 5), tr("A", "B", 1.0, 7)},
                                    {root("R", 3)}));
  const Plan p = plan(chain);
  CHECK(p.tasks_per_type == std::vector<std::uint64_t>{3, 15, 105});
  CHECK(p.total_tasks == 123);
  CHECK(p.root_tasks == 3);
  CHECK(p.join_instances == 0);
  CHECK(p.max_depth == 3);
  CHECK(p.queue_needed == 105);
  CHECK(p.total_flops == 1230);

  const Spec diamond = spec_of(config("individual", 5, {ty("T0"), ty("T1"), ty("T2"), ty("T3")},
                                      {tr("T0", "T1", 1.0, 2), tr("T0", "T2", 1.0, 3), tr("T1", "T3"), tr("T2", "T3")}, {root("T0", 4)}));
  const Plan d = plan(diamond);
  CHECK(d.tasks_per_type == std::vector<std::uint64_t>{4, 8, 12, 4});
  CHECK(d.join_instances == 4);
  CHECK(d.dependencies_needed == 4);
  CHECK(d.waiting_storage_needed == 4);
  CHECK(d.max_depth == 2);      // T3 is created by T0
  CHECK(d.critical_path == 3);  // but waits for T1/T2
  CHECK(d.expected_per_type == std::vector<double>{4, 8, 12, 4});
}

TEST_CASE("probability 0 never fires, 1 always does", "[synthetic][model]") {
  const Spec s = spec_of(config("individual", 1, {ty("R"), ty("A"), ty("B")}, {tr("R", "A", 0.0, 50), tr("R", "B", 1.0, 50)}, {root("R", 100)}));
  const Plan p = plan(s);
  CHECK(p.tasks_per_type == std::vector<std::uint64_t>{100, 0, 5000});
}

TEST_CASE("the model equals a brute-force enumeration", "[synthetic][model]") {
  std::vector<json> configs = {nested_config(1), nested_config(2), nested_config(12345)};
  for (const char* name : {"thesis4_phases.json", "thesis11_phases.json", "thesis11_individual.json"})
    configs.push_back(json::parse(std::ifstream(config_dir / name), nullptr, true, true));
  for (auto& c : configs) {
    for (std::uint64_t seed : {0ull, 1ull, 77ull, 0xdeadbeefcafeull}) {
      c["seed"] = seed;
      const Spec s = spec_of(c);
      Reference ref(s);
      for (std::uint32_t j = 0; j < s.dag.joins.size(); ++j) CHECK(s.dag.owner(j) == ref.owner(s.dag.joins[j]));
      const Plan p = plan(s);
      INFO("seed " << seed << " config " << c.value("name", "nested"));
      CHECK(p.tasks_per_type == ref.counts());
    }
  }
}

TEST_CASE("counts follow the expectation", "[synthetic][model]") {
  const Spec s = spec_of(config("phases", 3, {ty("R", 0), ty("A", 1)}, {tr("R", "A", 0.3, 10)}, {root("R", 10000)}));
  const Plan p = plan(s);
  const double mean = 30000, sigma = std::sqrt(100000 * 0.3 * 0.7);
  CHECK(std::abs(static_cast<double>(p.tasks_per_type[1]) - mean) < 5 * sigma);
  CHECK(p.expected_per_type[1] == Approx(mean));
}

TEST_CASE("determinism: the tree is a function of config and seed", "[synthetic][model]") {
  json c = nested_config(9);
  const Plan a = plan(spec_of(c)), b = plan(spec_of(c));
  CHECK(a.tasks_per_type == b.tasks_per_type);
  CHECK(a.critical_path == b.critical_path);
  c["seed"] = 10;
  CHECK(plan(spec_of(c)).tasks_per_type != a.tasks_per_type);
  // Identities do not depend on how the children of a task are visited.
  const Spec s = spec_of(nested_config(9));
  const TreeTables tables = build_tree_tables(s);
  const TreeView v = tables.view();
  std::vector<std::uint64_t> first, second;
  for_each_child(v, 0, 42, [&](const Child& ch) { first.push_back(ch.id); });
  for_each_child(v, 0, 42, [&](const Child& ch) { second.push_back(ch.id); });
  CHECK(first == second);
  std::sort(first.begin(), first.end());
  CHECK(std::adjacent_find(first.begin(), first.end()) == first.end());  // ids are distinct
}

namespace {

// Runs the individual-dependency protocol of tree_rules.hpp sequentially and checks that each
// dependency balances (spawn_when's n plus retains equals resolves) and that every instance of
// a join's parent type below an owner instance holds that owner's dependency.
class ProtocolCheck {
 public:
  explicit ProtocolCheck(const Spec& s) : s_(s), tables_(build_tree_tables(s)), v_(tables_.view()) {}

  void run() {
    std::array<std::uint32_t, max_joins> current{};
    current.fill(~0u);
    for (std::uint32_t r = 0; r < s_.roots.size(); ++r)
      for (std::uint64_t k = 0; k < s_.roots[r].count; ++k) visit(s_.roots[r].type, root_item(v_, r, k), current);
    for (const Dep& d : deps_) CHECK(d.resolves == d.wait + d.retained);
    CHECK(deps_.size() == plan(s_).join_instances);
  }

 private:
  struct Dep {
    std::uint64_t wait = 0, retained = 0, resolves = 0;
  };

  bool is_parent(std::uint32_t type, std::uint32_t j) const {
    for (std::uint32_t e : s_.dag.incoming[v_.joins[j].join_type])
      if (s_.transitions[e].from == type) return true;
    return false;
  }

  void visit(std::uint32_t type, const Item& item, const std::array<std::uint32_t, max_joins>& current) {
    CHECK(item.num_scopes == static_cast<std::uint32_t>(std::popcount(v_.types[type].scope_mask)));
    for (std::uint32_t j = 0; j < v_.num_joins; ++j) {
      if (!is_parent(type, j) || v_.joins[j].owner_type == type) continue;
      bool holds = false;
      for (std::uint32_t i = 0; i < item.num_scopes; ++i) holds = holds || (item.scope_join[i] == j && item.scope_dep[i] == current[j]);
      CHECK(holds);
    }
    const ScopeCounts c = count_scope_children(v_, type, item);
    for (std::uint32_t i = 0; i < item.num_scopes; ++i) deps_[item.scope_dep[i]].retained += c.held[i];
    std::array<std::uint32_t, max_joins> inner = current;
    std::uint32_t owned[max_joins];
    const TypeView& t = v_.types[type];
    for (std::uint32_t k = 0; k < t.num_owned_joins; ++k) {
      owned[k] = static_cast<std::uint32_t>(deps_.size());
      deps_.push_back({});
      deps_.back().wait = join_wait_count(v_, type, k, c);
      inner[owned_join(v_, type, k)] = owned[k];
    }
    for_each_child(v_, type, item.id, [&](const Child& ch) { visit(ch.type, make_child_item(v_, item, type, owned, ch), inner); });
    for (std::uint32_t i = 0; i < item.num_scopes; ++i) ++deps_[item.scope_dep[i]].resolves;
    for (std::uint32_t k = 0; k < t.num_owned_joins; ++k)
      if (v_.joins[owned_join(v_, type, k)].owner_is_parent) ++deps_[owned[k]].resolves;
  }

  const Spec& s_;
  TreeTables tables_;
  TreeView v_;
  std::vector<Dep> deps_;
};

}  // namespace

TEST_CASE("individual dependencies: every join waits for exactly its spawned parents", "[synthetic][model]") {
  for (std::uint64_t seed : {1ull, 2ull, 3ull}) ProtocolCheck(spec_of(nested_config(seed))).run();
  ProtocolCheck(load_spec(config_dir / "thesis11_individual.json")).run();
  ProtocolCheck(load_spec(config_dir / "thesis4_individual.json")).run();
}

TEST_CASE("nth_trial yields for_each_child's children in its order, a trial at a time, as the device task expands", "[synthetic][model]") {
  std::vector<json> configs = {nested_config(4), nested_config(5)};
  for (const char* name : {"thesis11_phases.json", "thesis11_individual.json"})
    configs.push_back(json::parse(std::ifstream(config_dir / name), nullptr, true, true));
  auto same = [](const Child& a, const Child& b) { return a.type == b.type && a.owned == b.owned && a.id == b.id; };
  for (const json& c : configs) {
    const Spec s = spec_of(c);
    const TreeTables tables = build_tree_tables(s);
    const TreeView v = tables.view();
    // Breadth first from every root, the first 20,000 tasks.
    std::queue<std::pair<std::uint32_t, std::uint64_t>> tasks;
    for (std::uint32_t r = 0; r < s.roots.size(); ++r)
      for (std::uint64_t k = 0; k < s.roots[r].count; ++k) tasks.emplace(s.roots[r].type, root_id(s.seed, r, k));
    std::uint64_t visited = 0, unfired = 0, joins = 0;
    for (; !tasks.empty() && visited < 20000; ++visited) {
      const auto [type, id] = tasks.front();
      tasks.pop();
      std::vector<Child> children, from_trials;
      for_each_child(v, type, id, [&](const Child& ch) { children.push_back(ch); });
      const std::uint32_t trials = num_trials(v, type);
      for (std::uint32_t n = 0; n < trials; ++n) {
        const Trial trial = nth_trial(v, type, id, n);
        if (trial.fired) from_trials.push_back(trial.child);
        else ++unfired;
      }
      for (std::uint32_t n = trials; n < trials + 40; ++n) CHECK_FALSE(nth_trial(v, type, id, n).fired);
      REQUIRE(from_trials.size() == children.size());
      for (std::size_t n = 0; n < children.size(); ++n) CHECK(same(from_trials[n], children[n]));
      const std::uint32_t owned = v.types[type].num_owned_joins;
      for (std::uint32_t k = 0; k < owned; ++k) CHECK(nth_trial(v, type, id, trials - owned + k).fired);
      for (const Child& ch : children) tasks.emplace(ch.type, ch.id);
      joins += owned;
    }
    CHECK(unfired > 0);  // every config has a transition of probability < 1
    if (!s.dag.joins.empty()) CHECK(joins > 0);
  }
}

TEST_CASE("every shipped config loads, validates and plans", "[synthetic][model]") {
  const auto files = shipped_configs();
  CHECK(files.size() >= 6);
  for (const auto& file : files) {
    INFO(file);
    std::ostringstream out, err;
    CHECK(run_plan_command(file, out, err) == 0);
    CHECK(err.str().empty());
    CHECK(out.str().find("total") != std::string::npos);
  }
  // The thesis examples have a few hundred to a few thousand tasks, in both modes alike.
  for (const char* stem : {"thesis4", "thesis11"}) {
    const Plan phases = plan(load_spec(config_dir / (std::string(stem) + "_phases.json")));
    const Plan individual = plan(load_spec(config_dir / (std::string(stem) + "_individual.json")));
    CHECK(phases.tasks_per_type == individual.tasks_per_type);
    CHECK(phases.total_tasks >= 300);
    CHECK(phases.total_tasks <= 5000);
  }
  const Spec t11 = load_spec(config_dir / "thesis11_phases.json");
  CHECK(t11.types.size() == 11);
  CHECK(t11.dag.joins.size() >= 2);
  CHECK(t11.num_phases() >= 4);
}

TEST_CASE("the large config has more than 10^7 tasks of mixed worker sizes", "[synthetic][model]") {
  for (const char* name : {"large_mixed.json", "large_mixed_individual.json"}) {
    const Spec s = load_spec(config_dir / name);
    const auto start = std::chrono::steady_clock::now();
    const Plan p = plan(s);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK(p.total_tasks >= 10'000'000);
    CHECK(seconds < 10.0);
    for (std::uint32_t ws : {1u, 32u, 64u, 256u}) {
      bool used = false;
      for (std::uint32_t t = 0; t < s.types.size(); ++t) used = used || (s.types[t].worker_size == ws && p.tasks_per_type[t] > 0);
      CHECK(used);
    }
  }
}

TEST_CASE("run_plan_command reports errors", "[synthetic][model]") {
  std::ostringstream out, err;
  CHECK(run_plan_command("/nonexistent.json", out, err) == 1);
  CHECK(out.str().empty());
  CHECK(err.str() == "error: /nonexistent.json: cannot open the config file (check the path)\n");
}
