#include <apiary/synthetic/spec.hpp>

#include <apiary/error.hpp>
#include <apiary/json_input.hpp>
#include <apiary/scheduler.hpp>
#include <apiary/synthetic/tree_view.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <fstream>
#include <sstream>

namespace apiary::synthetic {

const char* to_string(DependencyMode mode) {
  return mode == DependencyMode::phases ? "phases" : "individual";
}

std::uint32_t Spec::num_phases() const {
  if (mode != DependencyMode::phases) return 0;
  std::int32_t top = -1;
  for (const auto& t : types) top = std::max(top, t.phase);
  return static_cast<std::uint32_t>(top + 1);
}

std::optional<std::uint32_t> Spec::find_type(std::string_view name) const {
  for (std::uint32_t t = 0; t < types.size(); ++t)
    if (types[t].name == name) return t;
  return std::nullopt;
}

namespace {

using nlohmann::json;

// Built with append: GCC 12 warns falsely (-Wrestrict) about "literal" + std::string.
std::string in_quotes(std::string_view s) { return std::string(1, '"').append(s).append(1, '"'); }

std::string index_path(std::string_view array, std::size_t i) {
  return std::string(array) + "[" + std::to_string(i) + "]";
}

std::string key_path(std::string_view path, std::string_view key) {
  return path.empty() ? std::string(key) : std::string(path) + "." + std::string(key);
}

std::string join_list(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

// Reads one config; every error names the source and the key path.
class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(const std::string& path, const std::string& what) const {
    throw InputError(path.empty() ? source_ : source_ + ": " + path, what);
  }

  void check_keys(const json& obj, const std::string& path, const std::vector<std::string>& allowed) const {
    for (const auto& [key, value] : obj.items()) {
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
        fail(key_path(path, key), "unknown key " + in_quotes(key) + "; allowed keys here: " + join_list(allowed) +
                                      " (check the spelling, see docs/synthetic.md)");
    }
  }

  const json& require(const json& obj, const std::string& path, const std::string& key) const {
    const auto it = obj.find(key);
    if (it == obj.end()) fail(key_path(path, key), "missing required key " + in_quotes(key));
    return *it;
  }

  const json& object(const json& value, const std::string& path) const {
    if (!value.is_object()) fail(path, "must be a JSON object {...}, got " + std::string(value.type_name()));
    return value;
  }

  const json& array(const json& value, const std::string& path) const {
    if (!value.is_array()) fail(path, "must be a JSON array [...], got " + std::string(value.type_name()));
    return value;
  }

  std::string string(const json& value, const std::string& path) const {
    if (!value.is_string()) fail(path, "must be a string, got " + std::string(value.type_name()));
    return value.get<std::string>();
  }

  std::int64_t integer(const json& value, const std::string& path, std::int64_t lo, std::int64_t hi,
                       const std::string& hint) const {
    if (!value.is_number_integer() || (value.is_number_unsigned() && value.get<std::uint64_t>() > std::uint64_t(hi)))
      fail(path, "must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + value.dump() + hint);
    const auto v = value.get<std::int64_t>();
    if (v < lo || v > hi)
      fail(path, "must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + value.dump() + hint);
    return v;
  }

  std::uint64_t unsigned64(const json& value, const std::string& path) const {
    if (!value.is_number_unsigned()) fail(path, "must be a non-negative integer, got " + value.dump());
    return value.get<std::uint64_t>();
  }

  double probability(const json& value, const std::string& path) const {
    if (!value.is_number()) fail(path, "must be a number in [0, 1], got " + value.dump());
    const double p = value.get<double>();
    if (!(p >= 0.0 && p <= 1.0))
      fail(path, "probability " + value.dump() + " is outside [0, 1]; use e.g. 0.5 for 50%");
    return p;
  }

  std::optional<std::uint64_t> capacity(const json& value, const std::string& path) const {
    if (value.is_string() && value.get<std::string>() == "auto") return std::nullopt;
    if (!value.is_number_unsigned() || value.get<std::uint64_t>() == 0)
      fail(path, "must be \"auto\" or a positive integer, got " + value.dump());
    return value.get<std::uint64_t>();
  }

  std::uint32_t type_ref(const Spec& spec, const json& value, const std::string& path) const {
    const std::string name = string(value, path);
    if (auto t = spec.find_type(name)) return *t;
    std::vector<std::string> names;
    for (const auto& t : spec.types) names.push_back(t.name);
    fail(path, "unknown task type " + in_quotes(name) + "; declared in task_types: " + join_list(names));
  }

  const std::string& source() const { return source_; }

 private:
  std::string source_;
};

void read_types(const Reader& r, const json& doc, Spec& spec) {
  const json& types = r.array(r.require(doc, "", "task_types"), "task_types");
  if (types.empty()) r.fail("task_types", "needs at least one task type");
  for (std::size_t i = 0; i < types.size(); ++i) {
    const std::string path = index_path("task_types", i);
    const json& obj = r.object(types[i], path);
    r.check_keys(obj, path, {"name", "worker_size", "shared_bytes", "flops", "phase", "description"});
    TaskTypeSpec t;
    t.name = r.string(r.require(obj, path, "name"), key_path(path, "name"));
    if (t.name.empty()) r.fail(key_path(path, "name"), "must not be empty");
    if (auto other = spec.find_type(t.name))
      r.fail(key_path(path, "name"), "duplicate task type name " + in_quotes(t.name) + " (also task_types[" +
                                         std::to_string(*other) + "]); give every type a unique name");
    t.worker_size = static_cast<std::uint32_t>(r.integer(r.require(obj, path, "worker_size"), key_path(path, "worker_size"), 1,
                                                         max_worker_size, " (threads per task)"));
    if (obj.contains("shared_bytes"))
      t.shared_bytes = static_cast<std::uint32_t>(r.integer(obj["shared_bytes"], key_path(path, "shared_bytes"), 0,
                                                            max_shared_bytes, " (shared memory per task, at most 48 KiB)"));
    if (obj.contains("flops"))
      t.flops = static_cast<std::uint32_t>(r.integer(obj["flops"], key_path(path, "flops"), 0, 0xffffffffll,
                                                     " (floating-point operations per task, below 2^32)"));
    if (spec.mode == DependencyMode::phases) {
      const json& phase = obj.contains("phase") ? obj["phase"] : json();
      if (phase.is_null())
        r.fail(key_path(path, "phase"), "missing required key \"phase\": dependency_mode \"phases\" needs a phase index >= 0 for every task type");
      t.phase = static_cast<std::int32_t>(r.integer(phase, key_path(path, "phase"), 0, 1 << 20, " (phase index)"));
    } else if (obj.contains("phase")) {
      // Allowed so that a config can switch modes by one key; individual mode has no phases.
      r.integer(obj["phase"], key_path(path, "phase"), -1, 1 << 20, " (phase index)");
    }
    spec.types.push_back(std::move(t));
  }
}

void read_transitions(const Reader& r, const json& doc, Spec& spec) {
  if (!doc.contains("transitions")) return;
  const json& transitions = r.array(doc["transitions"], "transitions");
  for (std::size_t i = 0; i < transitions.size(); ++i) {
    const std::string path = index_path("transitions", i);
    const json& obj = r.object(transitions[i], path);
    r.check_keys(obj, path, {"from", "to", "probability", "count"});
    TransitionSpec t;
    t.from = r.type_ref(spec, r.require(obj, path, "from"), key_path(path, "from"));
    t.to = r.type_ref(spec, r.require(obj, path, "to"), key_path(path, "to"));
    if (obj.contains("probability")) t.probability = r.probability(obj["probability"], key_path(path, "probability"));
    if (obj.contains("count"))
      t.count = static_cast<std::uint32_t>(r.integer(obj["count"], key_path(path, "count"), 1, max_transition_count,
                                                     " (Bernoulli trials per parent task)"));
    for (std::size_t k = 0; k < spec.transitions.size(); ++k) {
      if (spec.transitions[k].from == t.from && spec.transitions[k].to == t.to)
        r.fail(path, "duplicate transition " + spec.types[t.from].name + " -> " + spec.types[t.to].name + " (also transitions[" +
                         std::to_string(k) + "]); merge them into one (add the counts)");
    }
    spec.transitions.push_back(t);
  }
}

void read_roots(const Reader& r, const json& doc, Spec& spec) {
  const json& roots = r.array(r.require(doc, "", "roots"), "roots");
  if (roots.empty()) r.fail("roots", "needs at least one entry {\"type\": ..., \"count\": ...}");
  for (std::size_t i = 0; i < roots.size(); ++i) {
    const std::string path = index_path("roots", i);
    const json& obj = r.object(roots[i], path);
    r.check_keys(obj, path, {"type", "count"});
    RootSpec root;
    root.type = r.type_ref(spec, r.require(obj, path, "type"), key_path(path, "type"));
    root.count = static_cast<std::uint64_t>(r.integer(r.require(obj, path, "count"), key_path(path, "count"), 0,
                                                      static_cast<std::int64_t>(max_tasks), " (tasks seeded by the host)"));
    spec.roots.push_back(root);
  }
}

void read_capacities(const Reader& r, const json& doc, Spec& spec) {
  if (!doc.contains("capacities")) return;
  const json& obj = r.object(doc["capacities"], "capacities");
  r.check_keys(obj, "capacities", {"queue", "waiting_storage", "dependencies"});
  if (obj.contains("queue")) spec.capacities.queue = r.capacity(obj["queue"], "capacities.queue");
  if (obj.contains("waiting_storage"))
    spec.capacities.waiting_storage = r.capacity(obj["waiting_storage"], "capacities.waiting_storage");
  if (obj.contains("dependencies")) spec.capacities.dependencies = r.capacity(obj["dependencies"], "capacities.dependencies");
}

void read_document(const Reader& r, const json& doc, Spec& spec) {
  r.object(doc, "");
  r.check_keys(doc, "", {"name", "description", "seed", "dependency_mode", "task_types", "transitions", "roots",
                         "capacities", "scheduler"});
  if (doc.contains("name")) spec.name = r.string(doc["name"], "name");
  if (doc.contains("description")) r.string(doc["description"], "description");
  if (doc.contains("seed")) spec.seed = r.unsigned64(doc["seed"], "seed");
  const std::string mode = r.string(r.require(doc, "", "dependency_mode"), "dependency_mode");
  if (mode == "phases") spec.mode = DependencyMode::phases;
  else if (mode == "individual") spec.mode = DependencyMode::individual;
  else r.fail("dependency_mode", "unknown mode " + in_quotes(mode) + "; use \"phases\" or \"individual\"");
  if (doc.contains("scheduler")) {
    spec.scheduler = r.string(doc["scheduler"], "scheduler");
    try {
      parse_scheduler(spec.scheduler);  // the same names as --scheduler and the runtime config
    } catch (const InputError& e) {
      r.fail("scheduler", e.what());
    }
  }
  read_types(r, doc, spec);
  read_transitions(r, doc, spec);
  read_roots(r, doc, spec);
  read_capacities(r, doc, spec);
}

// --- structural rules -------------------------------------------------------------------------

std::vector<TypeEdge> type_edges(const Spec& spec) {
  std::vector<TypeEdge> edges;
  for (const auto& t : spec.transitions) edges.push_back({t.from, t.to});
  return edges;
}

void check_acyclic(const Reader& r, const Spec& spec, const std::vector<TypeEdge>& edges) {
  const auto cycle = find_cycle(static_cast<std::uint32_t>(spec.types.size()), edges);
  if (cycle.empty()) return;
  std::string names = spec.types[edges[cycle.front()].from].name;
  std::string indices;
  for (std::uint32_t e : cycle) {
    names += " -> " + spec.types[edges[e].to].name;
    indices += (indices.empty() ? "" : ", ") + index_path("transitions", e);
  }
  r.fail(index_path("transitions", cycle.front()), "the transitions form a cycle " + names + " (" + indices +
                                                       "); task types must form a DAG: remove one of these transitions");
}

void check_reachable(const Reader& r, const Spec& spec) {
  for (std::uint32_t t = 0; t < spec.types.size(); ++t) {
    if (!spec.dag.reachable[t])
      r.fail(index_path("task_types", t), "task type " + in_quotes(spec.types[t].name) +
                                              " is never created: it is not a root and no transition from a root type leads to it; "
                                              "add it to \"roots\", add a transition into it, or remove it");
  }
}

void check_joins(const Reader& r, const Spec& spec) {
  const TypeDag& g = spec.dag;
  if (g.joins.size() > max_joins)
    r.fail("transitions", std::to_string(g.joins.size()) + " task types are joins (two or more incoming transitions); at most " +
                              std::to_string(max_joins) + " are supported: merge or remove some joins");
  for (std::uint32_t j = 0; j < g.joins.size(); ++j) {
    const std::uint32_t join = g.joins[j];
    const std::string& name = spec.types[join].name;
    const std::string why = in_quotes(name) + " is a join (it has " + std::to_string(g.incoming[join].size()) +
                            " incoming transitions), so transitions into it are dependencies";
    for (std::uint32_t e : g.incoming[join]) {
      const auto& t = spec.transitions[e];
      if (t.probability != 1.0)
        r.fail(key_path(index_path("transitions", e), "probability"), why + " and need probability 1 (got " +
                                                                         json(t.probability).dump() + "); use probabilities on the edges into its parents instead");
      if (t.count != 1)
        r.fail(key_path(index_path("transitions", e), "count"), why + " and need count 1 (got " + std::to_string(t.count) +
                                                                   "); a join instance waits for all parent tasks, however many there are");
    }
    for (std::size_t i = 0; i < spec.roots.size(); ++i)
      if (spec.roots[i].type == join)
        r.fail(key_path(index_path("roots", i), "type"), in_quotes(name) + " is a join and cannot be a root: its instances are created by its owner; "
                                                                         "seed one of its ancestors instead");
    if (g.owner(j) == TypeDag::no_owner)
      r.fail(index_path("task_types", join), "join " + in_quotes(name) + " has no owner: no single task type lies on every path from the roots "
                                                "to it, so there is no task that could create and count its instances; add a common "
                                                "ancestor type that spawns (directly or indirectly) all of its parents");
  }
  for (std::uint32_t t = 0; t < spec.types.size(); ++t) {
    const auto scopes = static_cast<std::uint32_t>(std::popcount(g.scope_mask[t]));
    if (scopes > max_join_scopes)
      r.fail(index_path("task_types", t), "task type " + in_quotes(spec.types[t].name) + " lies in the scope of " + std::to_string(scopes) +
                                              " joins (it leads to a parent of each); at most " + std::to_string(max_join_scopes) +
                                              " are supported: reduce the nesting of joins");
  }
}

void check_phases(const Reader& r, const Spec& spec) {
  const TypeDag& g = spec.dag;
  auto type_phase = [&](std::uint32_t t) { return spec.types[t].name + " (phase " + std::to_string(spec.types[t].phase) + ")"; };
  for (std::uint32_t e = 0; e < spec.transitions.size(); ++e) {
    const auto& t = spec.transitions[e];
    const std::int32_t from = spec.types[t.from].phase, to = spec.types[t.to].phase;
    if (g.is_join(t.to)) {
      if (to <= from)
        r.fail(index_path("transitions", e), "join " + type_phase(t.to) + " waits for all tasks of its parent " + type_phase(t.from) +
                                                 ", so its phase must be later: set the phase of " + spec.types[t.to].name +
                                                 " to at least " + std::to_string(from + 1));
    } else if (to < from) {
      r.fail(index_path("transitions", e), type_phase(t.to) + " is spawned by " + type_phase(t.from) +
                                               " but runs in an earlier phase, which has already ended: set its phase to at least " +
                                               std::to_string(from));
    }
  }
  for (std::uint32_t j = 0; j < g.joins.size(); ++j) {
    const std::uint32_t join = g.joins[j], owner = g.owner(j);
    if (spec.types[join].phase < spec.types[owner].phase)
      r.fail(key_path(index_path("task_types", join), "phase"), "join " + type_phase(join) + " is created by its owner " + type_phase(owner) +
                                                                    ", so its phase must be at least " + std::to_string(spec.types[owner].phase));
  }
  const std::uint32_t phases = spec.num_phases();
  for (std::uint32_t p = 0; p < phases; ++p) {
    const bool used = std::any_of(spec.types.begin(), spec.types.end(), [&](const TaskTypeSpec& t) { return t.phase == std::int32_t(p); });
    if (!used)
      r.fail("task_types", "no task type is in phase " + std::to_string(p) + "; number the phases 0.." + std::to_string(phases - 1) +
                               " without gaps");
  }
}

}  // namespace

Spec parse_spec(std::string_view json_text, std::string source_name) {
  const Reader r(source_name);
  const json doc = parse_json(json_text, source_name, JsonComments::allowed);
  Spec spec;
  spec.source = source_name;
  read_document(r, doc, spec);
  if (spec.name.empty()) spec.name = std::filesystem::path(source_name).stem().string();

  const auto edges = type_edges(spec);
  check_acyclic(r, spec, edges);
  std::vector<std::uint32_t> root_types;
  for (const auto& root : spec.roots) root_types.push_back(root.type);
  spec.dag = analyze_dag(static_cast<std::uint32_t>(spec.types.size()), edges, root_types);
  check_reachable(r, spec);
  check_joins(r, spec);
  if (spec.mode == DependencyMode::phases) check_phases(r, spec);
  else
    for (auto& t : spec.types) t.phase = -1;
  return spec;
}

Spec load_spec(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(file.string(), "cannot open the config file (check the path)");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_spec(text.str(), file.string());
}

}  // namespace apiary::synthetic
