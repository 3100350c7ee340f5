// GPU test: every schedule x fp32/fp64 on random and real matrices against the CPU reference
// (poisoned output, fresh random x), with non-default knobs too; and the visit benchmark's
// correctness (every unit updated exactly once, with its item). Skips (77) without a GPU.
#include "gather_floor.hpp"
#include "reference.hpp"
#include "spmv.hpp"
#include "visit.hpp"

#include <apiary/balance/schedule_kind.hpp>
#include <apiary/error.hpp>
#include <apiary/sparse/conversions.hpp>
#include <apiary/sparse/device_matrix.hpp>
#include <apiary/sparse/generators.hpp>
#include <apiary/sparse/matrix_market.hpp>
#include <gpu_test.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

using namespace apiary;
using namespace apiary::spmv;

namespace {

int failures = 0, checks = 0;
std::uint64_t next_seed = std::random_device{}();

template <class T>
void check_spmv(const std::string& name, const sparse::Csr<double>& a64, int sms, const Tuning& tuning) {
  const sparse::Csr<T> a = sparse::cast_values<T>(a64);
  const sparse::RowStats stats = sparse::row_stats(a.row_offsets, a.col_indices, a.cols);
  const sparse::DeviceCsr<T> da(a);
  const std::uint64_t seed = next_seed++;
  const std::vector<T> x = random_vector<T>(static_cast<std::size_t>(a.cols), seed);
  std::vector<double> ref, magnitude;
  reference_spmv(a, x, ref, magnitude);
  sparse::DeviceBuffer<T> dx(x), dy(static_cast<std::size_t>(a.rows));
  if (a.nnz() > 0) {  // the gather floor's per-block sums add up to the sum of y
    GatherFloor<T> floor(da.view(), dx.data(), sms);
    const CheckResult c = floor.run_checked(ref, magnitude);
    ++checks;
    if (!c.ok) {
      ++failures;
      std::printf("FAIL gather floor %s %s: %s\n", name.c_str(), sizeof(T) == 4 ? "fp32" : "fp64", c.message.c_str());
    }
  }
  std::vector<ScheduleKind> kinds(balance::all_schedules.begin(), balance::all_schedules.end());
  kinds.push_back(select_schedule(stats));
  for (ScheduleKind kind : kinds) {
    SpmvPlan<T> plan(kind, da.view(), stats, sms, tuning);
    for (int run = 0; run < 2; ++run) {  // twice: a plan is reusable
      dy.fill_bytes(0xff);
      plan.run(dx.data(), dy.data());
      APIARY_CUDA_CHECK(cudaDeviceSynchronize());
      const CheckResult c = check_result<T>(dy.download(), ref, magnitude);
      ++checks;
      if (!c.ok) {
        ++failures;
        std::printf("FAIL spmv %s %s %s (K=%u IS=%u, x seed %llu): %s\n", name.c_str(), sizeof(T) == 4 ? "fp32" : "fp64",
                    std::string(balance::name(kind)).c_str(), tuning.items_per_thread, tuning.iterations,
                    static_cast<unsigned long long>(seed), c.message.c_str());
        break;
      }
    }
  }
}

void check_visit(const std::string& name, const sparse::Csr<double>& a, int sms) {
  const sparse::RowStats stats = sparse::row_stats(a.row_offsets, a.cols);
  sparse::DeviceBuffer<index_t> offsets(a.row_offsets);
  sparse::DeviceBuffer<index_t> units(std::max<std::size_t>(1, a.nnz()));
  sparse::DeviceBuffer<unsigned> visits(std::max<std::size_t>(1, a.nnz()));
  const sparse::CsrView<float> shape{a.rows, a.cols, static_cast<index_t>(a.nnz()), offsets.data(), nullptr, nullptr};
  for (ScheduleKind kind : balance::all_schedules) {
    const SpmvPlan<float> plan(kind, shape, stats, sms);
    units.fill_bytes(0xff);
    visits.fill_bytes(0);
    launch_visit(kind, plan.config(), offsets.data(), a.rows, units.data(), visits.data(), nullptr);
    APIARY_CUDA_CHECK(cudaDeviceSynchronize());
    const auto got = units.download();
    const auto count = visits.download();
    ++checks;
    for (index_t r = 0; r < a.rows; ++r)
      for (index_t k = a.row_offsets[r]; k < a.row_offsets[r + 1]; ++k)
        if (count[k] != 1 || got[k] != r) {
          ++failures;
          std::printf("FAIL visit %s %s: unit %d visited %u times, holds %d, expected item %d\n", name.c_str(),
                      std::string(balance::name(kind)).c_str(), k, count[k], got[k], r);
          r = a.rows;
          break;
        }
  }
}

}  // namespace

int main() {
  apiary::testing::require_gpu_or_skip("apiary_spmv_gpu_test");
  try {
    cudaDeviceProp prop{};
    APIARY_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    const int sms = prop.multiProcessorCount;
    std::printf("device: %s\n", prop.name);

    std::vector<std::pair<std::string, sparse::Csr<double>>> matrices;
    for (const char* spec : {"lap2d:n=50", "lap3d:n=20,points=27,perm=1", "A3", "rmat:scale=12,ef=8",
                             "powerlaw:n=20000,avg=6,alpha=1.5,max=5000", "longrows:n=30000,avg=8,long=3,len=25000",
                             "regular:n=5000,k=8", "regular:n=3000,k=64", "road:n=120,keep=0.5", "diagdom:n=1,avg=1", "powerlaw:n=3000,avg=0.5,alpha=1.2,max=2000"})
      matrices.emplace_back(spec, sparse::generate(spec));
    // Shapes the generators do not make: a single very long row, all-empty rows, a rectangle.
    {
      sparse::Coo<double> m;
      m.rows = 1000;
      m.cols = 300000;
      for (index_t j = 0; j < 250000; ++j) {
        m.row_indices.push_back(500);
        m.col_indices.push_back(j);
        m.values.push_back(1.0 / (1 + j % 7));
      }
      matrices.emplace_back("one long row", sparse::coo_to_csr(m));
      sparse::Csr<double> empty;
      empty.rows = 777;
      empty.cols = 10;
      empty.row_offsets.assign(778, 0);
      matrices.emplace_back("empty", empty);
    }
    const char* env = std::getenv("APIARY_MATRIX_DIR");
    const std::filesystem::path dir = env ? env : APIARY_DEFAULT_MATRIX_DIR;
    if (std::filesystem::exists(dir)) {
      for (const auto& e : std::filesystem::directory_iterator(dir))
        if (e.path().extension() == ".mtx") matrices.emplace_back(e.path().filename().string(), sparse::read_csr<double>(e.path().string()));
    } else {
      std::printf("note: real matrices not found in %s (set APIARY_MATRIX_DIR)\n", dir.string().c_str());
    }

    for (const auto& [name, a] : matrices) {
      check_spmv<float>(name, a, sms, Tuning{});
      check_spmv<double>(name, a, sms, Tuning{});
      check_spmv<float>(name, a, sms, Tuning{256, 3, 4});  // other knobs: more windows, splits
      // Split rows combined by shuffles and atomics (split_row_store_max 0) on every matrix too:
      // with the default, short-row matrices store them instead.
      check_spmv<double>(name, a, sms, Tuning{256, 1, 1, false, false, 0});
      check_spmv<float>(name, a, sms, Tuning{256, 11, 1, false, false, 0});  // the window of large banded matrices
      check_spmv<double>(name, a, sms, Tuning{256, 11, 1});
      check_visit(name, a, sms);
    }
    {  // multi-phase stores split rows itself exactly where every row is non-empty and short
      struct Case {
        const char* spec;
        unsigned store_max;
        bool stores;
      };
      for (const Case& c : {Case{"regular:n=3000,k=64", 64, true}, Case{"regular:n=3000,k=64", 63, false},
                            Case{"lap2d:n=50", 0, false}, Case{"powerlaw:n=3000,avg=0.5,alpha=1.2,max=2000", split_row_store_limit, false}}) {
        const sparse::Csr<float> a = sparse::cast_values<float>(sparse::generate(c.spec));
        const sparse::DeviceCsr<float> da(a);
        Tuning tuning;
        tuning.split_row_store_max = c.store_max;
        const SpmvPlan<float> plan(ScheduleKind::multi_phase, da.view(), sparse::row_stats(a.row_offsets, a.col_indices, a.cols),
                                   sms, tuning);
        ++checks;
        if (plan.config().split_row_stores != c.stores || plan.config().zero_output == c.stores) {
          ++failures;
          std::printf("FAIL: multi-phase on %s with split_row_store_max %u: split_row_stores %d, zero_output %d\n", c.spec,
                      c.store_max, plan.config().split_row_stores, plan.config().zero_output);
        }
      }
    }
    {  // rows longer than the shared-memory window keeps room for: refused, naming the knob
      const sparse::Csr<float> a = sparse::cast_values<float>(matrices.front().second);
      const sparse::DeviceCsr<float> da(a);
      Tuning tuning;
      tuning.split_row_store_max = split_row_store_limit + 1;
      ++checks;
      try {
        SpmvPlan<float> plan(ScheduleKind::multi_phase, da.view(), sparse::row_stats(a.row_offsets, a.col_indices, a.cols),
                             sms, tuning);
        ++failures;
        std::printf("FAIL: split_row_store_max %u was accepted\n", tuning.split_row_store_max);
      } catch (const InputError& e) {
        if (std::string(e.what()).find("split_row_store_max") == std::string::npos) {
          ++failures;
          std::printf("FAIL: the split_row_store_max error does not name it: %s\n", e.what());
        }
      }
    }
    {  // impossible knobs: a clear error before any launch, not a failed launch
      const sparse::Csr<float> a = sparse::cast_values<float>(matrices.front().second);
      const sparse::DeviceCsr<float> da(a);
      ++checks;
      try {
        SpmvPlan<float> plan(ScheduleKind::multi_phase, da.view(), sparse::row_stats(a.row_offsets, a.col_indices, a.cols), sms,
                             Tuning{256, 32, 64});
        ++failures;
        std::printf("FAIL: multi-phase with 32 items per thread and 64 iterations was accepted\n");
      } catch (const InputError& e) {
        if (std::string(e.what()).find("shared memory") == std::string::npos) {
          ++failures;
          std::printf("FAIL: the shared-memory error does not say so: %s\n", e.what());
        }
      }
    }
    std::printf("%d checks, %d failures\n", checks, failures);
    return failures ? 1 : 0;
  } catch (const std::exception& e) {
    std::printf("FAIL: %s\n", e.what());
    return 1;
  }
}
