// The Jacobi task graphs of thesis 7.4, on the apiary runtime. One task type does the work:
//
//   JacobiTask {t, k}   task t of the partition (partition.hpp) at iteration k: for its rows,
//                       r_k = b - A x_k, x_{k+1} = x_k + omega r_k / d, and its share of ||r_k||^2.
//                       One type per row mapping (staged or grouped, task_solver.hpp), each in
//                       graphs of its own: they differ in shared memory (JacobiShared).
//   CheckTask {k}       256 threads: ||r_k|| from the tasks' partial sums (fixed order), the
//                       decision on check iterations, then the next iteration's tasks.
//                       {k = -1} launches iteration 0 (the seed of every version).
//   ReleaseTask {t0, k} 256 threads: opens the convergence gate of tasks t0 .. t0 + 255 at k.
//
// How the versions order the work:
//   stages_phases  Jacobi and Check in alternating phases of a cyclic phase queue; task 0 of
//                  each iteration spawns that iteration's Check into the next phase.
//   stages_deps    phaseless; Check(k) waits on one dependency that each of the T tasks of
//                  iteration k resolves; it spawns iteration k + 1 and the next Check.
//   stages_inline  each task of iteration k adds its ||r||^2 share to a global sum and counts
//                  itself in: the same stage barrier as stages_deps without a Check task. Two
//                  ways to run it. In the dependency graph the last task decides and spawns
//                  all of k + 1 through the queue. In a graph of Jacobi tasks alone
//                  (InlineJacobiGraph, 128-thread blocks, megakernel, tasks of at most half a
//                  wave: task_solver.cu) each task first holds its successor (t, k + 1) in its
//                  block at the iteration's gate, the arrival count itself (ctx.hold_next_at:
//                  no queue hop, nothing to resolve), so the last arrival's atomic starts
//                  iteration k + 1; the last arriver spawns only the successors no block could
//                  hold. The decision on iteration k is taken by every task of k + 1 for
//                  itself, from the same sum and history, so it is off the barrier's path.
//   checkpoints    between check iterations every task waits only for its neighbours N(t) of
//                  the previous iteration (dependency per task, two per task by iteration
//                  parity) and spawns itself; on check iterations the tasks resolve a
//                  Checkpoint (CheckTask) instead, which decides and restarts them.
//   autonomous     no Check task: on check iterations each task adds its ||r||^2 share to a
//                  global sum, the last one decides; a task's first iteration after a check
//                  iteration K' also waits on a gate that the decision of the previous check
//                  iteration opens (ReleaseTask), so no task runs more than check_every
//                  iterations ahead of an undecided residual. A stop lets the tasks run on as
//                  no-ops to the gate, so the run ends with nothing parked.
//
// Why two (three) iterate buffers are enough: N is symmetric and every task's successor is
// spawned after its own writes, so task (t, k + 1), which overwrites x_k's rows of t, runs only
// after every (u, k) that read them. The autonomous version keeps check_every + 1 buffers so
// that x_K survives until its residual is decided.
//
// stages_inline (held) after a stop at iteration K: every task of K + 1 runs (held or spawned
// before the decision was known), writes its rows into a third iterate buffer (so x_K and
// x_{K+1} survive), takes the decision and ends there: T no-op tasks per solve. Their loads of
// the decision's inputs are issued when they start, so no task waits for them.
//
// Every x_k is the Jacobi iterate itself (not a mix of iterations): all versions stop at the
// same iteration as the CPU reference with the same check_every.
#pragma once

#include "jacobi.hpp"
#include "jacobi_gpu.hpp"
#include "partition.hpp"
#include "rounded_ops.cuh"
#include "task_solver.hpp"

#include <apiary/apiary.cuh>

#include <cuda_pipeline.h>

#include <cstdint>

namespace apiary::jacobi {

enum class TaskMode : int { stages_phases = 0, stages_deps = 1, checkpoints = 2, autonomous = 3, stages_inline = 4 };

// Everything the tasks read (device memory, through ctx.user_data).
template <class T>
struct TaskProblem {
  sparse::CsrView<T> a;
  const T* b;
  const T* d;
  T* x;  // `ring` iterate buffers of a.rows values; x_k lives in buffer k % ring
  int ring;
  T omega;
  Params p;
  const TaskRange* ranges;
  const index_t* neighbor_offsets;
  const index_t* neighbors;
  const int* pieces;        // tasks covering each row (split rows: > 1)
  double* split_sum;        // 2 x rows: the pieces' sums of split rows, by iteration parity
  int* split_arrivals;      // 2 x rows
  double* partial;          // tasks: each task's ||r_k||^2 share (Check versions)
  double* global_sum;       // 3: ||r||^2 sums, by check-iteration parity (stages_inline held: k % 3)
  unsigned* arrivals;       // 3: the same for the arrivals
  DeviceState* state;
  int tasks;
  int group;                // threads per row inside a task: 1, 4, 8 or 32 (grouped rows)
  TaskMode mode;
  double bnorm;             // ||b||_2
  int* waiting;             // stages_inline (held): 2 x tasks, by iteration parity: task t's successor is not held
  double* min_rels;         // stages_inline (held): tasks, each task's smallest checked residual so far
  int resident_rows;        // stages_inline (held), staged rows: tasks keep their rows in their block (ResidentRows)
  unsigned* resident_takes;  // one counter: how many times a task took its rows into a block (tests, reports)
};

// Row pieces longer than long_row_nnz(G) (partition.hpp) are summed by all of a task's threads
// together in a second pass, not by the G threads of the row's group: one power-law row would
// otherwise hold up its task. Up to this many per task; more are summed in the first pass.
inline constexpr int long_rows_per_pass = 64;

struct JacobiItem {
  std::int32_t t;
  std::int32_t k;
};
struct CheckItem {
  std::int32_t k;
};
struct ReleaseItem {
  std::int32_t first;
  std::int32_t k;
};

// Iteration bookkeeping shared by the tasks (check iterations are multiples of check_every and
// max_iter; their ordinal numbers them without gaps, so its parity alternates).
__device__ inline int check_ordinal(int k, const Params& p) { return (k + p.check_every - 1) / p.check_every; }
__device__ inline int next_check(int k, const Params& p) {
  const int next = (k / p.check_every + 1) * p.check_every;
  return next < p.max_iter ? next : p.max_iter;
}
// Dependencies of the runtime pool: four per task, then two for the Check task.
__device__ inline std::uint32_t iteration_dependency(int t, int k) { return 4u * t + (k & 1); }
__device__ inline std::uint32_t gate_dependency(int t, int k, const Params& p) {
  return 4u * t + 2 + (check_ordinal(k, p) & 1);
}
__device__ inline std::uint32_t check_dependency(int tasks, int k, TaskMode mode, const Params& p) {
  return 4u * tasks + ((mode == TaskMode::stages_deps ? k : check_ordinal(k, p)) & 1);
}
inline std::uint32_t dependencies_needed(int tasks) { return 4u * tasks + 2; }

template <class T, RowMapping M>
struct CheckTask;
template <class T>
struct ReleaseTask;

// Staged rows: a task streams its non-zeros through shared memory in chunks of this many (the
// CSR-stream idea): one wave of asynchronous copies brings a chunk's values, columns and row
// offsets, the gathers of x_k are issued together, then each thread sums whole rows from shared
// memory in the reference's order. A task's threads otherwise walk their rows one round after
// another, every round a chain of dependent loads (row offsets, then columns, then x).
inline constexpr int staged_chunk = 2048;

template <class T>
struct StagedRows {
  T values[staged_chunk];  // a_ij, then the products a_ij x_j
  union {
    index_t cols[staged_chunk];
    T sums[staged_chunk];  // the chunk's row sums (the columns are used up by then)
  };
  index_t offsets[staged_chunk + 1];  // of the rows that can meet the chunk
  T carry;                            // the sum so far of a row that goes on into the next chunk
  index_t next_row;                   // the first row of the next chunk
  // Row pieces longer than staged_long_row_nnz (partition.hpp) in the chunk, each summed by a
  // warp: no more than this many fit in a chunk.
  int long_count;
  int long_rows[staged_chunk / (staged_long_row_nnz + 1) + 1];
};

// A JacobiTask's shared memory: per-warp sums, two flags, the long rows of grouped rows'
// second pass; with staged rows also the staging area (41 KB in fp64). Grouped rows go without
// it: the staging area of the workers an SM holds takes that much from its L1 cache, and the
// grouped 10^6-row Laplacians ran 0.83-0.93x the time with a 64-element area instead of the
// 2,048-element one (same registers; H100, stages (inl), MK/TSK/PDC-wave, fp64), mid-size
// matrices 0.95-1.07x. Hence one task type per row mapping, each graph with its own.
struct JacobiSharedCommon {
  double warp_sums[4];
  int decided;
  int stopped;
  int long_count;
  int left_to_last;  // stages_inline (held), the last arriver: successors left to it to spawn
  double prior_squares;  // stages_inline (held): written only to make its load complete early
  index_t long_rows[long_rows_per_pass];
};
// stages_inline with held successors (megakernel): task t's successor runs in the same block,
// so the block keeps what no iteration changes for it in shared memory: the problem
// description, the task's range, its non-zeros, columns and row offsets, and b and d of its
// rows. An iteration then reads global memory once (the gathers of x_k), where staged rows
// read the problem, the range, the chunk and then x_k one after another (clock64 on an H100,
// lap2D_5pt_n100: 5,800 cycles of a task's ~11,000 went to its rows). Used for tasks without
// split or long rows whose arrays fit the staging area it shares memory with.
template <class T>
struct ResidentRows {
  TaskProblem<T> problem;
  TaskRange range;
  int n, rows;  // the task's non-zeros and rows
  // values T[n], products T[n], b T[rows], d T[rows], columns index_t[n], offsets index_t[rows + 1]
  static constexpr std::size_t header_bytes = (sizeof(TaskProblem<T>) + sizeof(TaskRange) + 2 * sizeof(int) + 15) / 16 * 16;
  alignas(16) unsigned char data[(sizeof(StagedRows<T>) - header_bytes) / 16 * 16];

  __host__ __device__ static constexpr std::size_t bytes_for(int n, int rows) {
    return (2 * std::size_t(n) + 2 * std::size_t(rows)) * sizeof(T) + (std::size_t(n) + std::size_t(rows) + 1) * sizeof(index_t);
  }
  __device__ T* values() { return reinterpret_cast<T*>(data); }
  __device__ T* products() { return values() + n; }
  __device__ T* b() { return products() + n; }
  __device__ T* d() { return b() + rows; }
  __device__ index_t* cols() { return reinterpret_cast<index_t*>(d() + rows); }
  __device__ index_t* offsets() { return cols() + n; }
};
// `data` is what is left of the staging area after the problem, the range, n and rows (to the
// 16-byte alignment of `data`): resident rows cost a block no shared memory more.
static_assert(sizeof(ResidentRows<float>) <= sizeof(StagedRows<float>) &&
                  sizeof(ResidentRows<double>) <= sizeof(StagedRows<double>),
              "resident rows fit the staging area they share memory with");

template <class T, RowMapping M>
struct JacobiShared : JacobiSharedCommon {};
template <class T>
struct JacobiShared<T, RowMapping::staged> : JacobiSharedCommon {
  // 1 + the task whose rows `resident` holds; 0: none (the megakernel zeroes task shared memory
  // when it starts, so nothing of an earlier run is ever taken for this one's).
  int resident_task;
  union {
    StagedRows<T> staged;
    ResidentRows<T> resident;
  };
};

template <class T, RowMapping M>
struct JacobiTask {
  static_assert(M == RowMapping::staged || M == RowMapping::grouped, "a Jacobi task maps its rows staged or grouped");
  using Item = JacobiItem;
  static constexpr unsigned threads = 128;
  static_assert(threads / 32 <= 4, "JacobiShared holds one sum per warp");
  static constexpr unsigned shared_bytes = sizeof(JacobiShared<T, M>);
  static constexpr const char* name = "Jacobi";
  // stages_inline holds each successor at its iteration's gate, which opens within a few µs:
  // the megakernel's worker waits for it itself (gated local hops, task_type.hpp).
  static constexpr bool waits_at_gates = true;
  template <class Ctx>
  __device__ void operator()(Worker w, const Item& item, Ctx& ctx) const;
};

template <class T, RowMapping M>
struct CheckTask {
  using Item = CheckItem;
  static constexpr unsigned threads = 256;
  static constexpr unsigned shared_bytes = threads * sizeof(double) + 16;
  static constexpr const char* name = "Check";
  template <class Ctx>
  __device__ void operator()(Worker w, const Item& item, Ctx& ctx) const;
};

template <class T>
struct ReleaseTask {
  using Item = ReleaseItem;
  static constexpr unsigned threads = 256;
  static constexpr unsigned shared_bytes = 0;
  static constexpr const char* name = "Release";
  template <class Ctx>
  __device__ void operator()(Worker w, const Item& item, Ctx& ctx) const {
    const auto& P = *ctx.template user_data<TaskProblem<T>>();
    const int t = item.first + static_cast<int>(w.rank());
    if (t < P.tasks) ctx.resolve(ctx.dependency(gate_dependency(t, item.k, P.p)));
  }
};

template <class T, RowMapping M>
using PhaseJacobiGraph = CyclicPhaseQueue<Phase<JacobiTask<T, M>>, Phase<CheckTask<T, M>>>;
template <class T, RowMapping M>
using DependencyJacobiGraph = PhaseQueue<Phaseless<JacobiTask<T, M>, CheckTask<T, M>, ReleaseTask<T>>>;
// stages_inline: Jacobi tasks alone (seeded with iteration 0), so that its blocks can be as
// narrow as one Jacobi worker, which holds the successor of the task it ran (one hand-off
// slot per block).
template <class T, RowMapping M>
using InlineJacobiGraph = PhaseQueue<Phaseless<JacobiTask<T, M>>>;

namespace task_detail {

// What finishing row i reads besides its sum: b_i, d_i and x_k[i].
template <class T>
struct RowEnds {
  T b, d, x;
};
template <class T>
__device__ inline RowEnds<T> load_row_ends(const TaskProblem<T>& P, index_t row, const T* xin) {
  return {__ldg(&P.b[row]), __ldg(&P.d[row]), __ldcg(&xin[row])};
}

// x_{k+1}[row] from the row's sum; returns r^2.
template <class T>
__device__ inline double finish_row(const TaskProblem<T>& P, index_t row, T sum, RowEnds<T> ends, T* xout) {
  const T r = sub_rn(ends.b, sum);
  xout[row] = damped_update(ends.x, P.omega, r, ends.d);
  return static_cast<double>(r) * static_cast<double>(r);
}
template <class T>
__device__ inline double finish_row(const TaskProblem<T>& P, index_t row, T sum, const T* xin, T* xout) {
  return finish_row(P, row, sum, load_row_ends(P, row, xin), xout);
}

// A piece of a split row: add it; the last piece finishes the row (returns its r^2, else 0).
template <class T>
__device__ inline double add_piece(const TaskProblem<T>& P, index_t row, int k, T piece, const T* xin, T* xout) {
  const std::size_t slot = static_cast<std::size_t>(k & 1) * P.a.rows + row;
  atomicAdd(&P.split_sum[slot], static_cast<double>(piece));
  __threadfence();
  if (atomicAdd(&P.split_arrivals[slot], 1) != P.pieces[row] - 1) return 0;
  __threadfence();
  // The next use of this slot is iteration k + 2, which the dependencies order after this task.
  const double total = __longlong_as_double(atomicExch(reinterpret_cast<unsigned long long*>(&P.split_sum[slot]), 0ull));
  P.split_arrivals[slot] = 0;
  return finish_row(P, row, static_cast<T>(total), xin, xout);
}

// Finishes row `row` of iteration k from its sum (or, for a piece of a split row, adds the piece
// and finishes the row if it is the last one); returns the row's r^2 when finished here.
template <class T>
__device__ inline double settle_row(const TaskProblem<T>& P, const TaskRange r, index_t row, int k, T sum, const T* xin,
                                    T* xout) {
  const bool complete = P.a.row_offsets[row] >= r.e0 && P.a.row_offsets[row + 1] <= r.e1;
  return complete ? finish_row(P, row, sum, xin, xout) : add_piece(P, row, k, sum, xin, xout);
}

// Pass 1 over the rows of one task, G threads per row; row pieces longer than long_row_nnz(G)
// are listed in `sh` for pass 2 (or, when the list is full, summed here). Returns this
// thread's share of ||r_k||^2.
template <class T, int G>
__device__ double update_rows(const TaskProblem<T>& P, const TaskRange r, int k, unsigned rank, unsigned size,
                              JacobiSharedCommon& sh) {
  const T* xin = P.x + static_cast<std::size_t>(k % P.ring) * P.a.rows;
  T* xout = P.x + static_cast<std::size_t>((k + 1) % P.ring) * P.a.rows;
  const int lane = static_cast<int>(rank) % G;
  const int groups = static_cast<int>(size) / G;
  const int group_in_warp = static_cast<int>(rank % 32) / G;
  double rr = 0;
  // Warp-uniform loop (the warp's first group decides) so that every lane joins the shuffles.
  for (index_t row = r.r0 + static_cast<int>(rank) / G; row - group_in_warp < r.r1; row += groups) {
    bool active = row < r.r1;
    T s = 0;
    if (active) {
      const index_t rb = P.a.row_offsets[row], re = P.a.row_offsets[row + 1];
      const index_t lo = rb > r.e0 ? rb : r.e0, hi = re < r.e1 ? re : r.e1;
      // Lane 0 lists a long piece for pass 2; a full list leaves it to this group.
      int listed = 0;
      if (hi - lo > long_row_nnz(G) && lane == 0) {
        const int slot = atomicAdd(&sh.long_count, 1);
        if (slot < long_rows_per_pass) {
          sh.long_rows[slot] = row;
          listed = 1;
        }
      }
      if constexpr (G > 1) listed = __shfl_sync(__activemask(), listed, 0, G);
      if (listed) active = false;
      if (active)
        for (index_t e = lo + lane; e < hi; e += G)
          s = add_rn(s, mul_rn(__ldg(&P.a.values[e]), __ldcg(&xin[__ldg(&P.a.col_indices[e])])));
    }
    if constexpr (G > 1) {
#pragma unroll
      for (int off = G / 2; off > 0; off /= 2) s = add_rn(s, __shfl_down_sync(0xffffffffu, s, off, G));
    }
    if (active && lane == 0) rr += settle_row(P, r, row, k, s, xin, xout);
  }
  return rr;
}

// Pass 2: each listed long row piece summed by all threads of the task (fixed order per
// thread, then a fixed-shape reduction), settled by thread 0. Returns thread 0's r^2 share.
template <class T>
__device__ double update_long_rows(const TaskProblem<T>& P, const TaskRange r, int k, Worker w, JacobiSharedCommon& sh) {
  const T* xin = P.x + static_cast<std::size_t>(k % P.ring) * P.a.rows;
  T* xout = P.x + static_cast<std::size_t>((k + 1) % P.ring) * P.a.rows;
  const int count = sh.long_count < long_rows_per_pass ? sh.long_count : long_rows_per_pass;  // read after a sync
  double rr = 0;
  for (int i = 0; i < count; ++i) {
    const index_t row = sh.long_rows[i];
    const index_t rb = P.a.row_offsets[row], re = P.a.row_offsets[row + 1];
    const index_t lo = rb > r.e0 ? rb : r.e0, hi = re < r.e1 ? re : r.e1;
    T s = 0;
    for (index_t e = lo + static_cast<index_t>(w.rank()); e < hi; e += w.size())
      s = add_rn(s, mul_rn(__ldg(&P.a.values[e]), __ldcg(&xin[__ldg(&P.a.col_indices[e])])));
    for (int off = 16; off > 0; off /= 2) s = add_rn(s, __shfl_down_sync(0xffffffffu, s, off));
    T* sums = reinterpret_cast<T*>(sh.warp_sums);
    w.sync();  // the previous row's sums were read
    if (w.rank() % 32 == 0) sums[w.rank() / 32] = s;
    w.sync();
    if (w.rank() == 0) {
      T total = 0;
      for (unsigned j = 0; j < w.size() / 32; ++j) total = add_rn(total, sums[j]);
      rr += settle_row(P, r, row, k, total, xin, xout);
    }
  }
  w.sync();  // warp_sums are reused by the caller
  return rr;
}

// Where a load of x_k may hit. Every task starts after an acquire at GPU scope that follows
// the writes of x_k it reads (the gate's poll, the queue claim's, or a kernel boundary), and
// an acquire invalidates the SM's L1, so loads cached in L1 see those writes as loads through
// L2 do (PTX memory model: the cache operator of a weak load is a hint, not a weaker
// ordering). `l1`: gathers that meet a 32-byte sector another gather of the SM fetched hit L1
// instead of asking L2 for the whole sector again for one 4- or 8-byte value.
enum class XCache { l2, l1 };
// Resident rows load x_k through L1 in both precisions (their gathers by cp.async, which copies
// 4 and 8 bytes through L1 too: gather_products_async). In fp64 that paid only once the
// megakernel left the SM's unused shared memory to L1 (fit_shared_carveout): same-machine
// A/B on an H200 (stages (inl), MK, the 10 suite matrices up to 10^6 non-zeros; docs/jacobi.md
// "Kept: L1 for the megakernel and gathers by cp.async"): fp64 through L1 0.96x the time in
// geomean with the carveout (A5 0.86x), 1.00x without.
template <XCache C, class T>
__device__ inline T load_x(const T* p) {
  if constexpr (C == XCache::l1) return __ldca(p);
  else return __ldcg(p);
}

// products[i] = values[i] * x_k[cols[i]] for i < n over a worker's threads, eight gathers of x_k
// in flight per thread (`products` may be `values`: staged rows multiply in place).
template <XCache C = XCache::l2, class T>
__device__ inline void gather_products(const T* values, const index_t* cols, int n, const T* xin, int rank, int size,
                                       T* products) {
  constexpr int batch = 8;
  for (int base = rank; base < n; base += batch * size) {
    T xv[batch];
#pragma unroll
    for (int u = 0; u < batch; ++u) {
      const int i = base + u * size;
      xv[u] = i < n ? load_x<C>(&xin[cols[i]]) : T(0);
    }
#pragma unroll
    for (int u = 0; u < batch; ++u) {
      const int i = base + u * size;
      if (i < n) products[i] = mul_rn(values[i], xv[u]);
    }
  }
}

// products[i] = values[i] * x_k[cols[i]] for i < n over a worker's threads, every gather of the
// thread in flight at once: each copies its value of x_k into products[i] asynchronously
// (cp.async, through L1), which costs no register per gather, so that a task's gathers take
// one round trip however many there are (gather_products keeps eight per thread in registers:
// g2_circuit_like's 1,292 non-zeros per task took two rounds). Each thread multiplies only the
// products it copied, after waiting for its own copies, so no barrier is needed in between.
// Measured against gather_products on an H200: 0.94x (fp64) / 0.94x (fp32) the time in
// geomean, g2_circuit_like 0.84x / 0.90x (docs/jacobi.md, same section as above).
template <class T>
__device__ inline void gather_products_async(const T* values, const index_t* cols, int n, const T* xin, int rank,
                                             int size, T* products) {
#pragma unroll 4
  for (int i = rank; i < n; i += size) __pipeline_memcpy_async(&products[i], &xin[cols[i]], sizeof(T));
  __pipeline_commit();
  __pipeline_wait_prior(0);
  for (int i = rank; i < n; i += size) products[i] = mul_rn(values[i], products[i]);
}

// Staged rows (StagedRows above), chunk by chunk over the task's non-zeros [e0, e1). The rows
// that meet a chunk are at most staged_chunk: every row holds its diagonal (checked_diagonal).
// A row running on past the chunk hands its sum so far to the next chunk (carry). Each row
// piece of up to staged_long_row_nnz non-zeros in a chunk is summed in order by one thread (the
// reference's arithmetic); a longer one by a warp, so that one power-law row does not hold up
// the task (measured: a 20,000-long row summed by one thread bounded the iteration).
// Returns this thread's share of ||r_k||^2.
template <class T>
__device__ double update_rows_staged(const TaskProblem<T>& P, const TaskRange r, int k, Worker w,
                                     StagedRows<T>& st) {
  const T* xin = P.x + static_cast<std::size_t>(k % P.ring) * P.a.rows;
  T* xout = P.x + static_cast<std::size_t>((k + 1) % P.ring) * P.a.rows;
  const int rank = static_cast<int>(w.rank()), size = static_cast<int>(w.size());
  double rr = 0;
  index_t first = r.r0;
  for (index_t c0 = r.e0; c0 < r.e1; c0 += staged_chunk) {
    const index_t c1 = c0 + staged_chunk < r.e1 ? c0 + staged_chunk : r.e1;
    const int n = c1 - c0;
    const int rows = r.r1 - first < staged_chunk ? r.r1 - first : staged_chunk;
    // 1. The chunk's values, columns and row offsets, copied asynchronously all at once.
    for (int i = rank; i < n; i += size) {
      __pipeline_memcpy_async(&st.values[i], &P.a.values[c0 + i], sizeof(T));
      __pipeline_memcpy_async(&st.cols[i], &P.a.col_indices[c0 + i], sizeof(index_t));
    }
    for (int i = rank; i <= rows; i += size)
      __pipeline_memcpy_async(&st.offsets[i], &P.a.row_offsets[first + i], sizeof(index_t));
    __pipeline_commit();
    // This thread's first row of the chunk: what finishing it reads, loaded while the chunk
    // arrives instead of after the sums (in small tasks most threads have one row).
    RowEnds<T> ends{};
    if (rank < rows) ends = load_row_ends(P, first + rank, xin);
    const T carried = st.carry;  // written by the previous chunk's step 4, read before step 3's writes
    if (rank == 0) st.long_count = 0;
    __pipeline_wait_prior(0);
    w.sync();
    // 2. The products a_ij x_j, in place.
    gather_products(st.values, st.cols, n, xin, rank, size, st.values);
    w.sync();
    // 3. Row sums, one thread per row, in order; long pieces are listed for 3b.
    for (int i = rank; i < rows; i += size) {
      const index_t rb = st.offsets[i];
      if (rb >= c1) break;
      const index_t re = st.offsets[i + 1];
      const index_t lo = rb > c0 ? rb : c0, hi = re < c1 ? re : c1;
      if (hi - lo > staged_long_row_nnz) {
        st.long_rows[atomicAdd(&st.long_count, 1)] = i;
        continue;
      }
      T sum = rb < c0 && c0 > r.e0 ? carried : T(0);  // a row begun in the previous chunk
      for (index_t e = lo; e < hi; ++e) sum = add_rn(sum, st.values[e - c0]);
      st.sums[i] = sum;
    }
    w.sync();
    // 3b. Long pieces, a warp each: strided sums, then a shuffle tree.
    if (const int longs = st.long_count; longs > 0) {
      const int lane = rank % 32;
      for (int j = rank / 32; j < longs; j += size / 32) {
        const int i = st.long_rows[j];
        const index_t rb = st.offsets[i], re = st.offsets[i + 1];
        const index_t lo = rb > c0 ? rb : c0, hi = re < c1 ? re : c1;
        T sum = 0;
        for (index_t e = lo + lane; e < hi; e += 32) sum = add_rn(sum, st.values[e - c0]);
        for (int off = 16; off > 0; off /= 2) sum = add_rn(sum, __shfl_down_sync(0xffffffffu, sum, off));
        if (lane == 0) st.sums[i] = rb < c0 && c0 > r.e0 ? add_rn(carried, sum) : sum;
      }
      w.sync();
    }
    // 4. Finish the rows that end in this chunk; the row that goes on past it (if any) carries.
    for (int i = rank; i < rows; i += size) {
      const index_t rb = st.offsets[i];
      if (rb >= c1) break;
      const index_t re = st.offsets[i + 1];
      const index_t row = first + i;
      if (re >= c1) st.next_row = re > c1 ? row : row + 1;  // the chunk's last row
      if (re > c1 && c1 < r.e1) {
        st.carry = st.sums[i];
        continue;
      }
      const bool complete = rb >= r.e0 && re <= r.e1;
      if (!complete)
        rr += add_piece(P, row, k, st.sums[i], xin, xout);
      else
        rr += i == rank ? finish_row(P, row, st.sums[i], ends, xout) : finish_row(P, row, st.sums[i], xin, xout);
    }
    w.sync();
    first = st.next_row;
  }
  return rr;
}

// Resident rows (ResidentRows): task t takes its rows into its block's shared memory; false,
// with nothing kept, where they do not fit (the caller then stages them). All threads.
template <class T>
__device__ bool take_rows_resident(const TaskProblem<T>& P, int t, Worker w, int& resident_task, ResidentRows<T>& R) {
  const int rank = static_cast<int>(w.rank()), size = static_cast<int>(w.size());
  if (rank == 0) resident_task = 0;  // the memory is about to change
  const TaskRange r = P.ranges[t];
  const int n = r.e1 - r.e0, rows = r.r1 - r.r0;
  if (ResidentRows<T>::bytes_for(n, rows) > sizeof(R.data)) return false;
  static_assert(sizeof(TaskProblem<T>) % 8 == 0, "the problem is copied in words");
  for (int i = rank; i < static_cast<int>(sizeof(TaskProblem<T>) / 8); i += size)
    reinterpret_cast<std::uint64_t*>(&R.problem)[i] = reinterpret_cast<const std::uint64_t*>(&P)[i];
  if (rank == 0) {
    R.range = r;
    R.n = n;
    R.rows = rows;
  }
  w.sync();  // n and rows place the arrays
  for (int i = rank; i < n; i += size) {
    __pipeline_memcpy_async(&R.values()[i], &P.a.values[r.e0 + i], sizeof(T));
    __pipeline_memcpy_async(&R.cols()[i], &P.a.col_indices[r.e0 + i], sizeof(index_t));
  }
  for (int i = rank; i <= rows; i += size) __pipeline_memcpy_async(&R.offsets()[i], &P.a.row_offsets[r.r0 + i], sizeof(index_t));
  for (int i = rank; i < rows; i += size) {
    __pipeline_memcpy_async(&R.b()[i], &P.b[r.r0 + i], sizeof(T));
    __pipeline_memcpy_async(&R.d()[i], &P.d[r.r0 + i], sizeof(T));
  }
  __pipeline_commit();
  __pipeline_wait_prior(0);
  w.sync();
  if (rank == 0) {
    resident_task = t + 1;
    atomicAdd(P.resident_takes, 1u);  // once per task and block, not per iteration
  }
  return true;
}

// One iteration over resident rows: the products a_ij x_j (all of a thread's gathers of x_k in
// flight at once, through L1: gather_products_async), then each row summed in order by one
// thread (the reference's arithmetic) and finished. `issue_loads()` runs before the gathers and `await_loads()` after
// them, so that what the caller loads travels with the gathers instead of after them. Returns
// this thread's share of ||r_k||^2.
template <class T, class IssueLoads, class AwaitLoads>
__device__ double update_rows_resident(ResidentRows<T>& R, int k, Worker w, IssueLoads&& issue_loads,
                                       AwaitLoads&& await_loads) {
  const TaskProblem<T>& P = R.problem;
  const T* xin = P.x + static_cast<std::size_t>(k % P.ring) * P.a.rows;
  T* xout = P.x + static_cast<std::size_t>((k + 1) % P.ring) * P.a.rows;
  const int rank = static_cast<int>(w.rank()), size = static_cast<int>(w.size());
  const int n = R.n, rows = R.rows;
  const index_t r0 = R.range.r0, e0 = R.range.e0;
  const T* values = R.values();
  T* products = R.products();
  const index_t* cols = R.cols();
  // x_k of this thread's first early_rows rows, loaded ahead of the gathers: loaded after a
  // row's sum, each further row of the thread cost a round trip of its own (tasks of short
  // rows give a thread several: g2_circuit_like's up to 4, finan512_like's 2).
  constexpr int early_rows = 4;
  T x_early[early_rows];
#pragma unroll
  for (int j = 0; j < early_rows; ++j) {
    const int i = rank + j * size;
    x_early[j] = i < rows ? load_x<XCache::l1>(&xin[r0 + i]) : T(0);
  }
  issue_loads();
  gather_products_async(values, cols, n, xin, rank, size, products);
  await_loads();
  w.sync();
  const index_t* offsets = R.offsets();
  const T* b = R.b();
  const T* d = R.d();
  auto finish = [&](int i, T x) {
    const index_t lo = offsets[i] - e0, hi = offsets[i + 1] - e0;
    T sum = 0;
    for (index_t e = lo; e < hi; ++e) sum = add_rn(sum, products[e]);
    return finish_row(P, r0 + i, sum, RowEnds<T>{b[i], d[i], x}, xout);
  };
  double rr = 0;
#pragma unroll
  for (int j = 0; j < early_rows; ++j)
    if (const int i = rank + j * size; i < rows) rr += finish(i, x_early[j]);
  for (int i = rank + early_rows * size; i < rows; i += size)
    rr += finish(i, load_x<XCache::l1>(&xin[r0 + i]));
  return rr;
}

template <class T, RowMapping M>
__device__ double update_task_rows(const TaskProblem<T>& P, const TaskRange r, int k, Worker w, JacobiShared<T, M>& sh) {
  if constexpr (M == RowMapping::staged) {
    return update_rows_staged(P, r, k, w, sh.staged);
  } else {
    if (w.rank() == 0) sh.long_count = 0;
    w.sync();
    double rr = 0;
    switch (P.group) {
      case 1: rr = update_rows<T, 1>(P, r, k, w.rank(), w.size(), sh); break;
      case 4: rr = update_rows<T, 4>(P, r, k, w.rank(), w.size(), sh); break;
      case 8: rr = update_rows<T, 8>(P, r, k, w.rank(), w.size(), sh); break;
      default: rr = update_rows<T, 32>(P, r, k, w.rank(), w.size(), sh); break;
    }
    w.sync();
    return rr + update_long_rows(P, r, k, w, sh);
  }
}

// Sum over the worker's threads; the total is valid in rank 0.
__device__ inline double worker_sum(Worker w, double v, double* warp_sums) {
  for (int off = 16; off > 0; off /= 2) v += __shfl_down_sync(0xffffffffu, v, off);
  if (w.rank() % 32 == 0) warp_sums[w.rank() / 32] = v;
  w.sync();
  double total = 0;
  if (w.rank() == 0)
    for (unsigned i = 0; i < w.size() / 32; ++i) total += warp_sums[i];
  return total;
}

__device__ inline int load_status(const DeviceState* s) {
  return load_relaxed(const_cast<int&>(s->status));
}

// What a decision reads besides ||r_k||^2. Both fields were last written before the deciding
// task's iteration was released (bnorm before the run, min_rel by the previous decision, which
// spawned or opened the gate of this iteration), so a task may load them before it arrives:
// the last arriver then has them at hand instead of waiting two more round trips for them.
struct DecisionInputs {
  double bnorm;
  double min_rel;
};
__device__ inline DecisionInputs load_decision_inputs(const DeviceState* s) {
  // Fields another SM wrote: read them from L2, not a stale L1 line.
  return {__ldcg(&s->bnorm), __ldcg(&s->min_rel)};
}

// The decision on ||r_k||^2 (thread 0 of a Check task or of the last arriving task).
// Returns the status; while running the state points at x_{k+1}.
__device__ inline int decide(DeviceState* s, int k, double squares, const Params& p, DecisionInputs in) {
  const double rel = sqrt(squares) / in.bnorm;
  s->rel = rel;
  int status = 0;
  if (is_check_iteration(k, p)) {
    double min_rel = in.min_rel;
    status = jacobi_decide(rel, k, p, min_rel);
    s->min_rel = min_rel;
  }
  s->k = status != 0 ? k : k + 1;
  if (status != 0) store_release(s->status, status);
  return status;
}

// Thread 0 adds this task's share of ||r||^2 to the global sum of slot s and counts the task
// in; the task that arrives last takes the sum (resetting the slot) and decides. Returns the
// decision's status in that task, -1 in the others. The fences order this task's x_{k+1} and
// share before its arrival, and every arrival before the last task's reads. No fence after
// the decision: what the last task does next (spawn the next iteration, spawn the Release
// tasks, or stop with a release store of the status) publishes it with a release of its own,
// after the worker's barrier.
template <class T>
__device__ inline int arrive_and_decide(const TaskProblem<T>& P, int s, int k, double share) {
  const DecisionInputs inputs = load_decision_inputs(P.state);
  atomicAdd(&P.global_sum[s], share);
  __threadfence();
  if (atomicAdd(&P.arrivals[s], 1u) != static_cast<unsigned>(P.tasks) - 1) return -1;
  __threadfence();
  const double squares = __longlong_as_double(atomicExch(reinterpret_cast<unsigned long long*>(&P.global_sum[s]), 0ull));
  P.arrivals[s] = 0;
  return decide(P.state, k, squares, P.p, inputs);
}

// Resolves the neighbours' dependencies for iteration k + 1 and spawns (t, k + 1) behind its own.
template <class Task, class T, class Ctx>
__device__ void continue_with_neighbours(const TaskProblem<T>& P, Worker w, int t, int k, Ctx& ctx) {
  const int next = k + 1;
  const bool gated = P.mode == TaskMode::autonomous && is_check_iteration(next, P.p);
  auto dependency_of = [&](int task) {
    return gated ? gate_dependency(task, next, P.p) : iteration_dependency(task, next);
  };
  const index_t first = P.neighbor_offsets[t], last = P.neighbor_offsets[t + 1];
  for (index_t i = first + static_cast<index_t>(w.rank()); i < last; i += w.size())
    ctx.resolve(ctx.dependency(dependency_of(P.neighbors[i])));
  if (w.rank() == 0) {
    const std::int32_t waits = static_cast<std::int32_t>(last - first) + (gated ? 1 : 0);
    ctx.template spawn_when<Task>(ctx.dependency(dependency_of(t)), JacobiItem{t, next}, waits);
  }
}

// stages_inline with held successors (InlineJacobiGraph): a ring of three arrival words and
// sums, slot k % 3 for iteration k. Task t of iteration k adds its ||r_k||^2 share (check
// iterations) and counts itself in at slot k % 3; bit 16 up counts the tasks whose successor
// is not held (the last arriver spawns those). The held successors wait at the slot's gate
// (ctx.hold_next_at): open once its low 16 bits reach T, i.e. with the last arrival's atomic.
// Nobody decides at the arrival: every task of iteration k + 1 decides iteration k for itself
// when it starts (decide_prior), from the same sum and history, so all take the same decision.
inline constexpr unsigned spawned_unit = 1u << 16;

template <class T>
__device__ inline Gate iteration_gate(const TaskProblem<T>& P, int k) {
  return Gate{&P.arrivals[k % 3], spawned_unit - 1, static_cast<unsigned>(P.tasks)};
}

// What task (t, k) needs to decide iteration k - 1, loaded by thread 0 when the task starts so
// that the round trips hide behind its rows: ||r_{k-1}||^2 (complete: every task of k - 1
// arrived before this one started) and the smallest checked residual before it, which each
// task keeps for itself (min_rels[t], written by its predecessor).
struct PriorDecision {
  double squares;
  double min_rel;
  double bnorm;
};
template <class T>
__device__ inline PriorDecision load_prior(const TaskProblem<T>& P, int t, int k) {
  if (k == 0 || !is_check_iteration(k - 1, P.p)) return {0, 0, 1};
  return {__ldcg(&P.global_sum[(k - 1) % 3]), __ldcg(&P.min_rels[t]), P.bnorm};
}

// Thread 0 of task (t, k): the decision on iteration k - 1 (0: go on). Task 0 records a stop
// for the host; the others only end.
template <class T>
__device__ inline int decide_prior(const TaskProblem<T>& P, int t, int k, PriorDecision in) {
  if (k == 0 || !is_check_iteration(k - 1, P.p)) return 0;
  const double rel = sqrt(in.squares) / in.bnorm;
  double min_rel = in.min_rel;
  const int status = jacobi_decide(rel, k - 1, P.p, min_rel);
  if (min_rel != in.min_rel) P.min_rels[t] = min_rel;  // published by this task's arrival
  if (status != 0 && t == 0) {
    DeviceState* s = P.state;
    s->rel = rel;
    s->min_rel = min_rel;
    s->k = k - 1;
    store_release(s->status, status);
  }
  return status;
}

// Thread 0 of task (t, k), after its rows: arrives at gate k % 3 (`held`: its successor waits
// there). Returns the arrival word before this arrival. Task 0 first clears slot (k + 1) % 3
// for iteration k + 1: iteration k - 2 used it, and every reader of it (the tasks of k - 1,
// and the blocks that held them) is past it, since all of k - 1 arrived before k started; no
// task of k + 1 arrives before this arrival, which the fence orders after the clearing.
template <class T>
__device__ inline unsigned arrive_at_gate(const TaskProblem<T>& P, int t, int k, double share, bool held) {
  if (t == 0) {
    P.arrivals[(k + 1) % 3] = 0;
    P.global_sum[(k + 1) % 3] = 0;
  }
  // Read by the last arriver only when some successor is not held. Double-buffered: the tasks
  // of k + 1 may start before the last arriver of k has read it, not those of k + 2.
  P.waiting[(k & 1) * P.tasks + t] = held ? 0 : 1;
  if (is_check_iteration(k, P.p)) atomicAdd(&P.global_sum[k % 3], share);
  __threadfence();  // x_{k+1}'s rows (the worker's barrier before), the share, min_rels[t]
  return atomicAdd(&P.arrivals[k % 3], held ? 1u : 1u + spawned_unit);
}

// stages_inline (held), after task t of iteration k summed its rows: unless the solve stopped
// at iteration k - 1, hold (t, k + 1) at gate k where the block can, and arrive; the last
// arriver spawns the successors no block could hold (also after a stop: they end as no-ops).
template <class Task, class T, class Shared, class Ctx>
__device__ void finish_gated_stage(const TaskProblem<T>& P, Worker w, int t, int k, double total, PriorDecision prior,
                                   Shared& sh, Ctx& ctx) {
  if (w.rank() == 0) {
    int left = 0;  // the last arriver: successors left to it, its own included
    bool held = false;
    if (decide_prior(P, t, k, prior) == 0) {
      held = ctx.template hold_next_at<Task>(iteration_gate(P, k), JacobiItem{t, k + 1});
      const unsigned before = arrive_at_gate(P, t, k, total, held);
      if ((before & (spawned_unit - 1)) == static_cast<unsigned>(P.tasks) - 1) {
        left = static_cast<int>(before / spawned_unit) + (held ? 0 : 1);
        if (left > 0) __threadfence();  // acquire: the others' waiting flags
      }
    }
    sh.left_to_last = left;
    sh.decided = held ? 1 : 0;  // here: whether its own successor is held
  }
  w.sync();
  const int left = sh.left_to_last;
  if (left == 0) return;  // not the last arriver, or nothing left to it
  const bool own_held = sh.decided != 0;
  if (left > (own_held ? 0 : 1)) {
    for (int u = static_cast<int>(w.rank()); u < P.tasks; u += static_cast<int>(w.size()))
      if (u != t && __ldcg(&P.waiting[(k & 1) * P.tasks + u]) != 0) ctx.template spawn<Task>(JacobiItem{u, k + 1});
    // This task's own successor starts only after every flag was read: iteration k + 1 cannot
    // end without it, so no task of k + 2 rewrites a flag of this parity that is still read.
    w.sync();
  }
  if (!own_held && w.rank() == 0) ctx.template spawn_next<Task>(JacobiItem{t, k + 1});
}

}  // namespace task_detail

template <class T, RowMapping M>
template <class Ctx>
__device__ void JacobiTask<T, M>::operator()(Worker w, const Item& item, Ctx& ctx) const {
  using namespace task_detail;
  const auto& P = *ctx.template user_data<TaskProblem<T>>();
  const int t = item.t, k = item.k;
  // Autonomous runs go on as no-ops after a stop, up to the gate (see the header comment).
  // One read for the whole worker, so that its threads take the same branches.
  JacobiShared<T, M>& sh = *w.shared<JacobiShared<T, M>>();
  // stages_inline has a graph of its own (Jacobi tasks alone), compiled with this branch alone:
  // its protocol then costs the other versions' kernels no registers.
  if constexpr (Ctx::Traits::template queue_of<CheckTask<T, M>> == ~0u) {
    // The decision on iteration k - 1 needs three loads: issued with the rows' first one and
    // made to complete with it (the store to shared memory waits for them), so that the
    // decision after the rows has them at hand (clock64 on an H100, lap2D_5pt_n100: decision
    // and hold 1,560 -> 1,276 cycles per task). With resident rows, issued before the gathers
    // and awaited after them (after them, both, they cost thread 0 a round trip of their own
    // before the worker's barrier).
    PriorDecision prior{0, 0, 1};
    auto issue_decision = [&](const TaskProblem<T>& Q) {
      if (w.rank() == 0) prior = load_prior(Q, t, k);
    };
    auto await_decision = [&] {
      if (w.rank() == 0) sh.prior_squares = prior.squares;
    };
    auto load_decision = [&](const TaskProblem<T>& Q) {
      issue_decision(Q);
      await_decision();
    };
    if constexpr (M == RowMapping::staged) {
      // A block that ran this task's predecessor still holds its rows: no global read but x_k.
      if (sh.resident_task == t + 1 || (P.resident_rows && take_rows_resident(P, t, w, sh.resident_task, sh.resident))) {
        const TaskProblem<T>& Q = sh.resident.problem;
        const double rr = update_rows_resident(sh.resident, k, w, [&] { issue_decision(Q); }, await_decision);
        finish_gated_stage<JacobiTask>(Q, w, t, k, worker_sum(w, rr, sh.warp_sums), prior, sh, ctx);
        return;
      }
      if (w.rank() == 0) sh.resident_task = 0;  // staged rows overwrite what it held
    }
    const TaskRange range = P.ranges[t];
    load_decision(P);
    const double total = worker_sum(w, update_task_rows(P, range, k, w, sh), sh.warp_sums);
    finish_gated_stage<JacobiTask>(P, w, t, k, total, prior, sh, ctx);
    return;
  } else {
  if (P.mode == TaskMode::autonomous) {
    if (w.rank() == 0) sh.stopped = load_status(P.state);
    w.sync();
  }
  const bool stopped = P.mode == TaskMode::autonomous && sh.stopped != 0;
  double rr = 0;
  if (!stopped) rr = update_task_rows(P, P.ranges[t], k, w, sh);
  // No fence per thread here: worker_sum's barrier orders every thread's x_{k+1} before
  // whatever follows it, and what lets a reader run (the arrival's fence, a resolve, a
  // spawn's publish, the batch's finish) is a release after that barrier, which covers the
  // writes of the whole worker (releases are cumulative; cooperative groups' grid sync is
  // the same pattern: a barrier, then one thread's fence).
  const double total = worker_sum(w, rr, sh.warp_sums);
  const bool check = is_check_iteration(k, P.p);
  switch (P.mode) {
    case TaskMode::stages_phases:
      if (w.rank() == 0) {
        P.partial[t] = total;
        if constexpr (Ctx::Traits::template queue_of<CheckTask<T, M>> != ~0u)
          if (t == 0) ctx.template spawn<CheckTask<T, M>>(CheckItem{k});  // runs in the next phase
      }
      return;
    case TaskMode::stages_deps:
      if (w.rank() == 0) {
        // The resolution's release publishes partial[t]: a fence of its own before it would
        // cost another ~0.25 us on the iteration's critical path (docs/benchmarks.md).
        P.partial[t] = total;
        ctx.resolve(ctx.dependency(check_dependency(P.tasks, k, P.mode, P.p)));
      }
      return;
    case TaskMode::stages_inline: {
      // In this graph (the wide blocks, where a slot is not a task's own): no held waits. The
      // last task of iteration k spawns all of k + 1 through the queue, if the solve goes on.
      // (Handing this task's own successor off to its block instead measured 1.15-1.28x
      // slower on A5/A6 under MK and 1.2-1.27x under TSK/PDC (H200): a one-wave iteration
      // then has one worker slot fewer, and a block runs two tasks in a row.)
      int* status = &sh.decided;
      if (w.rank() == 0) *status = arrive_and_decide(P, k & 1, k, total);
      w.sync();
      if (*status == 0)
        for (int u = static_cast<int>(w.rank()); u < P.tasks; u += static_cast<int>(w.size()))
          ctx.template spawn<JacobiTask>(JacobiItem{u, k + 1});
      return;
    }
    case TaskMode::checkpoints:
      if (check) {
        if (w.rank() == 0) {
          P.partial[t] = total;  // published by the resolution's release, as above
          ctx.resolve(ctx.dependency(check_dependency(P.tasks, k, P.mode, P.p)));
        }
        return;
      }
      break;
    case TaskMode::autonomous:
      if constexpr (Ctx::Traits::template queue_of<ReleaseTask<T>> != ~0u) {
        if (check && stopped) return;  // the gated iteration after a stop: the run ends here
        // Thread 0 adds this task's share; the last task of the iteration decides.
        int* decided = &sh.decided;
        if (check && w.rank() == 0) *decided = arrive_and_decide(P, check_ordinal(k, P.p) & 1, k, total) >= 0;
        if (check) w.sync();
        // Open the gate of the next check iteration, also after a stop (the tasks end there).
        // (Resolving the gates from this task directly instead measured no faster under the
        // megakernel and ~10x slower under TSK and PDC-wave on an H200, so Release tasks do it.)
        if (check && *decided && k < P.p.max_iter && w.rank() == 0) {
          const int gated = next_check(k, P.p);
          for (int first = 0; first < P.tasks; first += ReleaseTask<T>::threads)
            ctx.template spawn<ReleaseTask<T>>(ReleaseItem{first, gated});
        }
      }
      break;
  }
  if (k >= P.p.max_iter) return;
  continue_with_neighbours<JacobiTask>(P, w, t, k, ctx);
  }
}

template <class T, RowMapping M>
template <class Ctx>
__device__ void CheckTask<T, M>::operator()(Worker w, const Item& item, Ctx& ctx) const {
  using namespace task_detail;
  const auto& P = *ctx.template user_data<TaskProblem<T>>();
  double* sums = w.shared<double>();
  int* verdict = reinterpret_cast<int*>(sums + threads);
  const int k = item.k;
  if (k >= 0) {
    double s = 0;
    for (int i = static_cast<int>(w.rank()); i < P.tasks; i += threads) s += __ldcg(&P.partial[i]);
    sums[w.rank()] = s;
    w.sync();
    for (unsigned half = threads / 2; half > 0; half /= 2) {
      if (w.rank() < half) sums[w.rank()] += sums[w.rank() + half];
      w.sync();
    }
    if (w.rank() == 0) *verdict = decide(P.state, k, sums[0], P.p, load_decision_inputs(P.state));
    w.sync();
    if (*verdict != 0) return;
  }
  // Iteration k + 1: every task, then (dependency versions) the Check that waits for them.
  const int next = k + 1;
  for (int t = static_cast<int>(w.rank()); t < P.tasks; t += threads)
    ctx.template spawn<JacobiTask<T, M>>(JacobiItem{t, next});
  if (w.rank() != 0) return;
  int barrier = -1;
  if (P.mode == TaskMode::stages_deps) barrier = next;
  if (P.mode == TaskMode::checkpoints) barrier = is_check_iteration(next, P.p) ? next : next_check(next, P.p);
  if (barrier >= 0)
    ctx.template spawn_when<CheckTask>(ctx.dependency(check_dependency(P.tasks, barrier, P.mode, P.p)),
                                          CheckItem{barrier}, P.tasks);
}

}  // namespace apiary::jacobi
