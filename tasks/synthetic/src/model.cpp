#include <apiary/synthetic/model.hpp>

#include <apiary/error.hpp>
#include <apiary/synthetic/tree_rules.hpp>
#include <apiary/synthetic/tree_tables.hpp>

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace apiary::synthetic {

std::vector<double> expected_tasks(const Spec& spec) {
  const TypeDag& g = spec.dag;
  std::vector<double> expected(spec.types.size(), 0.0);
  for (const auto& root : spec.roots) expected[root.type] += static_cast<double>(root.count);
  for (std::uint32_t t : g.topo_order) {
    if (g.is_join(t)) {
      expected[t] += expected[g.idom[t]];  // one instance per owner instance
      continue;
    }
    for (std::uint32_t e : g.incoming[t]) {
      const auto& tr = spec.transitions[e];
      expected[t] += expected[tr.from] * tr.count * tr.probability;
    }
  }
  return expected;
}

namespace {

// One entry of the explicit DFS stack: a task to expand, or (release != not_owned) the moment
// after an owner's subtree is done, when its release-th owned join instance is created.
struct Frame {
  std::uint64_t id;
  std::uint32_t type;
  std::uint32_t depth;
  std::uint32_t level;
  std::uint32_t release;
};

// Walks the tree depth first. A join instance is created only after every other descendant
// of its owner instance, so its critical-path level can take the maximum over all parent
// instances below that owner (they all descend from it: the owner dominates them).
class Enumerator {
 public:
  Enumerator(const Spec& spec, const TreeView& view) : spec_(spec), view_(view), join_level_(view.num_joins, 0) {
    parent_joins_.assign(spec.types.size(), 0);
    for (std::uint32_t j = 0; j < spec.dag.joins.size(); ++j)
      for (std::uint32_t e : spec.dag.incoming[spec.dag.joins[j]]) parent_joins_[spec.transitions[e].from] |= 1u << j;
    plan_.tasks_per_type.assign(spec.types.size(), 0);
  }

  Plan run() {
    for (std::uint32_t entry = 0; entry < spec_.roots.size(); ++entry) {
      for (std::uint64_t k = 0; k < spec_.roots[entry].count; ++k) {
        stack_.push_back(Frame{root_item(view_, entry, k).id, spec_.roots[entry].type, 1, 1, not_owned});
        drain();
      }
      plan_.root_tasks += spec_.roots[entry].count;
    }
    return std::move(plan_);
  }

 private:
  void drain() {
    while (!stack_.empty()) {
      const Frame f = stack_.back();
      stack_.pop_back();
      if (f.release != not_owned) release_join(f);
      else expand(f);
    }
  }

  void expand(const Frame& f) {
    if (++plan_.total_tasks > max_tasks)
      throw InputError(spec_.source + ": roots", "the tree has more than " + std::to_string(max_tasks) +
                                                     " tasks; lower root counts, transition counts or probabilities");
    ++plan_.tasks_per_type[f.type];
    plan_.max_depth = std::max(plan_.max_depth, f.depth);
    plan_.critical_path = std::max(plan_.critical_path, f.level);
    for (std::uint32_t mask = parent_joins_[f.type]; mask != 0; mask &= mask - 1) {
      std::uint32_t& level = join_level_[static_cast<std::uint32_t>(__builtin_ctz(mask))];
      level = std::max(level, f.level);
    }
    // Owned joins are released after the rest of the subtree: push them first, last join
    // first, so that a join of joins owned by the same type sees its parent joins' subtrees.
    const TypeView& t = view_.types[f.type];
    for (std::uint32_t k = t.num_owned_joins; k-- > 0;) {
      join_level_[owned_join(view_, f.type, k)] = 0;
      stack_.push_back(Frame{f.id, f.type, f.depth, f.level, k});
    }
    for_each_spawned_child(view_, f.type, f.id, [&](const Child& c) {
      stack_.push_back(Frame{c.id, c.type, f.depth + 1, f.level + 1, not_owned});
    });
  }

  void release_join(const Frame& owner) {
    const std::uint32_t j = owned_join(view_, owner.type, owner.release);
    const std::uint32_t level = std::max(owner.level, join_level_[j]) + 1;
    stack_.push_back(Frame{join_id(owner.id, j), view_.joins[j].join_type, owner.depth + 1, level, not_owned});
  }

  const Spec& spec_;
  const TreeView& view_;
  std::vector<std::uint32_t> join_level_;   // per join: max level of its parents under the current owner
  std::vector<std::uint32_t> parent_joins_; // per type: mask of joins it is a parent of
  std::vector<Frame> stack_;
  Plan plan_;
};

}  // namespace

Plan plan(const Spec& spec) {
  const std::vector<double> expected = expected_tasks(spec);
  double expected_total = 0;
  for (double e : expected) expected_total += e;
  if (expected_total > static_cast<double>(max_tasks)) {
    char text[64];
    std::snprintf(text, sizeof text, "%.3g", expected_total);
    throw InputError(spec.source + ": roots", std::string("the tree is expected to have ") + text + " tasks, at most " +
                                                  std::to_string(max_tasks) + " are supported; lower root counts, transition counts or probabilities");
  }
  const TreeTables tables = build_tree_tables(spec);
  const TreeView view = tables.view();
  Plan p = Enumerator(spec, view).run();
  p.expected_per_type = expected;
  for (std::uint32_t t = 0; t < spec.types.size(); ++t) {
    if (spec.dag.is_join(t)) p.join_instances += p.tasks_per_type[t];
    p.total_flops += p.tasks_per_type[t] * spec.types[t].flops;
    p.queue_needed = std::max(p.queue_needed, p.tasks_per_type[t]);
  }
  if (spec.mode == DependencyMode::individual) {
    p.waiting_storage_needed = p.join_instances;
    p.dependencies_needed = p.join_instances;
  }
  return p;
}

void check_capacities(const Spec& spec, const Plan& p) {
  auto check = [&](const std::optional<std::uint64_t>& given, std::uint64_t needed, const char* key, const std::string& why) {
    if (given && *given < needed)
      throw InputError(spec.source + ": capacities." + key, "is " + std::to_string(*given) + " but the tree needs " + std::to_string(needed) +
                                                                " (" + why + "); raise it to at least " + std::to_string(needed) + " or use \"auto\"");
  };
  std::uint32_t largest = 0;
  for (std::uint32_t t = 0; t < spec.types.size(); ++t)
    if (p.tasks_per_type[t] > p.tasks_per_type[largest]) largest = t;
  check(spec.capacities.queue, p.queue_needed, "queue",
        "task type " + spec.types[largest].name + " has that many tasks, and all of them may be queued at once");
  check(spec.capacities.waiting_storage, p.waiting_storage_needed, "waiting_storage", "one slot per join instance");
  check(spec.capacities.dependencies, p.dependencies_needed, "dependencies", "one counter per join instance");
}

namespace {

std::string capacity_line(const char* key, const std::optional<std::uint64_t>& given, std::uint64_t needed) {
  std::ostringstream s;
  s << "  " << key << ": " << (given ? std::to_string(*given) : std::string("auto")) << " (needs " << needed << ")\n";
  return s.str();
}

std::string role(const Spec& spec, std::uint32_t t) {
  std::string r;
  for (const auto& root : spec.roots)
    if (root.type == t) r = "root";
  if (spec.dag.is_join(t)) r += (r.empty() ? "" : ", ") + std::string("join, owner ") + spec.types[spec.dag.idom[t]].name;
  return r;
}

}  // namespace

std::string format_plan(const Spec& spec, const Plan& p) {
  std::ostringstream s;
  s << "synthetic tree \"" << spec.name << "\" (" << spec.source << ")\n";
  s << "dependency mode: " << to_string(spec.mode);
  if (spec.mode == DependencyMode::phases) s << " (" << spec.num_phases() << " phases)";
  s << ", seed " << spec.seed;
  if (!spec.scheduler.empty()) s << ", scheduler " << spec.scheduler;
  s << "\n\n";
  std::size_t width = 4;
  for (const auto& t : spec.types) width = std::max(width, t.name.size());
  char line[256];
  std::snprintf(line, sizeof line, "%-*s %5s %6s %6s %10s %12s %14s  %s\n", int(width), "type", "phase", "worker", "shared", "flops",
                "tasks", "expected", "role");
  s << line;
  for (std::uint32_t t = 0; t < spec.types.size(); ++t) {
    const auto& ty = spec.types[t];
    const std::string phase = ty.phase >= 0 ? std::to_string(ty.phase) : "-";
    std::snprintf(line, sizeof line, "%-*s %5s %6u %6u %10u %12llu %14.1f  %s\n", int(width), ty.name.c_str(), phase.c_str(),
                  ty.worker_size, ty.shared_bytes, ty.flops, static_cast<unsigned long long>(p.tasks_per_type[t]),
                  p.expected_per_type[t], role(spec, t).c_str());
    std::string row = line;
    row.erase(row.find_last_not_of(" \n") + 1);  // no trailing blanks where the role is empty
    s << row << "\n";
  }
  std::snprintf(line, sizeof line, "%-*s %5s %6s %6s %10s %12llu\n", int(width), "total", "", "", "", "",
                static_cast<unsigned long long>(p.total_tasks));
  s << line << "\n";
  s << "root tasks: " << p.root_tasks << ", join instances: " << p.join_instances << ", total flops: " << p.total_flops << "\n";
  s << "max depth: " << p.max_depth << " tasks, critical path (creations and join waits): " << p.critical_path << " tasks\n";
  s << "capacities:\n";
  s << capacity_line("queue (per type)", spec.capacities.queue, p.queue_needed);
  s << capacity_line("waiting_storage", spec.capacities.waiting_storage, p.waiting_storage_needed);
  s << capacity_line("dependencies", spec.capacities.dependencies, p.dependencies_needed);
  return s.str();
}

}  // namespace apiary::synthetic
