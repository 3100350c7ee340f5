#include "partition.hpp"

#include <apiary/balance/layout.hpp>
#include <apiary/balance/partition.hpp>
#include <apiary/balance/search.hpp>
#include <apiary/cuda_check.hpp>
#include <apiary/error.hpp>

#include <thrust/binary_search.h>
#include <thrust/count.h>
#include <thrust/device_ptr.h>
#include <thrust/execution_policy.h>
#include <thrust/extrema.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/scan.h>
#include <thrust/sort.h>
#include <thrust/transform.h>
#include <thrust/unique.h>

#include <algorithm>
#include <cmath>

namespace apiary::jacobi {

namespace {

constexpr int threads = 256;

unsigned blocks_for(long long n) { return static_cast<unsigned>(std::max<long long>(1, (n + threads - 1) / threads)); }

// Last index i in [0, n) with a[i] <= value (a[0] <= value assumed): the load-balancing
// library's tile search (balance/search.hpp).
__device__ inline index_t last_at_most(const index_t* a, index_t n, long long value) {
  return balance::binary_tile_search([a](index_t i) { return a[i]; }, index_t{0}, n, static_cast<index_t>(value));
}
// First index i in [0, n) with a[i] >= value (n if none), for non-decreasing a with a[0] = 0.
__device__ inline index_t first_at_least(const index_t* a, index_t n, long long value) {
  return value <= 0 ? 0 : last_at_most(a, n, value - 1) + 1;
}

// Row blocks: the first row at or after non-zero t * target (t = 0 .. count - 1), then `rows`.
__global__ void row_block_starts(const index_t* ro, index_t rows, int target, index_t count, index_t* starts) {
  const index_t t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < count) starts[t] = first_at_least(ro, rows, static_cast<long long>(t) * target);
  if (t == count) starts[t] = rows;
}

__global__ void row_block_ranges(const index_t* ro, const index_t* starts, index_t tasks, TaskRange* ranges) {
  const index_t t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= tasks) return;
  const index_t r0 = starts[t], r1 = starts[t + 1];
  ranges[t] = TaskRange{ro[r0], ro[r1], r0, r1};
}

// Balanced: the partition phase of the two-phase mapping (balance/partition.hpp) with the rows
// as tiles and the non-zeros as atoms: task t gets the atoms [t * target, (t + 1) * target),
// starting in the tile that holds its first atom (hybrid binary/interpolation search, chosen by
// the row-length statistics) and ending after the tile that holds its last one.
__global__ void balanced_ranges(const index_t* ro, index_t rows, index_t nnz, int target, index_t tasks,
                                balance::SearchKind kind, TaskRange* ranges) {
  const index_t t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= tasks) return;
  const balance::OffsetsLayout<index_t> layout{ro, rows};
  const index_t e0 = t * target;
  const index_t e1 = static_cast<index_t>(std::min<long long>(nnz, static_cast<long long>(e0) + target));
  const index_t r0 = balance::partition_boundary(layout, target, kind, t);
  auto offsets_at = [ro](index_t i) { return ro[i]; };
  const index_t r1 = balance::hybrid_tile_search(kind, offsets_at, r0, rows, e1 - 1) + 1;
  ranges[t] = TaskRange{e0, e1, r0, r1};
}

__global__ void task_starts(const TaskRange* ranges, index_t tasks, index_t* e_starts) {
  const index_t t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < tasks) e_starts[t] = ranges[t].e0;
}

// A row is split when it is partial in some task; only a task's first and last rows can be.
__global__ void count_pieces(const index_t* ro, const TaskRange* ranges, index_t tasks, int* pieces) {
  const index_t t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= tasks) return;
  const TaskRange r = ranges[t];
  if (r.r1 <= r.r0) return;
  auto partial = [&](index_t row) { return ro[row] < r.e0 || ro[row + 1] > r.e1; };
  if (partial(r.r0)) atomicAdd(&pieces[r.r0], 1);
  if (r.r1 - 1 != r.r0 && partial(r.r1 - 1)) atomicAdd(&pieces[r.r1 - 1], 1);
}

struct Cover {
  index_t first, last;  // tasks [first, last] cover the row
};
__device__ inline index_t task_of(const index_t* e_starts, index_t tasks, index_t e) {
  return last_at_most(e_starts, tasks, e);
}
__device__ inline Cover cover_of(const index_t* ro, const index_t* e_starts, index_t tasks, index_t row) {
  return Cover{task_of(e_starts, tasks, ro[row]), task_of(e_starts, tasks, ro[row + 1] - 1)};
}

// Per non-zero e of row i, read by task u = task_of(e): the edges u <-> v for v covering row col(e).
// Pass 1 (keys == nullptr) counts them, pass 2 writes them at offsets[e].
__global__ void task_edges(const index_t* ro, const index_t* cols, index_t rows, index_t nnz, const index_t* e_starts,
                           index_t tasks, const long long* offsets, long long* counts, unsigned long long* keys) {
  const index_t e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= nnz) return;
  const index_t u = task_of(e_starts, tasks, e);
  const Cover c = cover_of(ro, e_starts, tasks, cols[e]);
  long long n = 0;
  for (index_t v = c.first; v <= c.last; ++v) {
    if (v == u) continue;
    if (keys) {
      keys[offsets[e] + n] = (static_cast<unsigned long long>(u) << 32) | static_cast<unsigned>(v);
      keys[offsets[e] + n + 1] = (static_cast<unsigned long long>(v) << 32) | static_cast<unsigned>(u);
    }
    n += 2;
  }
  if (!keys) counts[e] = n;
}

struct SquaredDeviation {
  const index_t* ro;
  double mean;
  __device__ double operator()(index_t r) const {
    const double d = (ro[r + 1] - ro[r]) - mean;
    return d * d;
  }
};
template <class Policy>
double row_length_stddev(const index_t* ro, index_t rows, double mean, const Policy& policy) {
  const double sum = thrust::transform_reduce(policy, thrust::counting_iterator<index_t>(0),
                                              thrust::counting_iterator<index_t>(rows), SquaredDeviation{ro, mean}, 0.0,
                                              thrust::plus<double>());
  return std::sqrt(sum / rows);
}

struct KeyToNeighbor {
  __device__ index_t operator()(unsigned long long key) const { return static_cast<index_t>(key & 0xffffffffu); }
};
struct TaskKey {
  __device__ unsigned long long operator()(index_t t) const { return static_cast<unsigned long long>(t) << 32; }
};
struct Degree {
  const index_t* offsets;
  __device__ index_t operator()(index_t t) const { return offsets[t + 1] - offsets[t]; }
};
struct RowsOf {
  __device__ index_t operator()(const TaskRange& r) const { return r.r1 - r.r0; }
};
struct NnzOf {
  __device__ index_t operator()(const TaskRange& r) const { return r.e1 - r.e0; }
};
struct RowLength {
  const index_t* ro;
  __device__ index_t operator()(index_t r) const { return ro[r + 1] - ro[r]; }
};
struct IsSplit {
  __device__ bool operator()(int pieces) const { return pieces > 1; }
};

Partition build(index_t rows, index_t nnz, const index_t* ro, const index_t* cols, PartitionKind kind, int target) {
  if (target < 1) throw InputError("--task-nnz", "non-zeros per task must be >= 1, got " + std::to_string(target));
  if (rows < 1) throw InputError("partition", "the matrix has no rows");
  cudaEvent_t start, stop;
  APIARY_CUDA_CHECK(cudaEventCreate(&start));
  APIARY_CUDA_CHECK(cudaEventCreate(&stop));
  APIARY_CUDA_CHECK(cudaEventRecord(start, nullptr));
  const auto policy = thrust::cuda::par.on(nullptr);

  Partition p;
  p.kind = kind;
  p.target_nnz = target;
  const long long shares = std::max<long long>(1, (static_cast<long long>(nnz) + target - 1) / target);
  if (shares > 0x7fffffffLL) throw InputError("--task-nnz", "too many tasks; raise the non-zeros per task");
  if (kind == PartitionKind::row_blocks) {
    sparse::DeviceBuffer<index_t> starts(static_cast<std::size_t>(shares) + 1);
    row_block_starts<<<blocks_for(shares + 1), threads>>>(ro, rows, target, static_cast<index_t>(shares), starts.data());
    APIARY_CUDA_CHECK(cudaGetLastError());
    // Several shares inside one long row snap to the same start: keep each start once.
    thrust::device_ptr<index_t> s(starts.data());
    const auto end = thrust::unique(policy, s, s + shares + 1);
    p.tasks = static_cast<int>(end - s) - 1;
    p.ranges = sparse::DeviceBuffer<TaskRange>(static_cast<std::size_t>(p.tasks));
    row_block_ranges<<<blocks_for(p.tasks), threads>>>(ro, starts.data(), p.tasks, p.ranges.data());
  } else {
    p.tasks = static_cast<int>(shares);
    p.ranges = sparse::DeviceBuffer<TaskRange>(static_cast<std::size_t>(p.tasks));
    // Busato and Bombieri's switch between interpolation and binary search, from the mean
    // and the spread of the row lengths.
    const double mean = static_cast<double>(nnz) / rows;
    const balance::SearchKind kind = balance::choose_search(mean, row_length_stddev(ro, rows, mean, policy));
    balanced_ranges<<<blocks_for(p.tasks), threads>>>(ro, rows, nnz, target, p.tasks, kind, p.ranges.data());
  }
  APIARY_CUDA_CHECK(cudaGetLastError());
  const index_t tasks = p.tasks;

  sparse::DeviceBuffer<index_t> e_starts(static_cast<std::size_t>(tasks));
  task_starts<<<blocks_for(tasks), threads>>>(p.ranges.data(), tasks, e_starts.data());
  p.row_pieces = sparse::DeviceBuffer<int>(static_cast<std::size_t>(rows));
  p.row_pieces.fill_bytes(0);
  count_pieces<<<blocks_for(tasks), threads>>>(ro, p.ranges.data(), tasks, p.row_pieces.data());
  APIARY_CUDA_CHECK(cudaGetLastError());

  // Edges: count, scan, write, sort, unique, then CSR offsets by binary search.
  sparse::DeviceBuffer<long long> counts(static_cast<std::size_t>(nnz) + 1), offsets(static_cast<std::size_t>(nnz) + 1);
  counts.fill_bytes(0);
  task_edges<<<blocks_for(nnz), threads>>>(ro, cols, rows, nnz, e_starts.data(), tasks, nullptr, counts.data(), nullptr);
  APIARY_CUDA_CHECK(cudaGetLastError());
  thrust::device_ptr<long long> c(counts.data()), o(offsets.data());
  thrust::exclusive_scan(policy, c, c + nnz + 1, o);
  long long total = 0;
  APIARY_CUDA_CHECK(cudaMemcpy(&total, offsets.data() + nnz, sizeof total, cudaMemcpyDeviceToHost));
  sparse::DeviceBuffer<unsigned long long> keys(static_cast<std::size_t>(total));
  task_edges<<<blocks_for(nnz), threads>>>(ro, cols, rows, nnz, e_starts.data(), tasks, offsets.data(), nullptr,
                                            keys.data());
  APIARY_CUDA_CHECK(cudaGetLastError());
  thrust::device_ptr<unsigned long long> k(keys.data());
  thrust::sort(policy, k, k + total);
  const long long unique = thrust::unique(policy, k, k + total) - k;
  p.edges = unique;
  p.neighbors = sparse::DeviceBuffer<index_t>(static_cast<std::size_t>(unique));
  thrust::transform(policy, k, k + unique, thrust::device_ptr<index_t>(p.neighbors.data()), KeyToNeighbor{});
  p.neighbor_offsets = sparse::DeviceBuffer<index_t>(static_cast<std::size_t>(tasks) + 1);
  thrust::lower_bound(policy, k, k + unique, thrust::make_transform_iterator(thrust::counting_iterator<index_t>(0), TaskKey{}),
                      thrust::make_transform_iterator(thrust::counting_iterator<index_t>(tasks + 1), TaskKey{}),
                      thrust::device_ptr<index_t>(p.neighbor_offsets.data()));

  // Summary numbers for reports.
  p.max_neighbors = thrust::transform_reduce(policy, thrust::counting_iterator<index_t>(0),
                                             thrust::counting_iterator<index_t>(tasks), Degree{p.neighbor_offsets.data()}, 0,
                                             thrust::maximum<index_t>());
  thrust::device_ptr<TaskRange> r(p.ranges.data());
  p.max_rows_per_task = thrust::transform_reduce(policy, r, r + tasks, RowsOf{}, 0, thrust::maximum<index_t>());
  p.max_task_nnz = thrust::transform_reduce(policy, r, r + tasks, NnzOf{}, 0, thrust::maximum<index_t>());
  thrust::device_ptr<int> pieces(p.row_pieces.data());
  p.split_rows = static_cast<int>(thrust::count_if(policy, pieces, pieces + rows, IsSplit{}));
  p.max_row_nnz = thrust::transform_reduce(policy, thrust::counting_iterator<index_t>(0),
                                           thrust::counting_iterator<index_t>(rows), RowLength{ro}, 0,
                                           thrust::maximum<index_t>());

  APIARY_CUDA_CHECK(cudaEventRecord(stop, nullptr));
  APIARY_CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  APIARY_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  p.build_ms = ms;
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return p;
}

}  // namespace

const char* to_string(PartitionKind k) { return k == PartitionKind::row_blocks ? "row_blocks" : "balanced"; }

PartitionKind parse_partition(std::string_view s) {
  if (s == "row_blocks") return PartitionKind::row_blocks;
  if (s == "balanced") return PartitionKind::balanced;
  throw InputError("--partition", "unknown partition '" + std::string(s) + "' (row_blocks, balanced)");
}

Partition build_partition(const sparse::CsrView<float>& a, PartitionKind kind, int target_nnz) {
  return build(a.rows, a.nnz, a.row_offsets, a.col_indices, kind, target_nnz);
}
Partition build_partition(const sparse::CsrView<double>& a, PartitionKind kind, int target_nnz) {
  return build(a.rows, a.nnz, a.row_offsets, a.col_indices, kind, target_nnz);
}

}  // namespace apiary::jacobi
