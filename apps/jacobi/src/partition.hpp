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
// Rows inside a task (RowMapping): `groups` gives each row to a group of G threads in turn
// (G = 1, 4, 8, 32 by the average row length); `merge_path` gives each of the task's threads an
// even share of its rows + non-zeros (Merrill and Garland's merge path over the task's row
// ends and non-zeros, balance/search.hpp), so one long row cannot hold up a task: the
// partition then also holds every thread's start on that path.
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
enum class RowMapping { automatic, groups, merge_path };

// Jacobi tasks sum rows (pieces) longer than this with all their threads (task_graph.cuh).
inline constexpr int long_row_nnz = 256;
const char* to_string(PartitionKind k);
PartitionKind parse_partition(std::string_view s);  // InputError for unknown names
const char* to_string(RowMapping m);
RowMapping parse_row_mapping(std::string_view s);  // auto, groups, merge_path; InputError otherwise

// `automatic` picks merge_path when the row lengths vary more than their mean (coefficient of
// variation > 1: power-law rows), where G threads per row leave most threads of a task idle
// behind the one walking the longest row; regular matrices keep the coalesced groups.
inline constexpr double merge_path_min_variation = 1.0;

// Non-zeros [e0, e1) and the rows [r0, r1) they belong to; only r0 and r1 - 1 can be partial.
struct TaskRange {
  index_t e0, e1, r0, r1;
};

// A thread's start on its task's merge path: rows [r0, row) ended and non-zeros [e0, atom)
// taken before it (absolute indices). Thread i of task t covers starts[t * (threads + 1) + i]
// up to the next entry.
struct MergeStart {
  index_t row, atom;
};

struct Partition {
  PartitionKind kind = PartitionKind::row_blocks;
  RowMapping mapping = RowMapping::groups;  // resolved (never automatic)
  int merge_threads = 0;                    // threads per task of merge_starts (merge_path only)
  sparse::DeviceBuffer<MergeStart> merge_starts;  // tasks x (merge_threads + 1)
  double row_length_variation = 0;          // stddev / mean of the row lengths
  int target_nnz = 0;
  int tasks = 0;
  sparse::DeviceBuffer<TaskRange> ranges;
  sparse::DeviceBuffer<index_t> neighbor_offsets;  // tasks + 1
  sparse::DeviceBuffer<index_t> neighbors;         // N(t), sorted, t excluded
  sparse::DeviceBuffer<int> row_pieces;            // tasks covering each row (> 1: split row)
  long long edges = 0;                              // sum of |N(t)|
  int max_neighbors = 0;
  int split_rows = 0;
  int long_rows = 0;  // rows longer than long_row_nnz
  int max_rows_per_task = 0;
  double build_ms = 0;  // GPU time of the whole build (CUDA events)
};

// Builds the partition on the GPU; `target_nnz` >= 1 (InputError otherwise). `task_threads`
// is the Jacobi task's thread count (the merge path's shares).
Partition build_partition(const sparse::CsrView<float>& a, PartitionKind kind, int target_nnz, RowMapping mapping,
                          int task_threads);
Partition build_partition(const sparse::CsrView<double>& a, PartitionKind kind, int target_nnz, RowMapping mapping,
                          int task_threads);

}  // namespace apiary::jacobi
