// The Jacobi task-graph versions (thesis 7.4, task_graph.cuh) behind a small host interface:
// build the partition once, then solve from x_0 = 0 with any version under any scheduler.
// The device state and the decision rule are the baselines' (jacobi_gpu.hpp), so results and
// checks line up.
#pragma once

#include "jacobi.hpp"
#include "partition.hpp"

#include <apiary/report.hpp>
#include <apiary/scheduler.hpp>
#include <apiary/sparse/views.hpp>

#include <memory>
#include <string_view>

namespace apiary::jacobi {

struct DeviceState;

enum class TaskVersion { stages_phases, stages_deps, checkpoints, autonomous, stages_inline };

// How a Jacobi task maps its rows to its threads (task_graph.cuh).
enum class RowMapping {
  automatic,  // staged, except grouped for tasks of more than two chunks whose rows all fit a
              // group (large regular matrices; task_solver.cu says what was measured)
  staged,     // the task's non-zeros streamed through shared memory in chunks; one thread sums
              // a row piece in order (the reference's arithmetic), a warp one longer than
              // staged_long_row_nnz (partition.hpp)
  grouped,    // G threads per row (1, 4, 8, 32 by the mean row length) reading global memory;
              // rows longer than 32 G summed by the whole task
};
const char* to_string(RowMapping m);
RowMapping parse_row_mapping(std::string_view s);  // InputError for unknown names

struct TaskOptions {
  PartitionKind partition = PartitionKind::row_blocks;
  // Non-zeros per Jacobi task; 0: automatic (task_solver.cu): at least 512 (the thesis's
  // 64 x 8); a large matrix is one even wave of tasks over the worker slots (more tasks than
  // slots leave a half-empty last wave; TSK and PDC-wave size it by their own slots), a
  // mid-size one half a wave of the megakernel's (each task costs a claim, an arrival and a
  // spawn).
  int task_nnz = 0;
  // Megakernel blocks per SM (0: as many as fit). Fewer persistent blocks poll the queues
  // less, which shortens the hand-over from one task to the next.
  unsigned blocks_per_sm = 0;
  RowMapping rows = RowMapping::automatic;
  // stages_inline: a task's successor waits in its block (ctx.spawn_next_when, megakernel)
  // instead of being spawned by the iteration's last task (--hold-successors on|off).
  bool hold_successors = true;
  // stages_inline with held successors and automatic task sizes: tasks made small enough that
  // their rows stay in their blocks (resident rows), within one wave (--fit-resident on|off).
  bool fit_resident = true;
};

// Device inputs owned by the caller (GpuJacobi); they must outlive the solver.
template <class T>
struct TaskInputs {
  sparse::CsrView<T> a;
  const T* b;
  const T* d;
  DeviceState* state;
  double bnorm;
  int group;        // threads per row
  int max_row_nnz;  // the longest row (decides RowMapping::automatic)
  int sm_count;     // the device's SMs (held tasks are balanced over them)
};

template <class T>
class TaskJacobi {
 public:
  TaskJacobi(const TaskInputs<T>& in, const Params& p, const TaskOptions& options);
  ~TaskJacobi();
  TaskJacobi(const TaskJacobi&) = delete;
  TaskJacobi& operator=(const TaskJacobi&) = delete;

  // One solve from x_0 = 0; returns when the run ended (throws apiary errors on failure).
  Report run(TaskVersion v, Scheduler s);
  // Device pointer to x_k (valid after a run; k from the device state).
  const T* iterate(int k) const;
  // Fills the iterate buffers with 0xff (before a checked run).
  void poison();
  // The partition version v runs under scheduler s (built on the GPU at its first use): tasks are
  // sized for the Jacobi workers that run them (task_solver.cu), so partitions may differ.
  const Partition& partition(TaskVersion v, Scheduler s);
  // The row mapping of version v under scheduler s (automatic resolved for its partition).
  RowMapping row_mapping(TaskVersion v, Scheduler s);
  // Whether version v under scheduler s holds its successors in their blocks (stages_inline).
  bool holds_successors(TaskVersion v, Scheduler s);
  // Whether its tasks may keep their rows in their blocks (resident rows, task_graph.cuh): held
  // successors, staged rows, no split rows, no row longer than one thread sums (a task whose
  // arrays do not fit its staging area stages them anyway).
  bool resident_rows(TaskVersion v, Scheduler s);
  // How many times a task of the last run took its rows into a block (resident rows): the
  // number of tasks where every task kept its rows, fewer where some did not fit.
  unsigned resident_takes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace apiary::jacobi
