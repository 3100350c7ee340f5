// apiary-jacobi: the Jacobi baselines (kbk, graph, cusparse) and the apiary task-graph versions
// (stages_phases, stages_deps, checkpoints, autonomous, stages_inline; each under the chosen schedulers) on a
// matrix file, a generator spec or a suite, each checked against the CPU reference of the same
// precision and timed (median of repeats, CUDA events), with the memory-bandwidth roofline per
// iteration and the matrix's gather floor.
#include "bench_common.hpp"
#include "gather_floor.hpp"
#include "jacobi.hpp"
#include "jacobi_gpu.hpp"
#include "reference.hpp"

#include <apiary/error.hpp>
#include <apiary/parse_number.hpp>
#include <apiary/sparse/conversions.hpp>
#include <apiary/sparse/device_matrix.hpp>
#include <apiary/sparse/matrix_market.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

using namespace apiary;
using namespace apiary::jacobi;

namespace {

struct Options {
  std::string matrix, spec, suite, matrix_dir, json;
  std::string precision = "fp64";
  std::string version = "all";
  std::string schedulers = "megakernel";
  TaskOptions tasks;
  Params params;
  int repeats = 5;
  int warmup = 1;
  bool require_convergence = false;
  double check_budget = 1e9;  // nnz * iterations of the CPU reference before it is shortened
  long long max_nnz = -1;
  long long min_nnz = -1;
};

void usage(const char* program) {
  std::printf(
      "usage: %s (--matrix FILE | --generate SPEC | --suite FILE) [options]\n"
      "  --matrix-dir DIR         real matrices of a suite (default $APIARY_MATRIX_DIR, data/matrices,\n"
      "                           ../shared/data/matrices)\n"
      "  --precision fp32|fp64|both   (default fp64)\n"
      "  --version LIST           comma-separated: kbk, graph, cusparse, stages_phases, stages_deps,\n"
      "                           checkpoints, autonomous, stages_inline; or all, baselines, tasks\n"
      "                           (default all)\n"
      "  --scheduler LIST         schedulers of the task versions, comma-separated: megakernel,\n"
      "                           timesliced, timesliced_graph, device_controller,\n"
      "                           device_controller_wave, ... or all\n"
      "                           (default megakernel)\n"
      "  --partition row_blocks|balanced   task partition (default row_blocks: whole rows; balanced\n"
      "                           splits long rows across tasks)\n"
      "  --task-nnz N             non-zeros per Jacobi task (default: at least 512; nnz / (W / 2), half\n"
      "                           a wave of the W Jacobi workers the megakernel holds at once, while\n"
      "                           that is <= 4096, else one wave: nnz / W, or nnz / the workers of\n"
      "                           TSK and PDC-wave when they run; stages_inline under the megakernel:\n"
      "                           lowered until each task's rows stay in its block and the tasks fill\n"
      "                           whole blocks per SM, one per SM, below 512, if fewer than the SMs)\n"
      "  --blocks-per-sm N        megakernel blocks per SM for the task versions (default: the blocks\n"
      "                           the tasks fill, at most as many as fit)\n"
      "  --rows auto|staged|grouped   how a task maps rows to threads. staged: the task's non-zeros\n"
      "                           streamed through shared memory in chunks, a thread per row;\n"
      "                           grouped: 1-32 threads per row reading global memory. auto (default):\n"
      "                           grouped for tasks over 4096 non-zeros of short rows, else staged\n"
      "  --hold-successors on|off stages_inline: each task's successor waits in its block for the\n"
      "                           iteration's last task (megakernel; default on), or off: the last\n"
      "                           task spawns them all\n"
      "  --fit-resident on|off    stages_inline with held successors and automatic task sizes: tasks\n"
      "                           small enough to keep their rows in their blocks, within one wave\n"
      "                           (default on), or off: half a wave, rows staged where they do not fit\n"
      "  --omega W (1)  --tol T (1e-6, relative residual)  --max-iter N (20000)  --check-every C (1)\n"
      "  --repeats R (5)  --json FILE (JSON lines, appended)  --require-convergence\n"
      "  --check-budget W         CPU reference work limit in nnz*iterations (1e9); above it the check\n"
      "                           compares a shortened solve (same parameters, fewer iterations)\n"
      "  --max-nnz N / --min-nnz N   skip suite matrices with more / fewer non-zeros\n"
      "SPEC: apiary::sparse generator specs (lap2d:n=1000, lap3d:nx=..., A3..A6, diagdom:n=..,avg=..,\n"
      "      powerlaw:...), and dd:SPEC = SPEC made strictly diagonally dominant.\n",
      program);
}

std::string default_matrix_dir() {
  if (const char* env = std::getenv("APIARY_MATRIX_DIR"); env && *env) return env;
  if (std::filesystem::is_directory("data/matrices")) return "data/matrices";
  return "../shared/data/matrices";
}

bool parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw InputError(arg, "needs a value");
      return argv[++i];
    };
    // Reals only need to be finite here; what they mean is checked below.
    auto number = [&] { return parse_real(value(), arg, std::numeric_limits<double>::lowest(), std::numeric_limits<double>::max()); };
    auto integer = [&]<class T>(T lo, T hi) { return parse_integer<T>(value(), arg, lo, hi); };
    constexpr int most = 1 << 30;
    auto on_off = [&]() -> bool {
      const std::string v = value();
      if (v == "on") return true;
      if (v == "off") return false;
      throw InputError(arg, "expected on or off, got '" + v + "'");
    };
    if (arg == "--matrix") o.matrix = value();
    else if (arg == "--generate") o.spec = value();
    else if (arg == "--suite") o.suite = value();
    else if (arg == "--matrix-dir") o.matrix_dir = value();
    else if (arg == "--precision") o.precision = value();
    else if (arg == "--version") o.version = value();
    else if (arg == "--scheduler") o.schedulers = value();
    else if (arg == "--partition") o.tasks.partition = parse_partition(value());
    else if (arg == "--task-nnz") o.tasks.task_nnz = integer(std::numeric_limits<int>::min(), most);
    else if (arg == "--blocks-per-sm") o.tasks.blocks_per_sm = integer(0u, 64u);
    else if (arg == "--rows") o.tasks.rows = parse_row_mapping(value());
    else if (arg == "--hold-successors") o.tasks.hold_successors = on_off();
    else if (arg == "--fit-resident") o.tasks.fit_resident = on_off();
    else if (arg == "--omega") o.params.omega = number();
    else if (arg == "--tol") o.params.tol = number();
    else if (arg == "--max-iter") o.params.max_iter = integer(std::numeric_limits<int>::min(), most);
    else if (arg == "--check-every") o.params.check_every = integer(std::numeric_limits<int>::min(), most);
    else if (arg == "--repeats") o.repeats = integer(1, 1 << 20);
    else if (arg == "--json") o.json = value();
    else if (arg == "--require-convergence") o.require_convergence = true;
    else if (arg == "--check-budget") o.check_budget = number();
    else if (arg == "--max-nnz") o.max_nnz = integer(0LL, 1LL << 40);
    else if (arg == "--min-nnz") o.min_nnz = integer(0LL, 1LL << 40);
    else if (arg == "-h" || arg == "--help") { usage(argv[0]); return false; }
    else throw InputError(arg, "unknown option (see --help)");
  }
  if (o.matrix.empty() + o.spec.empty() + o.suite.empty() != 2)
    throw InputError("arguments", "give exactly one of --matrix, --generate, --suite");
  if (o.precision != "fp32" && o.precision != "fp64" && o.precision != "both")
    throw InputError("--precision", "expected fp32, fp64 or both");
  if (o.repeats < 1) throw InputError("--repeats", "must be >= 1");
  validate_params(o.params);
  parse_versions(o.version);
  parse_schedulers(o.schedulers);
  if (o.tasks.task_nnz < 0) throw InputError("--task-nnz", "must be >= 1 (or 0: automatic)");
  if (o.matrix_dir.empty()) o.matrix_dir = default_matrix_dir();
  return true;
}

struct Context {
  spmv::DeviceInfo device;
  double copy_gbps = 0;
  std::string commit;
};

// What an iteration cannot go below on this matrix, measured rather than counted: the SpMV
// gather floor (apps/spmv gather_floor.hpp: values and column indices streamed once and the
// gathers of x they cause, spread evenly, no rows) plus the iteration's row traffic (row
// offsets, b, d, x_k's own entries, x_k+1) at the copy bandwidth. The roofline counts x once;
// scattered columns gather whole 32-byte sectors, which only the floor sees, so on a
// scattered matrix the roofline is out of reach while the floor is not.
struct Floor {
  double spmv_ms = 0;      // the gather floor kernel, median of repeats
  double ms_per_iter = 0;  // spmv_ms + the row traffic
  bool ok = false;         // measured, and its sum matched the CPU's
  bool failed = false;     // its sum did not match (a failure of the run; not reported)
};

template <class T>
Floor measure_floor(const Context& ctx, const sparse::Csr<T>& a, int repeats) {
  Floor f;
  if (a.nnz() == 0) return f;
  const std::vector<T> x = spmv::random_vector<T>(static_cast<std::size_t>(a.cols), std::random_device{}());
  std::vector<double> ref, magnitude;
  spmv::reference_spmv(a, x, ref, magnitude);
  const sparse::DeviceCsr<T> da(a);
  const sparse::DeviceBuffer<T> dx(x);
  spmv::GatherFloor<T> gather(da.view(), dx.data(), ctx.device.sm_count);
  const spmv::CheckResult c = gather.run_checked(ref, magnitude);
  if (!c.ok) {
    std::printf("  gather floor: CHECK FAILED (%s); not reported\n", c.message.c_str());
    f.failed = true;
    return f;
  }
  f.spmv_ms = spmv::time_gpu([&] { gather.run(); }, repeats).median_ms;
  const double row_bytes = sizeof(sparse::index_t) * (a.rows + 1.0) + 4.0 * a.rows * sizeof(T);
  f.ms_per_iter = f.spmv_ms + row_bytes / (ctx.copy_gbps * 1e9) * 1e3;
  f.ok = true;
  return f;
}

template <class T>
int run_version(const Options& o, const Context& ctx, const spmv::MatrixSource& src, const sparse::Csr<T>& a,
                const std::vector<T>& b, const Result<T>& ref, const Params& check, double cpu_ms, const Floor& floor,
                GpuJacobi<T>& solver, GpuJacobi<T>* checker, Version v, Scheduler sched, spmv::JsonLines* json) {
  const char* prec = sizeof(T) == 4 ? "fp32" : "fp64";
  const Params& p = o.params;
  const bool task = is_task_version(v);
  const std::string label = task ? std::string(to_string(v)) + "/" + std::string(to_string(sched)) : to_string(v);
  int failures = 0;
  solver.set_scheduler(sched);
  if (checker) checker->set_scheduler(sched);
    // Checked run (poisoned iterates first).
    GpuJacobi<T>& c = checker ? *checker : solver;
    c.poison();
    c.run(v);
    const Result<T> got = c.result();
    const CheckPolicy policy =
        check_policy<T>(v, c.group_size(), ref.iterations, !task || c.task_arithmetic_exact());
    const Comparison cmp = compare_results(got, ref, policy.x_tol, policy.iteration_slack);
    if (!cmp.ok) {
      ++failures;
      std::printf("  FAIL %s %s %s: %s\n", src.name.c_str(), prec, label.c_str(), cmp.message.c_str());
    }
    // Timed runs of the full solve.
    const spmv::Timing t = spmv::time_gpu([&] { solver.run(v); }, o.repeats, o.warmup);
    const Result<T> r = solver.result();
    const double host_residual = relative_residual(a, b, r.x);
    const double ms_per_iter = t.median_ms / (r.iterations + 1.0);  // k updates + the final residual pass
    const double bytes = static_cast<double>(solver.bytes_per_iteration());
    const double roofline_ms = bytes / (ctx.copy_gbps * 1e9) * 1e3;
    std::printf("  %-32s %-18s it %6d  %9.3f ms  %8.4f ms/it  residual %.3e (host %.3e)  err vs CPU %.2e%s  roofline %.1f%%",
                label.c_str(), to_string(r.status), r.iterations, t.median_ms, ms_per_iter, r.residual, host_residual,
                cmp.rel_error, cmp.ok ? "" : " FAIL", 100.0 * roofline_ms / ms_per_iter);
    if (floor.ok) std::printf("  floor %.1f%%", 100.0 * floor.ms_per_iter / ms_per_iter);
    std::printf("\n");
    if (diverged(r.status)) {
      std::printf("    %s\n", divergence_message(src.name, r.status, r.iterations, r.residual, r.min_residual, p).c_str());
      ++failures;  // a diverged solve makes the exit status non-zero
    }
    if (o.require_convergence && r.status != Status::converged) ++failures;
    if (json) {
      nlohmann::json rec;
      rec["app"] = "jacobi";
      rec["device"] = {{"name", ctx.device.name}, {"sm_count", ctx.device.sm_count}, {"peak_gbps", ctx.device.peak_gbps},
                       {"copy_gbps", ctx.copy_gbps}};
      rec["commit"] = ctx.commit;
      rec["config"] = {{"matrix", src.name}, {"group", src.group}, {"source", src.spec.empty() ? src.file : src.spec},
                       {"rows", a.rows}, {"nnz", a.nnz()}, {"precision", prec}, {"version", to_string(v)},
                       {"scheduler", task ? std::string(to_string(sched)) : std::string("none")},
                       {"omega", p.omega}, {"tol", p.tol}, {"max_iter", p.max_iter}, {"check_every", p.check_every},
                       {"repeats", o.repeats}, {"threads_per_row", solver.group_size()}, {"blocks", solver.blocks()}};
      rec["metrics"] = {{"iterations", r.iterations}, {"status", to_string(r.status)}, {"time_ms", t.median_ms},
                        {"min_ms", t.min_ms}, {"ms_per_iter", ms_per_iter}, {"residual", r.residual},
                        {"residual_host", host_residual}, {"cpu_iterations", ref.iterations},
                        {"cpu_status", to_string(ref.status)}, {"checked_max_iter", check.max_iter},
                        {"error_vs_cpu", cmp.rel_error}, {"check_ok", cmp.ok}, {"cpu_ms", cpu_ms},
                        {"bytes_per_iter", bytes}, {"roofline_ms_per_iter", roofline_ms},
                        {"roofline_ratio", roofline_ms / ms_per_iter}};
      if (floor.ok) {
        rec["metrics"]["gather_floor_spmv_ms"] = floor.spmv_ms;
        rec["metrics"]["floor_ms_per_iter"] = floor.ms_per_iter;
        rec["metrics"]["floor_ratio"] = floor.ms_per_iter / ms_per_iter;  // 1: as fast as the loads alone
      }
      if (task) {
        const Partition& part = solver.partition();
        const Report& rep = solver.last_report();
        rec["config"]["partition"] = to_string(part.kind);
        rec["config"]["task_nnz"] = part.target_nnz;
        rec["config"]["row_mapping"] = to_string(solver.row_mapping());  // "rows" is the matrix's row count
        if (v == Version::stages_inline) {
          rec["config"]["held_successors"] = solver.held_successors();
          rec["config"]["resident_rows"] = solver.resident_rows();
          rec["metrics"]["resident_takes"] = solver.resident_takes();  // = tasks: every task kept its rows
        }
        rec["config"]["tasks"] = part.tasks;
        rec["metrics"]["partition_ms"] = part.build_ms;
        rec["metrics"]["split_rows"] = part.split_rows;
        rec["metrics"]["neighbour_links"] = part.edges;
        rec["metrics"]["tasks_executed"] = rep.total_executed;
        rec["metrics"]["runtime_ms"] = rep.wall_ms;
        rec["metrics"]["rounds"] = rep.rounds;
        rec["metrics"]["phase_changes"] = rep.phase_changes;
        rec["metrics"]["launch"] = rep.launch;  // the scheduler's grid (megakernel blocks follow the tasks)
      }
      json->write(rec);
    }
  return failures;
}

template <class T>
int run_matrix(const Options& o, const Context& ctx, const spmv::MatrixSource& src, const sparse::Csr<double>& a64,
               spmv::JsonLines* json) {
  const char* prec = sizeof(T) == 4 ? "fp32" : "fp64";
  const sparse::Csr<T> a = sparse::cast_values<T>(a64);
  const std::vector<T> b = ones_rhs(a);
  const Params& p = o.params;
  int failures = 0;

  // CPU reference: the full solve, or a shortened one when nnz * max_iter exceeds the budget.
  Params check = p;
  const double work = static_cast<double>(a.nnz()) * (p.max_iter + 1.0);
  if (work > o.check_budget) check.max_iter = std::max(1, static_cast<int>(o.check_budget / std::max<double>(1, a.nnz())));
  const auto t0 = std::chrono::steady_clock::now();
  const Result<T> ref = cpu_jacobi(a, b, check, src.name);
  const double cpu_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%-22s %s rows %d nnz %zu: CPU reference %s after %d iterations (residual %.3e, %.0f ms%s)\n",
              src.name.c_str(), prec, a.rows, a.nnz(), to_string(ref.status), ref.iterations, ref.residual, cpu_ms,
              check.max_iter != p.max_iter ? ", shortened check" : "");
  if (diverged(ref.status) && check.max_iter == p.max_iter)
    std::printf("  %s\n", divergence_message(src.name, ref.status, ref.iterations, ref.residual, ref.min_residual, p).c_str());

  const Floor floor = measure_floor(ctx, a, o.repeats);
  if (floor.failed) ++failures;
  if (floor.ok)
    std::printf("  gather floor %.4f ms per SpMV, %.4f ms per iteration with the row traffic\n", floor.spmv_ms,
                floor.ms_per_iter);
  GpuJacobi<T> solver(a, b, p, src.name, o.tasks);
  std::unique_ptr<GpuJacobi<T>> checker;
  if (check.max_iter != p.max_iter) checker = std::make_unique<GpuJacobi<T>>(a, b, check, src.name, o.tasks);
  std::set<int> partitions_printed;  // by task size: each scheduler sizes its tasks (task_solver.hpp)
  for (Version v : parse_versions(o.version)) {
    const std::vector<Scheduler> schedulers =
        is_task_version(v) ? parse_schedulers(o.schedulers) : std::vector<Scheduler>{Scheduler::megakernel};
    for (Scheduler sched : schedulers) {
      if (is_task_version(v)) {
        const Partition& part = solver.partition(v, sched);
        if (partitions_printed.insert(part.target_nnz).second)
          std::printf("  partition %s for %s: %d tasks of <= ~%d non-zeros (max %d rows, %s rows), %d split rows, "
                      "longest row %d, %lld neighbour links (max %d per task), built on the GPU in %.2f ms\n",
                      to_string(part.kind), std::string(to_string(sched)).c_str(), part.tasks, part.target_nnz,
                      part.max_rows_per_task, to_string(solver.row_mapping(v, sched)), part.split_rows, part.max_row_nnz,
                      part.edges, part.max_neighbors, part.build_ms);
      }
      failures += run_version(o, ctx, src, a, b, ref, check, cpu_ms, floor, solver, checker.get(), v, sched, json);
    }
  }
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  try {
    if (!parse(argc, argv, o)) return 0;
    std::vector<spmv::MatrixSource> sources;
    if (!o.suite.empty()) sources = spmv::read_suite(o.suite, o.matrix_dir);
    else if (!o.spec.empty()) sources.push_back({o.spec, o.spec, "", "generated"});
    else sources.push_back({std::filesystem::path(o.matrix).stem().string(), "", o.matrix, "file"});

    Context ctx;
    ctx.device = spmv::device_info();
    ctx.copy_gbps = spmv::measure_copy_gbps(std::size_t{1} << 29, 9);
    ctx.commit = spmv::git_commit();
    std::printf("device %s (%d SMs), copy bandwidth %.0f GB/s, commit %s\n", ctx.device.name.c_str(), ctx.device.sm_count,
                ctx.copy_gbps, ctx.commit.c_str());
    std::unique_ptr<spmv::JsonLines> json;
    if (!o.json.empty()) json = std::make_unique<spmv::JsonLines>(o.json);

    int failures = 0, errors = 0;
    for (const auto& src : sources) {
      try {
        const sparse::Csr<double> a = src.spec.empty() ? sparse::read_csr<double>(src.file) : jacobi::generate(src.spec);
        if (o.max_nnz >= 0 && static_cast<long long>(a.nnz()) > o.max_nnz) {
          std::printf("%s: skipped (%zu non-zeros > --max-nnz)\n", src.name.c_str(), a.nnz());
          continue;
        }
        if (o.min_nnz >= 0 && static_cast<long long>(a.nnz()) < o.min_nnz) {
          std::printf("%s: skipped (%zu non-zeros < --min-nnz)\n", src.name.c_str(), a.nnz());
          continue;
        }
        if (o.precision != "fp32") failures += run_matrix<double>(o, ctx, src, a, json.get());
        if (o.precision != "fp64") failures += run_matrix<float>(o, ctx, src, a, json.get());
      } catch (const InputError& e) {
        // Bad input (zero diagonal, non-square, unreadable): reported, the suite goes on.
        std::fprintf(stderr, "error: %s\n", e.what());
        ++errors;
      }
    }
    if (failures) std::fprintf(stderr, "%d failure(s): failed checks or diverged solves\n", failures);
    return failures || errors ? 1 : 0;
  } catch (const InputError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 3;
  }
}
