// apiary-synth: runs a JSON-configured synthetic task tree and compares it with the host model.
//
//   apiary-synth CONFIG --plan                 the host model's task counts (no GPU needed)
//   apiary-synth CONFIG [--scheduler NAME] [--trace FILE.json] [--plot FILE.png|.svg]
//                       [--check] [--runtime-config FILE] [--repeats N]
//   --check records the trace and runs the trace checker without writing the trace.
//
// Exit codes: 0 counts (and trace check) as predicted, 1 mismatch or run error,
// 2 bad input, 3 no usable GPU.
#include "run_tree.cuh"

#include <apiary/parse_number.hpp>
#include <apiary/synthetic/plan_command.hpp>

#include <algorithm>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <optional>
#include <string>

namespace {

using namespace apiary;
using namespace apiary::synthetic;

struct Options {
  std::string config;
  bool plan_only = false;
  std::optional<Scheduler> scheduler;
  std::string trace_file, plot_file, runtime_config;
  bool check = false;  // record and check the trace without writing it
  int repeats = 1;
};

[[noreturn]] void usage(const std::string& problem) {
  std::cerr << "error: " << problem << "\n"
            << "usage: apiary-synth CONFIG [--plan] [--scheduler megakernel|timesliced|timesliced_graph|\n"
               "                    device_controller|device_controller_wave] [--trace FILE.json]\n"
               "                    [--plot FILE.png|FILE.svg] [--check] [--runtime-config FILE]\n"
               "                    [--repeats N]\n";
  std::exit(2);
}

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--plan") o.plan_only = true;
    else if (arg == "--scheduler") o.scheduler = parse_scheduler(value());
    else if (arg == "--trace") o.trace_file = value();
    else if (arg == "--plot") o.plot_file = value();
    else if (arg == "--check") o.check = true;
    else if (arg == "--runtime-config") o.runtime_config = value();
    else if (arg == "--repeats") o.repeats = apiary::parse_integer<int>(value(), "--repeats", 1, 1 << 20);
    else if (!arg.empty() && arg[0] == '-') usage("unknown option " + arg);
    else if (o.config.empty()) o.config = arg;
    else usage("more than one CONFIG given");
  }
  if (o.config.empty()) usage("no CONFIG given");
  return o;
}

void print_counts(const Spec& spec, const Plan& plan, const TreeRunResult& r) {
  std::cout << "  task type          worker    predicted     executed\n";
  for (std::uint32_t t = 0; t < spec.types.size(); ++t) {
    const bool same = r.executed_per_type[t] == plan.tasks_per_type[t];
    std::cout << "  " << std::left << std::setw(18) << spec.types[t].name << std::right << std::setw(7)
              << spec.types[t].worker_size << std::setw(13) << plan.tasks_per_type[t] << std::setw(13)
              << r.executed_per_type[t] << (same ? "" : "   MISMATCH") << "\n";
  }
}

int plot(const std::string& trace_file, const std::string& plot_file, const std::string& title) {
  const std::string tool = std::string(APIARY_TOOLS_DIR) + "/apiary_plot.py";
  std::string command = "python3 '" + tool + "' '" + trace_file + "' --title '" + title + "' ";
  const bool svg = plot_file.size() > 4 && plot_file.substr(plot_file.size() - 4) == ".svg";
  command += svg ? "-o '" + plot_file.substr(0, plot_file.size() - 4) + ".png' --svg '" + plot_file + "'"
                 : "-o '" + plot_file + "'";
  return std::system(command.c_str());
}

int run(const Options& o) {
  if (o.plan_only) return run_plan_command(o.config, std::cout, std::cerr) == 0 ? 0 : 2;
  const Spec spec = load_spec(o.config);
  const Plan model = plan(spec);
  TreeRunOptions options;
  if (!o.runtime_config.empty()) options.base = Config::load(o.runtime_config);
  options.scheduler = o.scheduler.value_or(spec.scheduler.empty() ? options.base.scheduler : parse_scheduler(spec.scheduler));
  options.trace = o.check || !o.trace_file.empty() || !o.plot_file.empty();

  std::cout << "synthetic tree '" << spec.name << "' (" << to_string(spec.mode) << "), " << model.total_tasks
            << " tasks predicted, scheduler " << to_string(options.scheduler) << "\n";
  bool ok = true;
  std::vector<double> times;
  TreeRunResult last;
  for (int rep = 0; rep < o.repeats; ++rep) {
    last = run_tree(spec, model, options);
    times.push_back(last.report.wall_ms);
    ok = ok && last.counts_match;
  }
  std::sort(times.begin(), times.end());
  const double median = times[times.size() / 2];
  std::cout << last.report.format();
  print_counts(spec, model, last);
  std::cout << "  counts " << (ok ? "match the host model" : "DIFFER from the host model") << "\n"
            << "  time " << std::fixed << std::setprecision(3) << median << " ms (median of " << o.repeats
            << "), " << std::setprecision(1) << double(model.total_tasks) / (median * 1e-3) / 1e6 << " M tasks/s\n";

  if (options.trace) {
    const TraceCheckResult check = check_trace(last.trace);
    std::cout << "  " << format(check) << "\n";
    ok = ok && check.ok;
    if (o.trace_file.empty() && o.plot_file.empty()) {
      std::cout << (ok ? "OK" : "FAILED") << "\n";
      return ok ? 0 : 1;
    }
    const std::string trace_file = o.trace_file.empty() ? o.plot_file + ".trace.json" : o.trace_file;
    save_chrome_trace(last.trace, trace_file);
    std::cout << "  trace written to " << trace_file << " (open it in ui.perfetto.dev)\n";
    if (!o.plot_file.empty()) {
      const std::string title = spec.name + " (" + to_string(spec.mode) + ", " + std::string(to_string(options.scheduler)) + ")";
      if (plot(trace_file, o.plot_file, title) != 0) {
        std::cerr << "error: the plot tool failed (python3 with matplotlib needed: bash tools/setup.sh)\n";
        ok = false;
      } else {
        std::cout << "  scheduling plot written to " << o.plot_file << "\n";
      }
    }
  }
  std::cout << (ok ? "OK" : "FAILED") << "\n";
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = [&] {
    try {
      return parse_options(argc, argv);
    } catch (const apiary::InputError& e) {
      usage(e.what());
    }
  }();
  try {
    return run(options);
  } catch (const apiary::InputError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  } catch (const apiary::CudaError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 3;
  } catch (const apiary::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  } catch (const std::bad_alloc&) {
    std::cerr << "error: out of host memory (a smaller tree, or fewer repeats, may fit)\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
