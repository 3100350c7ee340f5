// SpMV y = A x over every load-balancing schedule (host API). The kernels live in the .cu
// files; this header compiles without nvcc.
#pragma once

#include <apiary/balance/params.hpp>
#include <apiary/balance/schedule_kind.hpp>
#include <apiary/sparse/device_buffer.hpp>
#include <apiary/sparse/stats.hpp>
#include <apiary/sparse/views.hpp>

#include <cuda_runtime_api.h>

#include <string>

namespace apiary::spmv {

using balance::ScheduleKind;
using sparse::index_t;

// The longest rows multi-phase stores whole (Tuning::split_row_store_max): its shared-memory
// window keeps room for a chunk's last row past the chunk's end.
constexpr unsigned split_row_store_limit = 64;

// Per-architecture tuning constants in one place (CUB style). Block size 256 for all kernels;
// items per thread odd so that thread i's K consecutive staged values sit in distinct banks.
struct Tuning {
  unsigned block = 256;
  unsigned items_per_thread = 7;  // merge-path, two-phase, multi-phase, block search
  unsigned iterations = 2;        // multi-phase IS
  // Multi-phase: when the matrix gives fewer chunks than one wave of blocks (sm_count x 8),
  // lower IS to 1, then K (7, 5, 3; never above items_per_thread) until it does, so small and
  // medium matrices do not leave SMs idle. Off by default so explicit knobs stay as given.
  bool fill_device = false;
  // Multi-phase on large banded matrices (>= 1e7 non-zeros whose rows read x with locality:
  // column spread below the selector's 0.1): one window of 11 items per thread (K = 11,
  // IS = 1) instead of two of 7 (measured on an H100, docs/spmv.md). Off by default so
  // explicit knobs stay as given.
  bool fit_window = false;
  // Multi-phase on matrices below 5·10^6 non-zeros with no empty row and no row longer than
  // this: the thread that holds a row's last non-zero sums the whole row and stores it
  // (LaunchConfig::split_row_stores), so y is not cleared first and split rows take no
  // atomics. 0 switches it off; at most split_row_store_limit.
  unsigned split_row_store_max = split_row_store_limit;
};

// The window multi-phase uses on a matrix with these row statistics: `tuning`'s items per
// thread and iterations, or, with fit_window on a large banded matrix, K = 11 and IS = 1.
struct MultiPhaseWindow {
  unsigned items_per_thread;
  unsigned iterations;
};
MultiPhaseWindow multi_phase_window(const sparse::RowStats& stats, const Tuning& tuning);

// Whether multi-phase on a matrix with these row statistics stores its split rows itself
// (LaunchConfig::split_row_stores): below 5·10^6 non-zeros, no empty row, no row longer than
// tuning.split_row_store_max. The kernel relies on it for every row to be written, so `stats`
// must be the matrix's own. Throws InputError for a split_row_store_max above
// split_row_store_limit.
bool stores_split_rows(const sparse::RowStats& stats, const Tuning& tuning);

// Everything a launch needs; built by SpmvPlan.
struct LaunchConfig {
  unsigned block = 256;
  unsigned grid = 1;
  std::size_t shared_bytes = 0;
  balance::ScheduleParams<index_t> params;
  bool zero_output = false;  // schedules with atomic runs need y = 0 first
  bool split_row_stores = false;  // multi-phase: every row stored once by its last thread (Tuning)
};

// Launches y = A x with schedule `kind` (spmv_launch_*.cu). Declared for float and double.
template <class T>
void launch_spmv(ScheduleKind kind, const LaunchConfig& config, sparse::CsrView<T> a, const T* x, T* y, cudaStream_t stream);

// Shared memory the kernel of `kind` needs with `config` (schedule scratch + staging).
template <class T>
std::size_t spmv_shared_bytes(ScheduleKind kind, unsigned block, const balance::ScheduleParams<index_t>& params);

// Runs the partition pass of the two-phase / multi-phase schedules.
void launch_partition(const index_t* row_offsets, index_t rows, std::int64_t chunk_atoms, balance::SearchKind search,
                      index_t* partition, index_t chunks, cudaStream_t stream);

// A prepared SpMV: schedule parameters from the matrix's row statistics, partition array (for
// two-phase/multi-phase, computed once here like cuSPARSE's preprocessing), launch geometry.
template <class T>
class SpmvPlan {
 public:
  SpmvPlan(ScheduleKind kind, sparse::CsrView<T> a, const sparse::RowStats& stats, int sm_count,
           const Tuning& tuning = {});
  void run(const T* x, T* y, cudaStream_t stream = nullptr) const;
  ScheduleKind kind() const { return kind_; }
  const LaunchConfig& config() const { return config_; }
  std::string describe() const;  // parameters as a JSON object text

 private:
  ScheduleKind kind_;
  sparse::CsrView<T> a_;
  LaunchConfig config_;
  sparse::DeviceBuffer<index_t> partition_;
};

// The schedule selector: a few rules on row-length statistics, thresholds fitted to the
// measured H200 suite (docs/spmv.md, tools/spmv_heuristic_fit.py):
//  - skewed rows (std / mean > 0.5): multi-phase from 10^5 non-zeros, warp-mapped below;
//  - even rows, mean >= 32: warp-mapped;
//  - even rows, 8 <= mean < 32: virtual warps of 4 lanes; multi-phase from 10^7 non-zeros
//    unless the columns are banded (RowStats::column_spread < 0.1); warp-mapped below 10^7
//    when mean >= 16 and the columns are scattered;
//  - even rows, mean < 8: thread-mapped; virtual warps from 10^7 non-zeros with scattered columns.
// The same for fp32 and fp64 (an fp64-only rule was dropped when multi-phase stopped using
// fp64 atomics at warp edges: docs/spmv.md).
ScheduleKind select_schedule(const sparse::RowStats& stats);
std::string selection_reason(const sparse::RowStats& stats);

}  // namespace apiary::spmv
