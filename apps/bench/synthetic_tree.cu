// synthetic_tree: the 11-type synthetic tree of the thesis (configs/synthetic/thesis11_{phases,
// individual}.json) under the current scheduler, traced, compared with a critical-path bound
// computed from the trace.
//
// The bound. The trace records what ran when but not who spawned whom, so the bound is taken at
// the level of task types: every type's mean measured duration (end - start, averaged over its
// tasks in the trace), and the longest chain through the type DAG of the config (root type ->
// transitions -> ... -> leaf type, joins included) weighted with those means:
//   bound = max over root-to-leaf chains of the type DAG of sum over the chain's types of
//           mean duration(type)
// Types that ran no task are left out (no chain passes through them). Nothing is added for
// scheduling: the bound is what the tree would take if every task started the moment its
// predecessor on the chain ended, with every SM free. The span is the trace's first task start
// to its last task end; ratio = span / bound (1 = as fast as the bound; the issue's goal:
// the best scheduler within 1.1). In phases mode the same bound applies; the phase barriers
// count as scheduling cost. Each repeat is traced and checked (trace_check.hpp); the trace of
// the median-span repeat of individual mode is written to Options::trace_dir.
#include "bench_tasks.cuh"

#include "../synthetic/run_tree.cuh"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <numeric>

namespace apiary_bench {
namespace {

namespace syn = apiary::synthetic;

struct Bound {
  double ns = 0;
  std::string chain;  // "A0>B1>C4>J5>F8>J9>G10"
};

Bound critical_path_bound(const syn::Spec& spec, const apiary::Trace& trace) {
  const std::size_t types = spec.types.size();
  std::vector<double> sum(types, 0);
  std::vector<std::uint64_t> count(types, 0);
  std::vector<int> type_of_queue(trace.queue_names.size(), -1);
  for (std::size_t q = 0; q < trace.queue_names.size(); ++q)
    if (auto t = spec.find_type(trace.queue_names[q])) type_of_queue[q] = int(*t);
  for (const apiary::TaskRecord& r : trace.tasks) {
    if (r.queue >= type_of_queue.size() || type_of_queue[r.queue] < 0) continue;
    const int t = type_of_queue[r.queue];
    sum[t] += double(r.end_ns - r.start_ns);
    ++count[t];
  }
  constexpr double none = -1;
  std::vector<double> longest(types, none);  // longest chain ending in the type, including it
  std::vector<int> previous(types, -1);
  for (const std::uint32_t t : spec.dag.topo_order) {
    if (count[t] == 0) continue;
    double before = spec.dag.is_root[t] ? 0 : none;
    for (const std::uint32_t e : spec.dag.incoming[t]) {
      const std::uint32_t p = spec.transitions[e].from;
      if (longest[p] > before) before = longest[p], previous[t] = int(p);
    }
    if (before == none) continue;
    longest[t] = before + sum[t] / double(count[t]);
  }
  Bound b;
  int last = -1;
  for (std::size_t t = 0; t < types; ++t)
    if (longest[t] > b.ns) b.ns = longest[t], last = int(t);
  for (int t = last; t >= 0; t = previous[t]) b.chain = spec.types[t].name + (b.chain.empty() ? "" : ">" + b.chain);
  return b;
}

std::uint64_t span_ns(const apiary::Trace& trace) {
  if (trace.tasks.empty()) return 0;
  std::uint64_t first = std::numeric_limits<std::uint64_t>::max(), last = 0;
  for (const apiary::TaskRecord& r : trace.tasks) first = std::min(first, r.start_ns), last = std::max(last, r.end_ns);
  return last - first;
}

void run_mode(const Options& o, const Sink& sink, const std::string& mode) {
  const std::string name = "thesis11_" + mode;
  const std::string file = (std::filesystem::path(o.synthetic_dir) / (name + ".json")).string();
  const std::string bench = "synthetic_tree";
  syn::Spec spec;
  syn::Plan model;
  try {
    spec = syn::load_spec(file);
    model = syn::plan(spec);
  } catch (const apiary::Error& e) {
    throw Failure(bench, std::string("cannot load ") + file + ": " + e.what());
  }
  syn::TreeRunOptions options;
  options.base = bench_config(o);
  options.scheduler = o.scheduler;
  options.trace = true;

  struct Run {
    double wall_ms;
    std::uint64_t span_ns;
    Bound bound;
    apiary::Trace trace;
    std::uint64_t rounds, launches;
  };
  std::vector<Run> runs;
  std::string problems;
  std::string launch;
  for (int r = -1; r < o.repeats; ++r) {
    syn::TreeRunResult result;
    try {
      result = syn::run_tree(spec, model, options);
    } catch (const apiary::Error& e) {
      throw Failure(bench, name + ": run failed: " + e.what());
    }
    if (!result.report.ok()) throw Failure(bench, name + ": run did not finish:\n" + result.report.format());
    if (!result.counts_match) problems = name + ": task counts differ from the host model";
    const apiary::TraceCheckResult check = apiary::check_trace(result.trace);
    if (!check.ok) problems = name + ": " + apiary::format(check);
    if (r < 0) continue;  // warm-up
    launch = result.report.launch;
    runs.push_back(Run{result.report.wall_ms, span_ns(result.trace), critical_path_bound(spec, result.trace),
                       std::move(result.trace), result.report.rounds, result.report.launches});
  }
  std::vector<std::size_t> order(runs.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](auto a, auto b) { return runs[a].span_ns < runs[b].span_ns; });
  const Run& mid = runs[order[order.size() / 2]];  // the median-span repeat

  Measurement m;
  m.benchmark = bench;
  m.config = {Field::str("tree", "thesis11"), Field::str("mode", mode), Field::str("file", file)};
  m.tasks = model.total_tasks;
  m.launch = launch;
  m.rounds = mid.rounds;
  m.launches = mid.launches;
  std::vector<double> spans, bounds, ratios;
  for (const Run& r : runs) {
    m.ms.push_back(r.wall_ms);
    spans.push_back(double(r.span_ns) * 1e-6);
    bounds.push_back(r.bound.ns * 1e-6);
    ratios.push_back(r.bound.ns > 0 ? double(r.span_ns) / r.bound.ns : 0);
  }
  m.extra = {Field::num("span_ms_median", median(spans)),
             Field::num("span_ms_min", minimum(spans)),
             Field::num("bound_ms_median", median(bounds)),
             Field::num("span_over_bound", median(ratios)),
             Field::num("span_over_bound_min", minimum(ratios)),
             Field::str("critical_chain", mid.bound.chain),
             Field::num("model_critical_path_tasks", model.critical_path),
             Field::num("model_max_depth", model.max_depth),
             Field::str("trace_check", problems.empty() ? "ok" : problems)};
  if (!o.trace_dir.empty() && mode == "individual") {
    const std::string out = (std::filesystem::path(o.trace_dir) /
                             (name + "_" + std::string(apiary::to_string(o.scheduler)) + ".trace.json"))
                                .string();
    std::filesystem::create_directories(o.trace_dir);
    apiary::save_chrome_trace(mid.trace, out);
    m.extra.push_back(Field::str("trace_file", out));
  }
  m.baseline = "none";
  sink(m);
  if (!problems.empty()) throw Failure(bench, problems);
}

}  // namespace

void bench_synthetic_tree(const Options& o, const Sink& sink) {
  // Both modes run even when the first fails its check; the first failure is reported.
  std::string failed;
  for (const char* mode : {"phases", "individual"}) {
    try {
      run_mode(o, sink, mode);
    } catch (const Failure& f) {
      if (failed.empty()) failed = f.what();
    }
  }
  if (!failed.empty()) throw Failure("synthetic_tree", failed);
}

}  // namespace apiary_bench
