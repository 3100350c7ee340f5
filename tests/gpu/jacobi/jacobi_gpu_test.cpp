// GPU test of the Jacobi baselines (kbk, graph, cusparse) and the task-graph versions
// (stages_phases, stages_deps, checkpoints, autonomous, stages_inline, each under every scheduler) x fp64/fp32
// against the CPU reference of the same precision (poisoned iterates first): the real
// converging matrices (FACTS iteration counts), generated ones (diagonally dominant random,
// power-law, grouped rows, long rows summed by a whole task, more of them than a task lists),
// both task partitions (whole rows; balanced with split rows), both row mappings (staged through
// shared memory, with rows crossing chunks and long rows summed by warps; grouped),
// check_every > 1, max iterations; every Jacobi task runs exactly once per iteration; and the
// error cases, which must end with a clear message (zero diagonal, non-square, divergence) and
// never hang. Skips (77) without a GPU.
#include "jacobi.hpp"
#include "jacobi_gpu.hpp"

#include <apiary/cuda_check.hpp>
#include <apiary/device_runtime.hpp>
#include <apiary/error.hpp>
#include <apiary/sparse/conversions.hpp>
#include <apiary/sparse/generators.hpp>
#include <apiary/sparse/matrix_market.hpp>
#include <gpu_test.hpp>

#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

using namespace apiary;
using namespace apiary::jacobi;

namespace {

int failures = 0, checks = 0;

void expect(bool ok, const std::string& what) {
  ++checks;
  if (!ok) {
    ++failures;
    std::printf("FAIL %s\n", what.c_str());
  }
}

std::string matrix_dir() {
  if (const char* env = std::getenv("APIARY_MATRIX_DIR"); env && *env) return env;
  if (std::filesystem::is_directory("data/matrices")) return "data/matrices";
  return APIARY_DEFAULT_MATRIX_DIR;
}

// The current device's SMs (the held tasks' partition is balanced over them).
long long device_sms() {
  int device = 0;
  APIARY_CUDA_CHECK(cudaGetDevice(&device));
  return static_cast<long long>(apiary::query_device(device).sm_count);
}

sparse::Csr<double> real(const std::string& name) { return sparse::read_csr<double>(matrix_dir() + "/" + name + ".mtx"); }

std::vector<Scheduler> schedulers_for(Version v) {
  return is_task_version(v) ? all_schedulers() : std::vector<Scheduler>{Scheduler::megakernel};
}

// Jacobi tasks a run must execute: T per iteration 0..K; the autonomous version also runs the
// iterations up to the next check iteration as no-ops after a stop (task_graph.cuh).
std::uint64_t expected_jacobi_tasks(Version v, int tasks, int k, const Params& p) {
  int last = k;
  if (v == Version::autonomous && k < p.max_iter) last = std::min((k / p.check_every + 1) * p.check_every, p.max_iter);
  return static_cast<std::uint64_t>(tasks) * (last + 1);
}

struct Only {
  bool baselines = true;
  TaskOptions tasks{};
};

// Every version (under every scheduler) against the CPU reference; returns the reference's
// iteration count.
template <class T>
int check_versions(const std::string& name, const sparse::Csr<double>& a64, const Params& p, int expected_iterations = -1,
                   Status expected_status = Status::converged, const Only& only = {}) {
  const char* prec = sizeof(T) == 4 ? "fp32" : "fp64";
  const sparse::Csr<T> a = sparse::cast_values<T>(a64);
  const std::vector<T> b = ones_rhs(a);
  const Result<T> ref = cpu_jacobi(a, b, p, name);
  const std::string tag = name + " " + prec;
  if (expected_iterations >= 0) expect(ref.iterations == expected_iterations, tag + ": CPU reference iterations " + std::to_string(ref.iterations) + " != " + std::to_string(expected_iterations));
  expect(ref.status == expected_status, tag + ": CPU reference status " + to_string(ref.status));
  GpuJacobi<T> solver(a, b, p, name, only.tasks);
  for (Version v : all_versions) {
    if (!only.baselines && !is_task_version(v)) continue;
    for (Scheduler sched : schedulers_for(v)) {
      solver.set_scheduler(sched);
      const std::string label = is_task_version(v) ? std::string(to_string(v)) + "/" + std::string(to_string(sched))
                                                   : std::string(to_string(v));
      for (int run = 0; run < 2; ++run) {  // twice: a solver (its graph, its runtimes) is reusable
        solver.poison();
        const auto t0 = std::chrono::steady_clock::now();
        solver.run(v);
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        const Result<T> got = solver.result();
        const bool exact = !is_task_version(v) || solver.task_arithmetic_exact();
        const CheckPolicy policy = check_policy<T>(v, solver.group_size(), ref.iterations, exact);
        const Comparison c = compare_results(got, ref, policy.x_tol, policy.iteration_slack);
        expect(c.ok, tag + " " + label + " run " + std::to_string(run) + ": " + c.message);
        if (is_task_version(v)) {
          const std::uint64_t want = expected_jacobi_tasks(v, solver.partition().tasks, got.iterations, p);
          const std::uint64_t ran = solver.last_report().executed("Jacobi");
          // stages_inline with held successors: every task of the iteration after the deciding
          // one runs too (held or spawned before the decision was known), as a no-op: T more.
          const bool held = solver.held_successors();
          expect(!held || sched == Scheduler::megakernel, tag + " " + label + ": held successors outside the megakernel");
          const std::uint64_t noops = held ? static_cast<std::uint64_t>(solver.partition().tasks) : 0;
          expect(ran == want + noops,
                 tag + " " + label + ": " + std::to_string(ran) + " Jacobi tasks ran, expected " + std::to_string(want) +
                     (noops ? " + " + std::to_string(noops) + " no-ops" : std::string()) +
                     " (every task once per iteration)");
          expect(solver.last_report().parked == 0, tag + " " + label + ": tasks left parked");
        }
        if (run == 0)
          std::printf("  %-16s %s %-36s %-18s it %6d (CPU %6d)  err %.2e  %.1f ms\n", name.c_str(), prec, label.c_str(),
                      to_string(got.status), got.iterations, ref.iterations, c.rel_error, ms);
      }
    }
  }
  return ref.iterations;
}

template <class F>
void expect_input_error(const std::string& what, F&& f, const std::string& needle) {
  try {
    f();
    expect(false, what + ": no error");
  } catch (const InputError& e) {
    const std::string msg = e.what();
    std::printf("  %s -> %s\n", what.c_str(), msg.c_str());
    expect(msg.find(needle) != std::string::npos, what + ": message lacks '" + needle + "': " + msg);
  }
}

// A diverging matrix: every version must stop early with a divergence status and the message.
template <class T>
void check_divergence(const std::string& name, const sparse::Csr<double>& a64, const Params& p) {
  const sparse::Csr<T> a = sparse::cast_values<T>(a64);
  const std::vector<T> b = ones_rhs(a);
  const Result<T> ref = cpu_jacobi(a, b, p, name);
  expect(diverged(ref.status), name + ": CPU reference did not report divergence (" + to_string(ref.status) + ")");
  GpuJacobi<T> solver(a, b, p, name);
  for (Version v : all_versions) {
    for (Scheduler sched : schedulers_for(v)) {
      solver.set_scheduler(sched);
      std::string label = to_string(v);
      if (is_task_version(v)) label.append("/").append(to_string(sched));
      const auto t0 = std::chrono::steady_clock::now();
      solver.run(v);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const Result<T> got = solver.result();
      const std::string msg = divergence_message(name, got.status, got.iterations, got.residual, got.min_residual, p);
      std::printf("  %s %s: %s (%.3f s)\n", label.c_str(), sizeof(T) == 4 ? "fp32" : "fp64", msg.c_str(), s);
      expect(diverged(got.status), name + " " + label + ": status " + to_string(got.status));
      expect(got.iterations < p.max_iter, name + " " + label + ": ran to max iterations");
      expect(msg.find("omega < 2 / lambda_max(D^-1 A)") != std::string::npos, name + ": message lacks the omega hint");
      expect(s < 30, name + " " + label + ": took " + std::to_string(s) + " s");
    }
  }
}

}  // namespace

int main() {
  testing::require_gpu_or_skip("apiary_jacobi_gpu_test");
  try {
    std::printf("matrices from %s\n", matrix_dir().c_str());
    Params p;  // omega 1, tol 1e-6, check every iteration
    p.max_iter = 20000;
    std::printf("== real converging matrices (FACTS iteration counts)\n");
    const std::pair<const char*, int> reals[] = {{"lap2D_5pt_n100", 18534}, {"lap3D_7pt_n20", 1013}, {"gr_30_30", 1393}};
    for (const auto& [name, iters] : reals) {
      const auto a = real(name);
      check_versions<double>(name, a, p, iters);
      check_versions<float>(name, a, p);
    }
    std::printf("== generated\n");
    for (const char* spec : {"A3", "A4", "dd:powerlaw:n=20000,avg=6,alpha=1.6,max=2000,seed=3", "lap2d:n=60,perm=1"}) {
      const auto a = generate(spec);
      check_versions<double>(spec, a, p);
      check_versions<float>(spec, a, p);
    }
    std::printf("== task partitions: balanced (split rows), small tasks\n");
    {
      Only balanced{false, TaskOptions{PartitionKind::balanced, 512}};
      const auto pl = generate("dd:powerlaw:n=20000,avg=6,alpha=1.6,max=2000,seed=5");
      check_versions<double>("powerlaw balanced", pl, p, -1, Status::converged, balanced);
      check_versions<float>("powerlaw balanced", pl, p, -1, Status::converged, balanced);
      // One task holding every row: ~60 chunks in a row, sums carried across chunk boundaries.
      Only one_task{false, TaskOptions{PartitionKind::row_blocks, 1 << 30}};
      check_versions<double>("powerlaw one task", pl, p, -1, Status::converged, one_task);
      Only small{false, TaskOptions{PartitionKind::balanced, 48}};
      check_versions<double>("lap3D balanced 48", real("lap3D_7pt_n20"), p, 1013, Status::converged, small);
      Only rows{false, TaskOptions{PartitionKind::row_blocks, 100}};
      check_versions<double>("gr_30_30 rows 100", real("gr_30_30"), p, 1393, Status::converged, rows);
      // stages_inline with every successor spawned by the iteration's last task (no held
      // waits); the 48-non-zero tasks above (more tasks than megakernel blocks) mix both.
      Only spawned{false, TaskOptions{}};
      spawned.tasks.hold_successors = false;
      check_versions<double>("lap3D successors spawned", real("lap3D_7pt_n20"), p, 1013, Status::converged, spawned);
      // Held successors with more tasks than megakernel blocks (200 tasks, 132 one-worker
      // blocks): a block holds one successor, the last task spawns the rest (the mixed case).
      Only mixed{false, TaskOptions{PartitionKind::row_blocks, 268, 1}};
      check_versions<double>("lap3D held and spawned", real("lap3D_7pt_n20"), p, 1013, Status::converged, mixed);
      {
        const auto lap3d = real("lap3D_7pt_n20");
        GpuJacobi<double> solver(lap3d, ones_rhs(lap3d), p, "lap3D", mixed.tasks);
        solver.set_scheduler(Scheduler::megakernel);
        solver.run(Version::stages_inline);
        // One block per SM (the options' blocks_per_sm), one task held per block.
        const long long sms = device_sms();
        expect(solver.held_successors() && sms > 0 && solver.partition().tasks > sms,
               "lap3D held and spawned: successors held with more tasks (" + std::to_string(solver.partition().tasks) +
                   ") than megakernel blocks (" + solver.last_report().launch + ")");
      }
      {
        const auto lap3d = real("lap3D_7pt_n20");
        const std::vector<double> rhs = ones_rhs(lap3d);
        GpuJacobi<double> solver(lap3d, rhs, p, "lap3D", TaskOptions{});
        solver.set_scheduler(Scheduler::megakernel);
        solver.run(Version::stages_inline);
        expect(solver.held_successors(), "lap3D stages_inline under MK: successors held (half-wave tasks)");
        expect(solver.resident_rows(), "lap3D stages_inline under MK: rows resident in the blocks");
        expect(solver.resident_takes() == static_cast<unsigned>(solver.partition().tasks),
               "lap3D stages_inline under MK: every task took its rows into its block once, took " +
                   std::to_string(solver.resident_takes()) + " for " + std::to_string(solver.partition().tasks) + " tasks");
        // Fewer 512-non-zero tasks than SMs (105): one per SM instead (balance_per_sm).
        const long long sms = device_sms();
        expect(solver.partition().tasks <= sms && 20 * solver.partition().tasks >= 19 * sms,
               "lap3D stages_inline under MK: a task on every SM, got " + std::to_string(solver.partition().tasks) +
                   " tasks for " + std::to_string(sms) + " SMs");
        solver.set_scheduler(Scheduler::timesliced);
        solver.run(Version::stages_inline);
        expect(!solver.held_successors(), "lap3D stages_inline under TSK: successors spawned");
        expect(!solver.resident_rows(), "lap3D stages_inline under TSK: rows staged");
      }
      {
        // Tasks sized for resident rows (fit_resident): A5's half-wave fp64 tasks (about 2,000
        // non-zeros) do not fit their staging area; with fitting on, more, smaller tasks are
        // held and every one keeps its rows; with it off, the half-wave tasks stage theirs.
        const auto a5 = generate("A5");
        const std::vector<double> rhs = ones_rhs(a5);
        const Result<double> ref = cpu_jacobi(a5, rhs, p, "A5");
        int fitted_tasks = 0, half_wave_tasks = 0;
        for (const bool fit : {true, false}) {
          TaskOptions o;
          o.fit_resident = fit;
          GpuJacobi<double> solver(a5, rhs, p, "A5", o);
          solver.set_scheduler(Scheduler::megakernel);
          solver.poison();
          solver.run(Version::stages_inline);
          const Comparison c = compare_results(solver.result(), ref, 1e-5, 0);
          const int tasks = solver.partition().tasks;
          const unsigned takes = solver.resident_takes();
          const std::string tag = std::string("A5 fp64 stages_inline MK, fit_resident ") + (fit ? "on" : "off") + ": ";
          expect(c.ok, tag + c.message);
          expect(solver.held_successors(), tag + "successors held");
          expect(solver.last_report().executed("Jacobi") ==
                     expected_jacobi_tasks(Version::stages_inline, tasks, solver.result().iterations, p) + std::uint64_t(tasks),
                 tag + "every task once per iteration, plus one no-op each");
          if (fit) {
            expect(takes == static_cast<unsigned>(tasks), tag + "took " + std::to_string(takes) + " of " + std::to_string(tasks) + " tasks' rows");
            // Balanced over the SMs (balance_per_sm): k blocks per SM for k x SMs tasks, at
            // most 5% of the blocks without a task (285 tasks on 396 blocks before).
            const long long sms = device_sms(), k = (tasks + sms - 1) / sms;
            expect(20 * static_cast<long long>(tasks) >= 19 * k * sms,
                   tag + std::to_string(tasks) + " tasks leave SMs with fewer than " + std::to_string(k) + " (" +
                       solver.last_report().launch + ")");
          } else {
            expect(takes < static_cast<unsigned>(tasks), tag + "the half-wave tasks should not all fit (" + std::to_string(takes) + " of " + std::to_string(tasks) + ")");
          }
          (fit ? fitted_tasks : half_wave_tasks) = tasks;
          std::printf("  A5 fit_resident %s: %d tasks, %u resident, it %d (CPU %d)  err %.2e\n", fit ? "on " : "off", tasks,
                      takes, solver.result().iterations, ref.iterations, c.rel_error);
        }
        expect(fitted_tasks > half_wave_tasks, "A5: fitting makes more, smaller tasks");
      }
      {
        // Resident rows never outlive their run: the same structure with other values (the
        // diagonal + 1), solved right after on the same partition, must not find the first
        // matrix's rows in the blocks (the megakernel zeroes task shared memory at its start).
        const auto lap3d = real("lap3D_7pt_n20");
        sparse::Csr<double> shifted = lap3d;
        for (index_t i = 0; i < shifted.rows; ++i)
          for (index_t e = shifted.row_offsets[i]; e < shifted.row_offsets[i + 1]; ++e)
            if (shifted.col_indices[e] == i) shifted.values[e] += 1;
        GpuJacobi<double> first(lap3d, ones_rhs(lap3d), p, "lap3D", TaskOptions{});
        first.set_scheduler(Scheduler::megakernel);
        first.run(Version::stages_inline);
        const std::vector<double> rhs = ones_rhs(shifted);
        GpuJacobi<double> second(shifted, rhs, p, "lap3D shifted", TaskOptions{});
        second.set_scheduler(Scheduler::megakernel);
        second.run(Version::stages_inline);
        const Result<double> ref = cpu_jacobi(shifted, rhs, p, "lap3D shifted");
        const Comparison c = compare_results(second.result(), ref, 1e-5, 0);
        expect(first.resident_rows() && second.resident_rows(), "lap3D, lap3D shifted: rows resident");
        expect(c.ok, "lap3D shifted after lap3D (resident rows): " + c.message);
        std::printf("  lap3D shifted after lap3D, resident rows: it %d (CPU %d)  err %.2e\n", second.result().iterations,
                    ref.iterations, c.rel_error);
      }
    }
    std::printf("== row mappings: grouped (threads per row, from global memory); staged chunk boundaries\n");
    {
      // Everything above ran with staged rows (the default): power-law rows of up to 2,000
      // non-zeros summed by warps, pieces of split rows, one task of ~60 chunks with carried
      // sums. Here: balanced tasks of 3,000 non-zeros (a chunk boundary inside most tasks, split
      // rows at their ends), and the grouped mapping: its long-row pass (power-law; one task
      // with more long rows than it lists), 4 threads per row (A4), one (lap3D).
      const auto pl = generate("dd:powerlaw:n=20000,avg=6,alpha=1.6,max=2000,seed=5");
      Only staged_balanced{false, TaskOptions{PartitionKind::balanced, 3000, 0, RowMapping::staged}};
      check_versions<double>("powerlaw balanced 3000", pl, p, -1, Status::converged, staged_balanced);
      check_versions<float>("powerlaw balanced 3000", pl, p, -1, Status::converged, staged_balanced);
      Only grouped{false, TaskOptions{PartitionKind::row_blocks, 0, 0, RowMapping::grouped}};
      check_versions<double>("powerlaw grouped", pl, p, -1, Status::converged, grouped);
      check_versions<float>("powerlaw grouped", pl, p, -1, Status::converged, grouped);
      Only grouped_balanced{false, TaskOptions{PartitionKind::balanced, 512, 0, RowMapping::grouped}};
      check_versions<double>("powerlaw grouped balanced", pl, p, -1, Status::converged, grouped_balanced);
      Only grouped_one{false, TaskOptions{PartitionKind::row_blocks, 1 << 30, 0, RowMapping::grouped}};
      check_versions<double>("powerlaw grouped one task", pl, p, -1, Status::converged, grouped_one);
      check_versions<double>("A4 grouped", generate("A4"), p, -1, Status::converged, grouped);
      check_versions<float>("A4 grouped", generate("A4"), p, -1, Status::converged, grouped);
      check_versions<double>("lap3D grouped", real("lap3D_7pt_n20"), p, 1013, Status::converged, grouped);
      // The automatic mapping: grouped for tasks of more than two chunks over short rows,
      // staged when a row is longer than a group sums by itself or the tasks are small.
      const auto lap = generate("lap2d:n=100,perm=1");
      GpuJacobi<double> big_tasks(lap, ones_rhs(lap), p, "lap2d big tasks", TaskOptions{PartitionKind::row_blocks, 5000});
      expect(big_tasks.row_mapping(Version::stages_inline, Scheduler::megakernel) == RowMapping::grouped,
             "auto rows: tasks of 5,000 non-zeros of 5-long rows should be grouped");
      GpuJacobi<double> long_rows(pl, ones_rhs(pl), p, "powerlaw big tasks", TaskOptions{PartitionKind::row_blocks, 5000});
      expect(long_rows.row_mapping(Version::stages_inline, Scheduler::megakernel) == RowMapping::staged,
             "auto rows: tasks with power-law rows should be staged");
      GpuJacobi<double> small_tasks(lap, ones_rhs(lap), p, "lap2d small tasks");
      expect(small_tasks.row_mapping(Version::stages_inline, Scheduler::megakernel) == RowMapping::staged,
             "auto rows: small tasks should be staged");
      Params short_run = p;
      short_run.max_iter = 300;
      check_versions<double>("lap2d big tasks (auto: grouped)", lap, short_run, 300, Status::max_iter,
                             Only{false, TaskOptions{PartitionKind::row_blocks, 5000}});
    }
    std::printf("== parameters: check_every = 7, omega = 0.8, max iterations\n");
    {
      Params q = p;
      q.check_every = 7;
      q.omega = 0.8;
      const auto a = real("lap3D_7pt_n20");
      const int it = check_versions<double>("lap3D_7pt_n20 c7 w0.8", a, q);
      expect(it % 7 == 0, "check_every = 7: iterations " + std::to_string(it) + " not a multiple of 7");
      check_versions<float>("lap3D_7pt_n20 c7 w0.8", a, q);
      Params m = p;
      m.max_iter = 100;
      check_versions<double>("lap2D max 100", real("lap2D_5pt_n100"), m, 100, Status::max_iter);
      check_versions<float>("lap2D max 100", real("lap2D_5pt_n100"), m, 100, Status::max_iter);
    }
    std::printf("== error cases\n");
    {
      auto zd = sparse::laplacian_2d(10, 10);
      for (auto e = zd.row_offsets[42]; e < zd.row_offsets[43]; ++e)
        if (zd.col_indices[e] == 42) zd.values[e] = 0;
      expect_input_error("zero diagonal", [&] { GpuJacobi<double> s(zd, ones_rhs(zd), p, "zero_diag"); }, "row 42");
      sparse::Csr<double> ns;
      ns.rows = 2;
      ns.cols = 3;
      ns.row_offsets = {0, 1, 2};
      ns.col_indices = {0, 1};
      ns.values = {1.0, 1.0};
      expect_input_error("non-square", [&] { GpuJacobi<double> s(ns, std::vector<double>{1, 1}, p, "non_square"); }, "square");
      check_divergence<double>("bcsstk01", real("bcsstk01"), p);
      check_divergence<float>("bcsstk01", real("bcsstk01"), p);
      auto unit = sparse::laplacian_2d(40, 40);  // unit diagonal: lambda_max(D^-1 A) ~ 9
      for (index_t r = 0; r < unit.rows; ++r)
        for (auto e = unit.row_offsets[r]; e < unit.row_offsets[r + 1]; ++e)
          if (unit.col_indices[e] == r) unit.values[e] = 1.0;
      check_divergence<double>("lap2d_unit_diagonal", unit, p);
      Params big = p;
      big.omega = 2.5;
      check_divergence<float>("lap3D_7pt_n20 omega 2.5", real("lap3D_7pt_n20"), big);
    }
  } catch (const std::exception& e) {
    std::printf("FAIL exception: %s\n", e.what());
    return 1;
  }
  std::printf("%d checks, %d failures\n", checks, failures);
  return failures ? 1 : 0;
}
