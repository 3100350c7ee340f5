// apiary-spmv: y = A x with every schedule and the selector, against cuSPARSE CSR ALG1/ALG2,
// on files, generated matrices or a suite. One JSON object per measurement; every GPU result
// is checked against the CPU reference first (poisoned output, fresh random x). Exit status 1
// when any check fails.
#include "bench_common.hpp"
#include "cli.hpp"
#include "cusparse_spmv.hpp"
#include "gather_floor.hpp"
#include "reference.hpp"
#include "spmv.hpp"

#include <apiary/error.hpp>
#include <apiary/sparse/conversions.hpp>
#include <apiary/sparse/device_matrix.hpp>

#include <chrono>
#include <cstdio>
#include <random>

using namespace apiary;
using namespace apiary::spmv;

namespace {

struct Context {
  DeviceInfo device;
  double copy_gbps = 0;
  Options options;
  JsonLines* out = nullptr;
  int failures = 0;
  std::uint64_t seed = 0;
};

nlohmann::json check_json(const CheckResult& c) {
  return {{"ok", c.ok}, {"max_scaled_error", c.max_error}, {"tolerance", c.tolerance}, {"message", c.message}};
}

// The matrix's gather floor (gather_floor.hpp), timed like the schedules: one "spmv_floor"
// record. Checked first: the per-block sums must add up to the sum of the reference y.
template <class T, class Timed>
void measure_floor(Context& ctx, sparse::CsrView<T> a, const sparse::DeviceBuffer<T>& dx, const std::vector<double>& ref,
                   const std::vector<double>& magnitude, const nlohmann::json& base, Timed&& timed) {
  if (a.nnz == 0) return;
  GatherFloor<T> floor(a, dx.data(), ctx.device.sm_count);
  nlohmann::json rec = base;
  rec["bench"] = "spmv_floor";
  rec["schedule"] = "gather_floor";
  const CheckResult c = floor.run_checked(ref, magnitude);
  rec["check"] = check_json(c);
  if (c.ok) {
    timed([&] { floor.run(); }, rec);
  } else {
    ++ctx.failures;
    std::fprintf(stderr, "CHECK FAILED: %s gather floor: %s\n", rec.value("matrix", "?").c_str(), c.message.c_str());
  }
  ctx.out->write(rec);
}

template <class T>
void run_matrix(Context& ctx, const MatrixSource& src, const sparse::Csr<double>& a64, const sparse::RowStats& stats,
                const char* precision) {
  const sparse::Csr<T> a = sparse::cast_values<T>(a64);
  const sparse::DeviceCsr<T> da(a);
  const std::uint64_t x_seed = ctx.seed++;
  const std::vector<T> x = random_vector<T>(static_cast<std::size_t>(a.cols), x_seed);
  std::vector<double> ref, magnitude;
  reference_spmv(a, x, ref, magnitude);
  sparse::DeviceBuffer<T> dx(x), dy(static_cast<std::size_t>(a.rows));
  const int repeats = stats.nnz >= 10'000'000 ? ctx.options.large_repeats : ctx.options.repeats;
  // Compulsory traffic: offsets, indices and values once, x once, y once.
  const double bytes = static_cast<double>(a.rows + 1) * sizeof(sparse::index_t) +
                       static_cast<double>(a.nnz()) * (sizeof(sparse::index_t) + sizeof(T)) +
                       static_cast<double>(a.cols + a.rows) * sizeof(T);

  nlohmann::json base = {{"bench", "spmv"},        {"device", ctx.device.name}, {"commit", git_commit()},
                         {"matrix", src.name},     {"group", src.group},        {"source", src.spec.empty() ? src.file : src.spec},
                         {"precision", precision}, {"x_seed", x_seed},          {"repeats", repeats},
                         {"copy_gbps", ctx.copy_gbps}, {"bytes", bytes}};
  base.update(stats_json(stats));

  auto checked = [&](const std::function<void()>& run, nlohmann::json& rec) {
    dy.fill_bytes(0xff);  // NaN everywhere: a row nobody writes fails the check
    run();
    APIARY_CUDA_CHECK(cudaDeviceSynchronize());
    const CheckResult c = check_result<T>(dy.download(), ref, magnitude);
    rec["check"] = check_json(c);
    if (!c.ok) {
      ++ctx.failures;
      std::fprintf(stderr, "CHECK FAILED: %s %s %s: %s\n", src.name.c_str(), precision, rec.value("schedule", "?").c_str(),
                   c.message.c_str());
    }
    return c.ok;
  };
  auto timed = [&](const std::function<void()>& run, nlohmann::json& rec) {
    const Timing t = time_gpu(run, repeats);
    rec["median_ms"] = t.median_ms;
    rec["min_ms"] = t.min_ms;
    rec["gbps"] = bytes / (t.median_ms * 1e-3) / 1e9;
    rec["copy_fraction"] = rec["gbps"].get<double>() / ctx.copy_gbps;
    return t.median_ms;
  };

  double best_cusparse = -1;
  if (ctx.options.baseline) {
    for (CusparseAlg alg : {CusparseAlg::alg1, CusparseAlg::alg2}) {
      nlohmann::json rec = base;
      rec["schedule"] = name(alg);
      try {
        CusparseSpmv<T> cs(da.view(), dx.data(), dy.data(), alg);
        if (checked([&] { cs.run(); }, rec)) {
          const double ms = timed([&] { cs.run(); }, rec);
          if (best_cusparse < 0 || ms < best_cusparse) best_cusparse = ms;
        }
      } catch (const CudaError& e) {
        rec["error"] = e.what();  // e.g. an algorithm unsupported for this shape
      }
      ctx.out->write(rec);
    }
  }

  measure_floor<T>(ctx, da.view(), dx, ref, magnitude, base, timed);

  for (const std::string& schedule_name : ctx.options.schedules) {
    const bool heuristic = schedule_name == "heuristic";
    const ScheduleKind kind = heuristic ? select_schedule(stats) : *balance::parse_schedule(schedule_name);
    nlohmann::json rec = base;
    rec["schedule"] = schedule_name;
    if (heuristic) {
      rec["selected"] = std::string(balance::name(kind));
      rec["reason"] = selection_reason(stats);
    }
    const auto t0 = std::chrono::steady_clock::now();
    Tuning tuning;
    tuning.fill_device = true;
    tuning.fit_window = !ctx.options.items_per_thread && !ctx.options.iterations;
    if (ctx.options.items_per_thread) tuning.items_per_thread = ctx.options.items_per_thread;
    if (ctx.options.iterations) tuning.iterations = ctx.options.iterations;
    if (ctx.options.split_row_store_max) tuning.split_row_store_max = *ctx.options.split_row_store_max;
    SpmvPlan<T> plan(kind, da.view(), stats, ctx.device.sm_count, tuning);
    rec["setup_ms"] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    rec["config"] = nlohmann::json::parse(plan.describe());
    if (checked([&] { plan.run(dx.data(), dy.data()); }, rec)) {
      const double ms = timed([&] { plan.run(dx.data(), dy.data()); }, rec);
      if (best_cusparse > 0) rec["speedup_vs_best_cusparse"] = best_cusparse / ms;
    }
    ctx.out->write(rec);
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    Context ctx;
    if (!parse_options(argc, argv, ctx.options, "apiary-spmv", true)) return 0;
    ctx.seed = ctx.options.seed ? *ctx.options.seed : std::random_device{}();
    JsonLines out(ctx.options.json);
    ctx.out = &out;
    ctx.device = device_info();
    ctx.copy_gbps = measure_copy_gbps();
    std::fprintf(stderr, "apiary-spmv on %s (%d SMs): device copy %.0f GB/s (theoretical %.0f GB/s)\n",
                 ctx.device.name.c_str(), ctx.device.sm_count, ctx.copy_gbps, ctx.device.peak_gbps);
    out.write({{"bench", "copy"}, {"device", ctx.device.name}, {"commit", git_commit()}, {"copy_gbps", ctx.copy_gbps},
               {"theoretical_gbps", ctx.device.peak_gbps}, {"sm_count", ctx.device.sm_count}});
    for (const MatrixSource& src : ctx.options.sources) {
      const auto t0 = std::chrono::steady_clock::now();
      const sparse::Csr<double> a = load(src);
      const sparse::RowStats stats = sparse::row_stats(a.row_offsets, a.col_indices, a.cols);
      const double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if ((ctx.options.max_nnz >= 0 && stats.nnz > ctx.options.max_nnz) || (ctx.options.min_nnz >= 0 && stats.nnz < ctx.options.min_nnz))
        continue;
      std::fprintf(stderr, "%s: %lld x %lld, %lld nnz (row mean %.1f, std %.1f, max %lld), built in %.1f s\n", src.name.c_str(),
                   static_cast<long long>(stats.rows), static_cast<long long>(stats.cols), static_cast<long long>(stats.nnz),
                   stats.mean, stats.stddev, static_cast<long long>(stats.max), load_s);
      for (const std::string& p : ctx.options.precisions) {
        if (p == "fp32") run_matrix<float>(ctx, src, a, stats, "fp32");
        else run_matrix<double>(ctx, src, a, stats, "fp64");
      }
    }
    if (ctx.failures) {
      std::fprintf(stderr, "%d check(s) FAILED\n", ctx.failures);
      return 1;
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "apiary-spmv: %s\n", e.what());
    return 2;
  }
}
