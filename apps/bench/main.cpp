// apiary-bench-runtime: what the runtime's scheduling costs per task, per scheduler.
//
//   apiary-bench-runtime [--quick] [--repeats N] [--json FILE] [--only GROUP[,GROUP...]]
//                        [--block-threads N] [--blocks-per-sm N] [--handoff on|off] [--scheduler NAME[,NAME...]|all] [--no-baselines]
//                        [--graph-rounds N] [--graphs-in-flight N] [--pdc-linger-us N]
//                        [--synthetic-dir DIR] [--trace-dir DIR]
//   apiary-bench-runtime --bound TRACE.json CONFIG.json   (no GPU: the synthetic_tree bound of a
//                                                           saved trace, one JSON line)
//
// Groups: baselines, empty_tasks, empty_tasks_spawned, dependency_resolution,
// dependency_chain, fan_tree, phase_rounds, synthetic_tree, run_overhead. The baselines (host launch, CUDA graph node,
// CUDA graph WHILE loop, plain kernel) run once, first, whenever any group runs (the ratios
// need them) unless --no-baselines; every other group runs once per --scheduler (default
// megakernel; names as apiary::parse_scheduler takes them: megakernel/mk, timesliced/tsk,
// timesliced_graph/tsk_graph, device_controller/pdc, device_controller_wave/pdc_wave) and its records carry "scheduler".
// A group that fails under one scheduler (wrong counts, a run that throws, a scheduler this
// build lacks) leaves an error record naming both and the others still run.
// Every measurement is one JSON object on one line of stdout (and appended to --json FILE);
// a summary record and a human-readable table come last. Exit status: 0 when every check
// passed, 1 when a measurement failed its check, 2 for bad arguments, 3 without a usable GPU.
#include "bench.hpp"

#include <apiary/commit_stamp.hpp>
#include <apiary/error.hpp>
#include <apiary/parse_number.hpp>

#include <cuda_runtime_api.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>

#ifndef APIARY_SOURCE_DIR
#define APIARY_SOURCE_DIR "."
#endif

namespace apiary_bench {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
double minimum(const std::vector<double>& v) { return v.empty() ? 0 : *std::min_element(v.begin(), v.end()); }

bool Options::wants(const std::string& group) const {
  return only.empty() || std::find(only.begin(), only.end(), group) != only.end();
}

namespace {

const char* const groups[] = {"baselines",        "empty_tasks", "empty_tasks_spawned", "dependency_resolution",
                              "dependency_chain", "fan_tree",    "phase_rounds", "synthetic_tree",
                              "run_overhead"};

void usage(std::ostream& out) {
  out << "usage: apiary-bench-runtime [--quick] [--repeats N] [--json FILE] [--only GROUP[,GROUP...]]\n"
         "                            [--block-threads N] [--blocks-per-sm N] [--handoff on|off] [--scheduler NAME[,NAME...]|all] [--no-baselines]\n"
         "                            [--synthetic-dir DIR] [--trace-dir DIR]\n"
         "                            [--graph-rounds N] [--graphs-in-flight N]   (timesliced_graph: Config::timesliced_graph)\n"
         "                            [--pdc-linger-us N]   (device_controller: Config::device_controller.linger_us)\n"
         "  groups:";
  for (const char* g : groups) out << " " << g;
  out << "\n  schedulers:";
  for (const apiary::Scheduler s : apiary::all_schedulers()) out << " " << apiary::to_string(s);
  out << "\n";
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string part; std::getline(in, part, ',');)
    if (!part.empty()) out.push_back(part);
  return out;
}

Options parse(int argc, char** argv) {
  Options o;
  o.synthetic_dir = std::string(APIARY_SOURCE_DIR) + "/configs/synthetic";
  bool repeats_set = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "error: " << arg << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    try {
      if (arg == "--quick") o.quick = true;
      else if (arg == "--repeats") o.repeats = apiary::parse_integer<int>(value(), arg, 1, 1 << 20), repeats_set = true;
      else if (arg == "--json") o.json_file = value();
      else if (arg == "--only") o.only = split(value());
      else if (arg == "--block-threads") o.block_threads = apiary::parse_integer<std::uint32_t>(value(), arg, 0, 1024);
      else if (arg == "--blocks-per-sm") o.blocks_per_sm = apiary::parse_integer<std::uint32_t>(value(), arg, 0, 64);
      else if (arg == "--graph-rounds") o.timesliced_graph.rounds_per_graph = apiary::parse_integer<std::uint32_t>(value(), arg);
      else if (arg == "--graphs-in-flight") o.timesliced_graph.graphs_in_flight = apiary::parse_integer<std::uint32_t>(value(), arg);
      else if (arg == "--pdc-linger-us") o.device_controller.linger_us = apiary::parse_integer<std::uint32_t>(value(), arg);
      else if (arg == "--handoff") {
        const std::string v = value();
        if (v != "on" && v != "off") throw apiary::InputError("--handoff", "takes on or off, not '" + v + "'");
        o.handoff = v == "on";
      }
      else if (arg == "--scheduler") o.schedulers = apiary::parse_schedulers(value());
      else if (arg == "--no-baselines") o.baselines = false;
      else if (arg == "--synthetic-dir") o.synthetic_dir = value();
      else if (arg == "--trace-dir") o.trace_dir = value();
      else if (arg == "--help" || arg == "-h") usage(std::cout), std::exit(0);
      else {
        std::cerr << "error: unknown argument '" << arg << "'\n";
        usage(std::cerr);
        std::exit(2);
      }
    } catch (const apiary::InputError& e) {  // a bad number or an unknown scheduler name
      std::cerr << "error: " << e.what() << "\n";
      usage(std::cerr);
      std::exit(2);
    }
  }
  for (const std::string& g : o.only)
    if (std::find_if(std::begin(groups), std::end(groups), [&](const char* n) { return g == n; }) == std::end(groups)) {
      std::cerr << "error: unknown group '" << g << "'\n";
      usage(std::cerr);
      std::exit(2);
    }
  if (o.repeats < 1) {
    std::cerr << "error: --repeats must be at least 1\n";
    std::exit(2);
  }
  try {
    o.timesliced_graph.check("--graph-rounds/--graphs-in-flight");
    o.device_controller.check("--pdc-linger-us");
  } catch (const apiary::InputError& e) {
    std::cerr << "error: " << e.what() << "\n";
    std::exit(2);
  }
  if (o.quick && !repeats_set) o.repeats = 3;
  return o;
}

// Writes records to stdout and the JSON lines file, and keeps them for the summary.
class Output {
 public:
  Output(const Options& o, std::string device) : device_(std::move(device)), handoff_(o.handoff) {
    if (!o.json_file.empty()) {
      file_.open(o.json_file, std::ios::app);
      if (!file_) throw std::runtime_error("cannot open " + o.json_file + " for appending");
    }
  }

  nlohmann::json header(const std::string& benchmark) const {
    nlohmann::json j = {{"benchmark", benchmark}, {"device", device_}, {"commit", apiary::source_commit()}};
    if (!scheduler_.empty()) j["scheduler"] = scheduler_;
    if (!handoff_) j["handoff"] = "off";  // --handoff off (the default, on, is not repeated)
    return j;
  }
  // The scheduler the following records were measured under ("" = none: baselines, summary).
  void set_scheduler(std::string s) { scheduler_ = std::move(s); }

  void write(const nlohmann::json& record) {
    const std::string line = record.dump();
    std::cout << line << std::endl;
    if (file_.is_open()) file_ << line << std::endl;
    records_.push_back(record);
  }

  const std::vector<nlohmann::json>& records() const { return records_; }

 private:
  std::string device_;
  std::string scheduler_;
  bool handoff_ = true;
  std::ofstream file_;
  std::vector<nlohmann::json> records_;
};

nlohmann::json fields_json(const std::vector<Field>& fields) {
  nlohmann::json j = nlohmann::json::object();
  for (const Field& f : fields) {
    if (f.is_text) j[f.key] = f.text;
    else if (f.number == std::floor(f.number) && std::fabs(f.number) < 9e15) j[f.key] = std::int64_t(f.number);
    else j[f.key] = f.number;
  }
  return j;
}

double number_field(const std::vector<Field>& fields, const std::string& key, double fallback) {
  for (const Field& f : fields)
    if (f.key == key && !f.is_text) return f.number;
  return fallback;
}

int plain_index(double worker_size) { return worker_size == 1 ? 0 : worker_size == 32 ? 1 : worker_size == 256 ? 2 : -1; }

nlohmann::json to_json(const Output& out, const Measurement& m, const Baselines& b, int repeats) {
  nlohmann::json j = out.header(m.benchmark);
  j["config"] = fields_json(m.config);
  const double med = median(m.ms);
  const double ns = m.tasks ? med * 1e6 / double(m.tasks) : 0;
  j["tasks"] = m.tasks;
  j["repeats"] = repeats;
  j["median_ms"] = med;
  j["min_ms"] = minimum(m.ms);
  j["tasks_per_second"] = med > 0 ? double(m.tasks) / (med * 1e-3) : 0.0;
  j["ns_per_task"] = ns;
  j["ms"] = m.ms;
  if (!m.seed_ms.empty()) j["seed_ms_median"] = median(m.seed_ms);
  if (!m.launch.empty()) j["launch"] = m.launch;
  if (m.rounds > 0) {
    // Host (timesliced) or device (controller) rounds of the last timed run;
    // time per round from the median time, which assumes the round count does not change
    // between repeats.
    j["rounds"] = m.rounds;
    j["launches"] = m.launches;
    j["us_per_round"] = med * 1e3 / double(m.rounds);
  }
  const nlohmann::json extra = fields_json(m.extra);  // named: items() refers into it
  for (auto& [key, value] : extra.items()) j[key] = value;
  if (m.baseline == "launch_wait") {
    // A whole run's host time over one launch-and-wait's.
    if (b.launch_wait_ns > 0) {
      j["launch_wait_ns"] = b.launch_wait_ns;
      j["ratio_to_launch_wait"] = ns / b.launch_wait_ns;
    }
  } else if (m.baseline != "none") {
    // apiary's ns per task over the baseline's: below 1 means apiary is cheaper per task.
    if (b.host_launch_ns > 0) {
      j["host_launch_ns"] = b.host_launch_ns;
      j["ratio_to_host_launch"] = ns / b.host_launch_ns;
    }
    if (b.graph_node_ns > 0) {
      j["graph_node_ns"] = b.graph_node_ns;
      j["ratio_to_graph_node"] = ns / b.graph_node_ns;
    }
    if (b.graph_while_ns > 0) {
      j["graph_while_ns"] = b.graph_while_ns;
      j["ratio_to_graph_while"] = ns / b.graph_while_ns;
    }
    const int p = plain_index(number_field(m.config, "worker_size", 0));
    if (p >= 0 && b.plain_kernel_ns[p] > 0) {
      j["plain_kernel_ns"] = b.plain_kernel_ns[p];
      j["ratio_to_plain_kernel"] = ns / b.plain_kernel_ns[p];
    }
  }
  return j;
}

Baselines run_baselines(const Options& o, Output& out, bool& failed) {
  Baselines b;
  auto emit = [&](const Measurement& m) {
    out.write(to_json(out, m, b, o.repeats));
    return median(m.ms) * 1e6 / double(m.tasks);
  };
  b.host_launch_ns = emit(measure_host_launches(o.quick ? 10000 : 100000, o.repeats));
  for (const std::uint32_t nodes : {1000u, 10000u}) {
    if (o.quick && nodes > 1000) break;
    b.graph_node_ns = emit(measure_graph_nodes(nodes, o.repeats));  // the largest graph is the reference
  }
  try {  // conditional graph nodes need CUDA 12.4+ in the driver too
    b.graph_while_ns = emit(measure_graph_while(o.quick ? 1000 : 10000, o.repeats));
  } catch (const std::exception& e) {
    nlohmann::json j = out.header("graph_while");
    j["error"] = e.what();
    out.write(j);
    std::cerr << "error: graph_while: " << e.what() << "\n";
    failed = true;
  }
  b.launch_wait_ns = emit(measure_launch_wait(o.quick ? 200 : 2000, o.repeats));
  // The floor of a host-driven round (the timesliced scheduler's goal is a round below 10 us).
  for (const char* wait : {"event", "mapped", "tsk_round"}) emit(measure_host_round_trips(wait, o.quick ? 500 : 5000, o.repeats));
  // The floor of a device controller wave (the PDC wave's goal is also a round below 10 us).
  for (const char* shape : {"one node", "pdc_wave", "pdc_wave_batched", "pdc_wave_fixed"}) emit(measure_device_graph_relaunch(shape, o.quick ? 1000 : 10000, o.repeats));
  const std::uint64_t tasks = o.quick ? (1ull << 20) : (1ull << 24);
  const std::uint32_t sizes[] = {1, 32, 256};
  for (int i = 0; i < 3; ++i) b.plain_kernel_ns[i] = emit(measure_plain_kernel(sizes[i], tasks, o.repeats));
  return b;
}

// ---- summary -----------------------------------------------------------------------------

constexpr double goal_tasks_per_second = 1e9;
constexpr double goal_chain_ns_per_link = 1000;   // megakernel, chains through a dependency (held, parked, dependency)
constexpr double goal_us_per_round = 10;          // timesliced and device controller rounds
constexpr double goal_span_over_bound = 1.1;      // the best scheduler on the 11-type tree

nlohmann::json summary(const Output& out) {
  // Per scheduler: best empty-task throughput per worker size, chain latency, round cost, and
  // the synthetic tree's span over its critical-path bound per mode.
  nlohmann::json per = nlohmann::json::object();
  nlohmann::json errors = nlohmann::json::array();
  for (const auto& r : out.records()) {
    const std::string sched = r.value("scheduler", "");
    if (r.contains("error")) errors.push_back({{"benchmark", r.value("benchmark", "")}, {"scheduler", sched}});
    if (sched.empty() || !r.contains("median_ms")) continue;
    nlohmann::json& s = per[sched];
    const std::string bench = r.value("benchmark", "");
    if (bench == "empty_tasks") {
      const std::string w = std::to_string(r["config"].value("worker_size", 0));
      nlohmann::json& best = s["best_empty_tasks"];
      if (!best.contains(w) || best[w]["tasks_per_second"].get<double>() < r["tasks_per_second"].get<double>())
        best[w] = {{"tasks_per_second", r["tasks_per_second"]},
                   {"ns_per_task", r["ns_per_task"]},
                   {"block_threads", r["config"]["block_threads"]},
                   {"launch", r.value("launch", "")}};
    } else if (bench == "dependency_chain") {
      // The hand-off (the default) keys the plain mode; without it, "<mode>_queued".
      const std::string mode = r["config"].value("mode", "") + (r["config"].value("handoff", "on") == "off" ? "_queued" : "");
      s["chain_ns_per_link"][mode] = r["ns_per_task"];
      if (r.contains("us_per_round")) s["chain_us_per_round"][mode] = r["us_per_round"];
    } else if (bench == "phase_rounds" && r.contains("us_per_phase_change")) {
      s["us_per_phase_change"] = r["us_per_phase_change"];
      if (r.contains("us_per_round")) s["us_per_round"] = r["us_per_round"];
    } else if (bench == "run_overhead") {
      s["run_overhead_us"] = r["ns_per_task"].get<double>() / 1e3;
    } else if (bench == "synthetic_tree" && r.contains("span_over_bound")) {
      s["synthetic_span_over_bound"][r["config"].value("mode", "")] = r["span_over_bound"];
    }
  }
  nlohmann::json s = out.header("summary");
  s["per_scheduler"] = per;
  if (!errors.empty()) s["errors"] = errors;
  // The megakernel's best empty-task throughput, as before the schedulers were compared.
  if (per.contains("megakernel") && per["megakernel"].contains("best_empty_tasks")) {
    const nlohmann::json& best = per["megakernel"]["best_empty_tasks"];
    s["best_empty_tasks"] = best;
    s["goal"] = "empty tasks per second at worker size 32";
    s["goal_tasks_per_second"] = goal_tasks_per_second;
    if (best.contains("32")) s["goal_met"] = best["32"]["tasks_per_second"].get<double>() >= goal_tasks_per_second;
  }
  nlohmann::json goals = nlohmann::json::object();
  // The chain goal, for each way a link can wait for a dependency (docs/goals.md reads them
  // so, as does tools/bench_schedulers_report.py): held (the link holds the next with
  // spawn_next_when, then resolves), parked (links parked ahead: resolve, release, run) and
  // dependency (the link parks the next, then resolves).
  if (per.contains("megakernel") && per["megakernel"].contains("chain_ns_per_link")) {
    const nlohmann::json& chain = per["megakernel"]["chain_ns_per_link"];
    for (const char* mode : {"held", "parked", "dependency"}) {
      if (!chain.contains(mode)) continue;
      const double ns = chain[mode].get<double>();
      goals[std::string("megakernel_chain_ns_per_link_") + mode] = {
          {"value", ns}, {"goal", goal_chain_ns_per_link}, {"met", ns <= goal_chain_ns_per_link}};
    }
  }
  // A round's cost is measured by the ping-pong, which needs at least one round per phase
  // change: µs per round where the scheduler counts its rounds (the spinning device controller
  // polls several times per phase change), else µs per phase change. A chain is no round
  // measure: its next link is claimed by the kernel still running, in one round.
  for (auto& [sched, v] : per.items()) {
    if (sched == "megakernel" || !v.contains("us_per_phase_change")) continue;
    const double us = v.value("us_per_round", v["us_per_phase_change"].get<double>());
    goals[sched + "_us_per_round"] = {{"value", us}, {"goal", goal_us_per_round}, {"met", us < goal_us_per_round}};
  }
  for (const char* mode : {"phases", "individual"}) {
    double best = 0;
    std::string who;
    for (auto& [sched, v] : per.items()) {
      if (!v.contains("synthetic_span_over_bound") || !v["synthetic_span_over_bound"].contains(mode)) continue;
      const double ratio = v["synthetic_span_over_bound"][mode].get<double>();
      if (ratio > 0 && (who.empty() || ratio < best)) best = ratio, who = sched;
    }
    if (!who.empty())
      goals[std::string("thesis11_") + mode + "_span_over_bound"] = {
          {"value", best}, {"scheduler", who}, {"goal", goal_span_over_bound}, {"met", best <= goal_span_over_bound}};
  }
  s["goals"] = goals;
  return s;
}

std::string describe(const nlohmann::json& config) {
  std::string s;
  for (auto& [key, value] : config.items()) {
    if (!s.empty()) s += " ";
    s += key + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
  }
  return s;
}

std::string format_number(double v, const char* fmt) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

void print_table(const Output& out) {
  std::printf("\n%-22s %-12s %-72s %10s %12s %10s %9s %9s\n", "benchmark", "scheduler", "config", "median ms",
              "tasks/s", "ns/task", "/launch", "/node");
  for (const auto& r : out.records()) {
    const std::string b = r.value("benchmark", "");
    if (b == "summary" || !r.contains("median_ms")) continue;
    auto ratio = [&](const char* key) { return r.contains(key) ? format_number(r[key].get<double>(), "%.2e") : "-"; };
    std::string config = describe(r["config"]);
    if (config.size() > 72) config = config.substr(0, 69) + "...";
    std::printf("%-22s %-12s %-72s %10.3f %12.3e %10.3f %9s %9s\n", b.c_str(), r.value("scheduler", "-").c_str(),
                config.c_str(), r["median_ms"].get<double>(), r["tasks_per_second"].get<double>(),
                r["ns_per_task"].get<double>(), ratio("ratio_to_host_launch").c_str(),
                ratio("ratio_to_graph_node").c_str());
  }
  for (const auto& r : out.records()) {
    if (r.value("benchmark", "") != "summary") continue;
    for (auto& [sched, v] : r["per_scheduler"].items()) {
      if (!v.contains("best_empty_tasks")) continue;
      std::printf("\nbest empty-task throughput, %s:", sched.c_str());
      for (auto& [w, best] : v["best_empty_tasks"].items())
        std::printf("  worker %s: %.3e/s (%.3f ns/task, block %s)", w.c_str(), best["tasks_per_second"].get<double>(),
                    best["ns_per_task"].get<double>(), best["block_threads"].dump().c_str());
    }
    if (r.contains("goal_met"))
      std::printf("\ngoal >= %.0e empty tasks/s at worker size 32 (megakernel): %s", goal_tasks_per_second,
                  r["goal_met"].get<bool>() ? "met" : "NOT met");
    for (auto& [name, g] : r["goals"].items())
      std::printf("\ngoal %s: %.3f (goal %.3g%s%s): %s", name.c_str(), g["value"].get<double>(), g["goal"].get<double>(),
                  g.contains("scheduler") ? ", " : "", g.value("scheduler", "").c_str(),
                  g["met"].get<bool>() ? "met" : "NOT met");
    std::printf("\n");
  }
  std::printf("(/launch, /node: apiary ns per task over one host launch / one CUDA graph node per task)\n");
}

std::string device_name() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0)
    throw apiary::CudaError(std::string("no usable CUDA device (") +
                            (status != cudaSuccess ? cudaGetErrorString(status) : "device count 0") + ")");
  cudaDeviceProp prop{};
  const cudaError_t got = cudaGetDeviceProperties(&prop, 0);
  if (got != cudaSuccess) throw apiary::CudaError(std::string("cudaGetDeviceProperties: ") + cudaGetErrorString(got));
  return prop.name;
}

int run(const Options& options, Output& out) {
  bool failed = false;
  const Baselines b = options.baselines ? run_baselines(options, out, failed) : Baselines{};
  for (const apiary::Scheduler scheduler : options.schedulers) {
    Options o = options;
    o.scheduler = scheduler;
    const std::string name(apiary::to_string(scheduler));
    out.set_scheduler(name);
    const Sink sink = [&](const Measurement& m) { out.write(to_json(out, m, b, o.repeats)); };
    // One group at a time: a failure (a check, a run that throws, a scheduler this build
    // lacks) is recorded and the next group runs. A CUDA error usually poisons the context,
    // so the groups after it fail too, each with its own record.
    auto group = [&](const char* group_name, auto&& body) {
      if (!o.wants(group_name)) return;
      std::string benchmark = group_name, what;
      try {
        body();
        return;
      } catch (const Failure& f) {
        benchmark = f.benchmark(), what = f.what();
      } catch (const std::exception& e) {
        what = e.what();
      }
      nlohmann::json e = out.header(benchmark);
      e["group"] = group_name;
      e["error"] = what;
      out.write(e);
      std::cerr << "error: " << benchmark << " (" << name << "): " << what << "\n";
      failed = true;
    };
    group("empty_tasks", [&] {
      bench_empty_tasks_1(o, sink);
      bench_empty_tasks_32(o, sink);
      bench_empty_tasks_256(o, sink);
    });
    group("empty_tasks_spawned", [&] { bench_spawned_tasks(o, sink); });
    group("dependency_resolution", [&] { bench_dependency_resolution(o, sink); });
    group("dependency_chain", [&] { bench_dependency_chain(o, sink); });
    group("fan_tree", [&] { bench_fan_tree(o, sink); });
    group("phase_rounds", [&] { bench_phase_rounds(o, sink); });
    group("synthetic_tree", [&] { bench_synthetic_tree(o, sink); });
    group("run_overhead", [&] { bench_run_overhead(o, sink); });
  }
  out.set_scheduler("");
  out.write(summary(out));
  print_table(out);
  return failed ? 1 : 0;
}

}  // namespace
}  // namespace apiary_bench

int main(int argc, char** argv) {
  using namespace apiary_bench;
  if (argc == 4 && std::string(argv[1]) == "--bound") {
    try {
      std::cout << trace_bound_json(argv[2], argv[3]) << std::endl;
      return 0;
    } catch (const std::exception& e) {
      std::cerr << "error: " << e.what() << "\n";
      return 2;
    }
  }
  const Options o = parse(argc, argv);
  std::string device;
  try {
    device = device_name();
  } catch (const apiary::CudaError& e) {
    std::cout << nlohmann::json{{"benchmark", "setup"}, {"commit", apiary::source_commit()}, {"error", e.what()}}.dump()
              << std::endl;
    std::cerr << "error: " << e.what() << "; apiary-bench-runtime needs a GPU\n";
    return 3;
  }
  try {
    Output out(o, device);
    return run(o, out);
  } catch (const apiary::CudaError& e) {
    std::cerr << "error: CUDA: " << e.what() << "\n";
    return 3;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
