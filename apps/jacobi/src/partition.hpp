// The work partition of the Jacobi task versions, built on the GPU (the thesis did it on the
// host, 180 ms per matrix): which non-zeros and rows each Jacobi task covers, and which tasks
// depend on each other across iterations.
//
//   row_blocks  the thesis's rows-per-task preprocessing (Algorithm 7.4): whole rows, a task
//               ends where its non-zeros would pass `target_nnz` (a longer row is one task).
//               One binary search per task over the row offsets, then a compaction.
//   balanced    an even split of the non-zeros (the merge-path idea over row offsets): task t
//               covers non-zeros [t * target, (t + 1) * target), so a long row is split across
//               tasks; its pieces are added atomically and the last piece finishes the row.
//
// Neighbours: task u reads x_j for the columns j of its non-zeros; x_j is written by every task
// covering row j. N(u) is the symmetric closure of "u reads what v writes", without u itself.
// Symmetry is what lets two iterate buffers suffice in the dependency versions (task_graph.cuh).
#pragma once

#include "jacobi.hpp"

#include <apiary/sparse/device_buffer.hpp>
#include <apiary/sparse/views.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace apiary::jacobi {

enum class PartitionKind { row_blocks, balanced };

// Jacobi tasks (task_graph.cuh) with G threads per row leave a row (piece) longer than this to
// all their threads together, so that no group walks far more than the others (power-law rows).
constexpr int long_row_nnz(int group) { return 32 * group; }
// Jacobi tasks with staged rows sum a row piece of a chunk longer than this with a warp, shorter
// ones with one thread in the reference's order.
inline constexpr int staged_long_row_nnz = 128;
const char* to_string(PartitionKind k);
PartitionKind parse_partition(std::string_view s);  // InputError for unknown names

// Non-zeros [e0, e1) and the rows [r0, r1) they belong to; only r0 and r1 - 1 can be partial.
struct TaskRange {
  index_t e0, e1, r0, r1;
};

struct Partition {
  PartitionKind kind = PartitionKind::row_blocks;
  int target_nnz = 0;
  int tasks = 0;
  sparse::DeviceBuffer<TaskRange> ranges;
  sparse::DeviceBuffer<index_t> neighbor_offsets;  // tasks + 1
  sparse::DeviceBuffer<index_t> neighbors;         // N(t), sorted, t excluded
  sparse::DeviceBuffer<int> row_pieces;            // tasks covering each row (> 1: split row)
  long long edges = 0;                              // sum of |N(t)|
  int max_neighbors = 0;
  int split_rows = 0;
  int max_row_nnz = 0;  // the longest row
  int max_rows_per_task = 0;
  int max_task_nnz = 0;  // the most non-zeros of a task
  double build_ms = 0;  // GPU time of the whole build (CUDA events)
};

// Builds the partition on the GPU; `target_nnz` >= 1 (InputError otherwise).
Partition build_partition(const sparse::CsrView<float>& a, PartitionKind kind, int target_nnz);
Partition build_partition(const sparse::CsrView<double>& a, PartitionKind kind, int target_nnz);

}  // namespace apiary::jacobi
