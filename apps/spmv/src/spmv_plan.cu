// Dispatch from ScheduleKind to the kernel instantiations, the partition pass, launch
// geometry, and the schedule selector.
#include "spmv.hpp"
#include "spmv_kernel.cuh"

#include <apiary/balance/partition.hpp>
#include <apiary/cuda_check.hpp>
#include <apiary/error.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>

namespace apiary::spmv {

// The kernels are instantiated in spmv_launch_*.cu, not here.
APIARY_SPMV_EXTERN(thread_mapped)
APIARY_SPMV_EXTERN(warp_mapped)
APIARY_SPMV_EXTERN(block_mapped)
APIARY_SPMV_EXTERN(virtual_warp)
APIARY_SPMV_EXTERN(group_mapped)
APIARY_SPMV_EXTERN(dynamic_virtual_warp)
APIARY_SPMV_EXTERN(cta_warp_scan)
APIARY_SPMV_EXTERN(local_warp_search)
APIARY_SPMV_EXTERN(direct_search)
APIARY_SPMV_EXTERN(block_search)
APIARY_SPMV_EXTERN(two_phase)
APIARY_SPMV_EXTERN(merge_path)
APIARY_SPMV_EXTERN(multi_phase)

namespace {

// The selector's thresholds (fitted on the H200 suite run, docs/spmv.md "The selector heuristic";
// tools/spmv_heuristic_fit.py evaluates them and must be kept in step).
constexpr double kCvIrregular = 0.5;          // std / mean above this: skewed
constexpr std::int64_t kNnzMultiPhase = 100'000;  // skewed and at least this many non-zeros: multi-phase
constexpr std::int64_t kNnzLarge = 10'000'000;    // even, medium rows, at least this many: multi-phase
constexpr double kMeanWarp = 32;              // even rows at least this long: a warp per row
constexpr double kMeanWarpScattered = 16;     // ... or this long when their columns are scattered
constexpr double kMeanVirtualWarp = 8;        // even rows at least this long: 4 lanes per row
// Rows reaching less than this fraction of the columns read x with locality (banded, e.g. an
// unpermuted Laplacian): there 4 lanes per row beat multi-phase at any size. With scattered
// columns every non-zero's gather of x is its own memory transaction, so the choice leans to
// more lanes per row, whose loads of the row itself are coalesced: a warp from 16 non-zeros
// per row (below 1e7), 4 lanes instead of one for short rows (from 1e7).
constexpr double kBandedSpread = 0.1;

// Wider windows for large banded matrices (Tuning::fit_window): on an H100 the suite's five
// banded matrices with >= 1e7 non-zeros took 0.967x the time in geomean with K = 11, IS = 1
// (0.94-1.02x, fp32 and fp64); the scattered ones 1.00-1.06x in a sweep, so they keep K = 7,
// IS = 2 (docs/spmv.md, "Kept: one window of 11 for large banded matrices").
constexpr unsigned kBandedItems = 11;
constexpr unsigned kBandedIterations = 1;

// Multi-phase stores split rows itself (Tuning::split_row_store_max) only below this many
// non-zeros. Measured on an H200 against the clear and the atomics (docs/spmv.md, "Kept: split
// rows stored by their last thread"): below it 0.64-0.95x the time on the matrices it applies
// to, where the clear is a launch-sized share of a short kernel; above it fp64 took up to 2.1x
// as long on scattered columns (regular16_5m, lap3d_7pt_150_perm), fp32 0.92-1.09x.
constexpr std::int64_t kNnzSplitRowStores = 5'000'000;

__global__ void partition_kernel(balance::OffsetsLayout<index_t> layout, std::int64_t chunk_atoms,
                                 balance::SearchKind search, index_t* partition, index_t chunks) {
  for (std::int64_t c = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; c <= chunks;
       c += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    partition[c] = balance::partition_boundary(layout, chunk_atoms, search, static_cast<index_t>(c));
}


std::int64_t div_up(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

}  // namespace

void launch_partition(const index_t* row_offsets, index_t rows, std::int64_t chunk_atoms, balance::SearchKind search,
                      index_t* partition, index_t chunks, cudaStream_t stream) {
  const unsigned block = 256;
  const auto grid = static_cast<unsigned>(std::max<std::int64_t>(1, div_up(static_cast<std::int64_t>(chunks) + 1, block)));
  partition_kernel<<<grid, block, 0, stream>>>({row_offsets, rows}, chunk_atoms, search, partition, chunks);
  APIARY_CUDA_CHECK(cudaGetLastError());
}

template <class T>
void launch_spmv(ScheduleKind kind, const LaunchConfig& config, sparse::CsrView<T> a, const T* x, T* y, cudaStream_t stream) {
  if (config.zero_output && a.rows > 0) APIARY_CUDA_CHECK(cudaMemsetAsync(y, 0, sizeof(T) * a.rows, stream));
  balance::visit_schedule(kind, [&](auto k) { launch_kind<decltype(k)::value, T>(config, a, x, y, stream); });
}

bool stores_split_rows(const sparse::RowStats& stats, const Tuning& tuning) {
  if (tuning.split_row_store_max > split_row_store_limit)
    throw InputError("split_row_store_max", std::to_string(tuning.split_row_store_max) + " is above the limit of " +
                                                std::to_string(split_row_store_limit) +
                                                " (the shared-memory window holds no longer rows); use 0 to " +
                                                std::to_string(split_row_store_limit));
  return tuning.split_row_store_max > 0 && stats.empty_rows == 0 &&
         stats.max <= static_cast<std::int64_t>(tuning.split_row_store_max) && stats.nnz < kNnzSplitRowStores;
}

MultiPhaseWindow multi_phase_window(const sparse::RowStats& stats, const Tuning& tuning) {
  if (tuning.fit_window && stats.nnz >= kNnzLarge && stats.column_spread < kBandedSpread)
    return {kBandedItems, kBandedIterations};
  return {tuning.items_per_thread, tuning.iterations};
}

template <class T>
std::size_t spmv_shared_bytes(ScheduleKind kind, unsigned block, const balance::ScheduleParams<index_t>& params) {
  return balance::visit_schedule(kind, [&](auto k) { return shared_bytes_of<decltype(k)::value, T>(block, params); });
}

template <class T>
SpmvPlan<T>::SpmvPlan(ScheduleKind kind, sparse::CsrView<T> a, const sparse::RowStats& stats, int sm_count, const Tuning& tuning)
    : kind_(kind), a_(a) {
  using balance::ScheduleKind;
  // Before any launch: a bad knob is an error, not a wasted partition pass.
  config_.split_row_stores = stores_split_rows(stats, tuning) && kind == ScheduleKind::multi_phase;
  auto& p = config_.params;
  p = balance::default_params<index_t>(kind, stats.mean, stats.stddev);
  p.items_per_thread = tuning.items_per_thread;
  p.iterations = tuning.iterations;
  if (kind == ScheduleKind::multi_phase) {
    const MultiPhaseWindow w = multi_phase_window(stats, tuning);
    p.items_per_thread = w.items_per_thread;
    p.iterations = w.iterations;
  }
  const unsigned block = tuning.block;
  config_.block = block;
  const std::int64_t rows = a.rows, nnz = a.nnz;
  std::int64_t blocks = 1;
  switch (kind) {
    case ScheduleKind::thread_mapped: blocks = div_up(rows, block); break;
    case ScheduleKind::warp_mapped:
    case ScheduleKind::block_mapped:
    case ScheduleKind::virtual_warp:
    case ScheduleKind::dynamic_virtual_warp: {
      const unsigned g = p.group_size == 0 ? block : p.group_size;
      // Tile-per-group schedules: enough groups for every row, but at most ~32 waves of blocks.
      blocks = std::min<std::int64_t>(div_up(rows, block / g), static_cast<std::int64_t>(sm_count) * 8 * 32);
      if (kind == ScheduleKind::dynamic_virtual_warp) blocks = div_up(rows, block);
      break;
    }
    case ScheduleKind::group_mapped:
    case ScheduleKind::cta_warp_scan:
    case ScheduleKind::local_warp_search: blocks = div_up(rows, block); break;
    case ScheduleKind::direct_search: blocks = std::min<std::int64_t>(div_up(nnz, block), static_cast<std::int64_t>(sm_count) * 8 * 16); break;
    case ScheduleKind::block_search: blocks = div_up(rows, 4 * static_cast<std::int64_t>(block)); break;
    case ScheduleKind::merge_path: blocks = div_up(rows + nnz, static_cast<std::int64_t>(block) * p.items_per_thread); break;
    case ScheduleKind::two_phase:
    case ScheduleKind::multi_phase: {
      if (kind == ScheduleKind::multi_phase && tuning.fill_device) {
        const std::int64_t wave = static_cast<std::int64_t>(std::max(sm_count, 1)) * 8;
        auto chunks_of = [&](unsigned k, unsigned is) { return div_up(nnz, static_cast<std::int64_t>(block) * k * std::max(is, 1u)); };
        if (chunks_of(p.items_per_thread, p.iterations) < wave) p.iterations = 1;
        for (unsigned k : {7u, 5u, 3u})
          if (k < p.items_per_thread && chunks_of(p.items_per_thread, 1) < wave) p.items_per_thread = k;
      }
      const std::int64_t chunk = balance::partition_chunk_atoms(kind, block, p);
      const auto chunks = static_cast<index_t>(div_up(nnz, chunk));
      partition_ = sparse::DeviceBuffer<index_t>(static_cast<std::size_t>(chunks) + 1);
      launch_partition(a.row_offsets, a.rows, chunk, p.search, partition_.data(), chunks, nullptr);
      APIARY_CUDA_CHECK(cudaDeviceSynchronize());
      p.partition = partition_.data();
      blocks = chunks;
      break;
    }
  }
  // Empty matrices still launch one block (the kernel does nothing).
  config_.grid = static_cast<unsigned>(std::clamp<std::int64_t>(blocks, 1, 0x7fffffff));
  config_.shared_bytes = spmv_shared_bytes<T>(kind, block, p);
  int device = 0, max_shared = 0;
  APIARY_CUDA_CHECK(cudaGetDevice(&device));
  APIARY_CUDA_CHECK(cudaDeviceGetAttribute(&max_shared, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  if (config_.shared_bytes > static_cast<std::size_t>(max_shared)) {
    std::ostringstream why;
    why << "needs " << config_.shared_bytes << " bytes of shared memory per block with block " << block
        << ", items per thread " << p.items_per_thread << " and iterations " << p.iterations << "; the device allows "
        << max_shared << ": lower the items per thread or the iterations";
    throw InputError(std::string(balance::name(kind)), why.str());
  }
  config_.zero_output = [&] {
    if (config_.split_row_stores) return false;
    switch (kind) {
      case ScheduleKind::thread_mapped:
      case ScheduleKind::warp_mapped:
      case ScheduleKind::block_mapped:
      case ScheduleKind::virtual_warp:
      case ScheduleKind::dynamic_virtual_warp: return false;
      default: return true;
    }
  }();
}

template <class T>
void SpmvPlan<T>::run(const T* x, T* y, cudaStream_t stream) const {
  launch_spmv<T>(kind_, config_, a_, x, y, stream);
}

template <class T>
std::string SpmvPlan<T>::describe() const {
  std::ostringstream s;
  const auto& p = config_.params;
  s << "{\"block\":" << config_.block << ",\"grid\":" << config_.grid << ",\"shared_bytes\":" << config_.shared_bytes
    << ",\"group_size\":" << p.group_size << ",\"items_per_thread\":" << p.items_per_thread
    << ",\"iterations\":" << p.iterations << ",\"search\":\""
    << (p.search == balance::SearchKind::interpolation ? "interpolation" : "binary") << "\",\"zero_output\":"
    << (config_.zero_output ? "true" : "false") << ",\"split_row_stores\":" << (config_.split_row_stores ? "true" : "false")
    << "}";
  return s.str();
}

namespace {

struct Choice {
  ScheduleKind kind;
  const char* reason;
};

Choice choose(const sparse::RowStats& s) {
  const double cv = s.mean > 0 ? s.stddev / s.mean : 0;
  if (cv > kCvIrregular)
    return s.nnz >= kNnzMultiPhase ? Choice{ScheduleKind::multi_phase, "skewed (cv > 0.5), nnz >= 1e5"}
                                   : Choice{ScheduleKind::warp_mapped, "skewed (cv > 0.5), nnz < 1e5"};
  if (s.mean >= kMeanWarp) return {ScheduleKind::warp_mapped, "even (cv <= 0.5), long rows (mean >= 32)"};
  const bool scattered = s.column_spread >= kBandedSpread;
  if (s.mean >= kMeanVirtualWarp) {
    if (s.nnz < kNnzLarge) {
      if (scattered && s.mean >= kMeanWarpScattered)
        return {ScheduleKind::warp_mapped, "even (cv <= 0.5), mean in [16, 32), nnz < 1e7, scattered columns"};
      return {ScheduleKind::virtual_warp, "even (cv <= 0.5), mean in [8, 32), nnz < 1e7"};
    }
    if (!scattered)
      return {ScheduleKind::virtual_warp, "even (cv <= 0.5), mean in [8, 32), nnz >= 1e7, banded (column spread < 0.1)"};
    return {ScheduleKind::multi_phase, "even (cv <= 0.5), mean in [8, 32), nnz >= 1e7, scattered columns"};
  }
  if (s.nnz >= kNnzLarge && scattered)
    return {ScheduleKind::virtual_warp, "even (cv <= 0.5), short rows (mean < 8), nnz >= 1e7, scattered columns"};
  return {ScheduleKind::thread_mapped, "even (cv <= 0.5), short rows (mean < 8)"};
}

}  // namespace

ScheduleKind select_schedule(const sparse::RowStats& s) { return choose(s).kind; }

std::string selection_reason(const sparse::RowStats& s) { return choose(s).reason; }

template class SpmvPlan<float>;
template class SpmvPlan<double>;
template void launch_spmv<float>(ScheduleKind, const LaunchConfig&, sparse::CsrView<float>, const float*, float*, cudaStream_t);
template void launch_spmv<double>(ScheduleKind, const LaunchConfig&, sparse::CsrView<double>, const double*, double*, cudaStream_t);

}  // namespace apiary::spmv
