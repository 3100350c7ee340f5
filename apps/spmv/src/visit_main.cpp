// apiary-visit: the Busato-Bombieri benchmark. Every work unit of a CSR workload is updated
// once with its work item's id, under every schedule. Each schedule is first run in checking
// mode (per-unit visit counters; every unit must be visited exactly once and hold the right
// id), then timed without counters. One JSON object per measurement; exit 1 on a failed check.
#include "bench_common.hpp"
#include "cli.hpp"
#include "spmv.hpp"
#include "visit.hpp"

#include <apiary/error.hpp>
#include <apiary/sparse/device_buffer.hpp>

#include <chrono>
#include <cstdio>

using namespace apiary;
using namespace apiary::spmv;

int main(int argc, char** argv) {
  try {
    Options options;
    if (!parse_options(argc, argv, options, "apiary-visit", false)) return 0;
    JsonLines out(options.json);
    const DeviceInfo device = device_info();
    const double copy_gbps = measure_copy_gbps();
    int failures = 0;
    for (const MatrixSource& src : options.sources) {
      const sparse::Csr<double> a = load(src);
      const sparse::RowStats stats = sparse::row_stats(a.row_offsets, a.cols);
      if ((options.max_nnz >= 0 && stats.nnz > options.max_nnz) || (options.min_nnz >= 0 && stats.nnz < options.min_nnz)) continue;
      std::fprintf(stderr, "%s: %lld rows, %lld units (mean %.1f, std %.1f, max %lld)\n", src.name.c_str(),
                   static_cast<long long>(stats.rows), static_cast<long long>(stats.nnz), stats.mean, stats.stddev,
                   static_cast<long long>(stats.max));
      sparse::DeviceBuffer<index_t> offsets(a.row_offsets);
      sparse::DeviceBuffer<index_t> units(static_cast<std::size_t>(stats.nnz));
      sparse::DeviceBuffer<unsigned> visits(static_cast<std::size_t>(stats.nnz));
      // Expected id of every unit.
      std::vector<index_t> expected(static_cast<std::size_t>(stats.nnz));
      for (index_t r = 0; r < a.rows; ++r)
        for (index_t k = a.row_offsets[r]; k < a.row_offsets[r + 1]; ++k) expected[k] = r;
      const int repeats = stats.nnz >= 10'000'000 ? options.large_repeats : options.repeats;
      // Compulsory traffic: read the prefix-sum array once, write every unit once.
      const double bytes = static_cast<double>(a.rows + 1) * sizeof(index_t) + static_cast<double>(stats.nnz) * sizeof(index_t);
      // The geometry of SpMV plans with 4-byte values (same staging size as the unit ids).
      const sparse::CsrView<float> shape{a.rows, a.cols, static_cast<index_t>(stats.nnz), offsets.data(), nullptr, nullptr};
      for (const std::string& schedule_name : options.schedules) {
        const ScheduleKind kind = *balance::parse_schedule(schedule_name);
        const SpmvPlan<float> plan(kind, shape, stats, device.sm_count);
        nlohmann::json rec = {{"bench", "visit"}, {"device", device.name}, {"commit", git_commit()}, {"matrix", src.name},
                              {"group", src.group}, {"source", src.spec.empty() ? src.file : src.spec},
                              {"schedule", schedule_name}, {"repeats", repeats}, {"copy_gbps", copy_gbps}, {"bytes", bytes},
                              {"config", nlohmann::json::parse(plan.describe())}};
        rec.update(stats_json(stats));
        units.fill_bytes(0xff);
        visits.fill_bytes(0);
        launch_visit(kind, plan.config(), offsets.data(), a.rows, units.data(), visits.data(), nullptr);
        APIARY_CUDA_CHECK(cudaDeviceSynchronize());
        const auto got = units.download();
        const auto count = visits.download();
        std::int64_t wrong = 0, first_wrong = -1;
        for (std::size_t k = 0; k < got.size(); ++k)
          if (count[k] != 1 || got[k] != expected[k]) {
            if (first_wrong < 0) first_wrong = static_cast<std::int64_t>(k);
            ++wrong;
          }
        rec["check"] = {{"ok", wrong == 0}, {"wrong_units", wrong}, {"first_wrong", first_wrong}};
        if (wrong) {
          ++failures;
          std::fprintf(stderr, "CHECK FAILED: %s %s: %lld units not updated exactly once with their item (first %lld)\n",
                       src.name.c_str(), schedule_name.c_str(), static_cast<long long>(wrong), static_cast<long long>(first_wrong));
        } else {
          const Timing t = time_gpu([&] { launch_visit(kind, plan.config(), offsets.data(), a.rows, units.data(), nullptr, nullptr); },
                                    repeats);
          rec["median_ms"] = t.median_ms;
          rec["min_ms"] = t.min_ms;
          rec["gbps"] = bytes / (t.median_ms * 1e-3) / 1e9;
          rec["copy_fraction"] = rec["gbps"].get<double>() / copy_gbps;
          rec["units_per_s"] = static_cast<double>(stats.nnz) / (t.median_ms * 1e-3);
        }
        out.write(rec);
      }
    }
    if (failures) {
      std::fprintf(stderr, "%d check(s) FAILED\n", failures);
      return 1;
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "apiary-visit: %s\n", e.what());
    return 2;
  }
}
