#include "task_solver.hpp"

#include "jacobi_gpu.hpp"
#include "task_graph.cuh"

#include <apiary/cuda_check.hpp>
#include <apiary/error.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace apiary::jacobi {

namespace {

TaskMode mode_of(TaskVersion v) {
  switch (v) {
    case TaskVersion::stages_phases: return TaskMode::stages_phases;
    case TaskVersion::stages_deps: return TaskMode::stages_deps;
    case TaskVersion::checkpoints: return TaskMode::checkpoints;
    case TaskVersion::autonomous: return TaskMode::autonomous;
    case TaskVersion::stages_inline: return TaskMode::stages_inline;
  }
  return TaskMode::stages_deps;
}

// Capacities from the partition: every task has at most one live successor (queued or parked),
// the waiting storage stays at most a quarter full (parking probes linearly).
Config task_config(int tasks, const TaskOptions& o) {
  Config c;
  c.megakernel.blocks_per_sm = o.blocks_per_sm;
  const std::uint64_t t = static_cast<std::uint64_t>(tasks);
  c.queue_capacities = {{"Jacobi", 2 * t + 1024}, {"Check", 64}, {"Release", 2 * (t / 256 + 1) + 64}};
  c.waiting_storage_capacity = static_cast<std::uint32_t>(4 * t + 1024);
  c.dependency_capacity = dependencies_needed(tasks);
  return c;
}

// Jacobi workers scheduler `s` runs at once (its kernel's occupancy; the megakernel's with
// --blocks-per-sm): the automatic task size makes a large matrix exactly one wave of tasks
// (auto_task_nnz). (Sizing by the device's thread limit instead, 16 workers per SM where the
// fp64 megakernel's 92 registers leave room for 4, gave 4 waves per iteration with a ragged
// last one: lap2d_1000_perm stages (inl) 93.5 ms per 1,000 iterations, 64.1 ms as one wave of
// 528 tasks; H200.)
template <class T, RowMapping M>
long long worker_slots(const TaskOptions& o, Scheduler s) {
  using Rt = Runtime<DependencyJacobiGraph<T, M>>;
  return static_cast<long long>(Rt::template resident_workers<JacobiTask<T, M>>(task_config(1, o), s));
}

// The scheduler whose resident workers size a large matrix's one wave of tasks for version v
// under scheduler s: TSK's and PDC-wave's own for the dependency graph (fp32: 528, where the
// megakernel holds 792, so one megakernel wave took them 1.5 waves; with their own,
// lap2d_1000_perm fp32 stages (inl) took 0.80x (TSK) and 0.85x (PDC-wave) the time, H200), else
// the megakernel's: under MK; under PDC spin (1.04-1.19x slower with 528 tasks instead of 792 on
// the same matrices); and for stages_phases, whose own graph's TSK kernel holds 792 fp32
// workers (1.16x slower on powerlaw_dd_1m with the dependency graph's 528).
inline Scheduler wave_scheduler(TaskVersion v, Scheduler s) {
  const bool own = v != TaskVersion::stages_phases &&
                   (s == Scheduler::timesliced || s == Scheduler::timesliced_graph ||
                    s == Scheduler::device_controller_wave);
  return own ? s : Scheduler::megakernel;
}

// The automatic task size, W = `mk_slots` the megakernel's resident Jacobi workers: half a
// wave (W / 2 tasks) when such tasks hold at most half_wave_max_nnz non-zeros, else one wave of
// the workers of `wave_scheduler` (above); at least 512 non-zeros. Mid-size matrices are bound by what each task
// costs (a claim, an arrival, a spawn), not by bandwidth, and half as many tasks measured
// 0.82-0.97x the time (H200, stages (inl), MK; A4-A6, finan512_like, g2_circuit_like in fp64
// (W = 528) and fp32 (W = 792), 795-2,549 non-zeros per task), while lap2d_1000_perm,
// memory-bound, took 1.3-1.7x the time with half a wave (12,617-18,925 per task). The limit
// lies between. (Halving TSK's and PDC's own, smaller, waves for mid-size matrices instead
// measured 0.98-1.15x the time of these sizes.)
inline constexpr long long half_wave_max_nnz = 4096;
// The smallest automatic task (the thesis's rows-per-task minimum), except one task per SM.
inline constexpr long long min_auto_task_nnz = 512;

template <class V>
int auto_task_nnz(const V& a, int requested, long long mk_slots, long long wave_slots) {
  if (requested > 0) return requested;
  const long long nnz = a.nnz, half = std::max<long long>(1, mk_slots / 2);
  const long long half_wave = (nnz + half - 1) / half, one_wave = (nnz + wave_slots - 1) / wave_slots;
  return static_cast<int>(std::max<long long>(min_auto_task_nnz, half_wave <= half_wave_max_nnz ? half_wave : one_wave));
}

// Megakernel blocks per SM for `tasks` Jacobi tasks: no more than their workers need, unless
// --blocks-per-sm chose. Measured, not derived (H200): lap2D_5pt_n100 stages (inl) 215.5 ->
// 200.0 ms with 1 block per SM instead of 2, while A4 (410 tasks) needs its 2 (3.25 -> 4.12 ms
// with 1); a single-task chain hop barely moves with the block count (docs/schedulers.md).
template <class Graph, class Task>
Config with_megakernel_blocks(Config c, int tasks, const TaskOptions& o) {
  if (o.blocks_per_sm != 0) return c;
  const ResidentBlocks plan = Runtime<Graph>::resident_blocks(c, Scheduler::megakernel);
  const std::uint64_t per_block = plan.layout.slots[GraphTraits<Graph>::template queue_of<Task>];  // Jacobi workers
  const std::uint64_t blocks = (static_cast<std::uint64_t>(tasks) + per_block - 1) / per_block;
  const std::uint64_t per_sm = std::max<std::uint64_t>((blocks + plan.sm_count - 1) / plan.sm_count, 1);
  if (per_sm < plan.per_sm) c.megakernel.blocks_per_sm = static_cast<std::uint32_t>(per_sm);
  return c;
}

// RowMapping::automatic for tasks of `target_nnz` non-zeros (sized for staged rows) over rows
// of at most `max_row_nnz`, G = `group` threads per row. Same-machine A/B on an H200 (stages
// (inl), every suite matrix, MK/TSK/PDC-wave, fp64/fp32, best of 2 interleaved rounds x 3 repeats; 12d9a33): staged
// rows took 0.40-0.69x the time of grouped ones on powerlaw_dd_1m, 0.76-0.97x on the mid-size
// matrices under MK (tasks of at most two chunks), 0.98-1.05x on the small Laplacians, but
// 0.90-1.15x on the 10^6-row Laplacians (tasks of 3-7 chunks over rows of 5 or 7 non-zeros:
// 1.06-1.15x under TSK and PDC-wave), where a chunk's copies, then its gathers, then its sums
// keep fewer loads in flight than the grouped rounds. Grouped wins only where rows are short
// and even, so long or uneven rows (longer than a group sums by itself) stay staged at any size.
RowMapping resolve(RowMapping m, int target_nnz, int max_row_nnz, int group) {
  if (m != RowMapping::automatic) return m;
  const bool many_chunks = target_nnz > 2 * staged_chunk;
  return many_chunks && max_row_nnz <= long_row_nnz(group) ? RowMapping::grouped : RowMapping::staged;
}

}  // namespace

const char* to_string(RowMapping m) {
  switch (m) {
    case RowMapping::automatic: return "auto";
    case RowMapping::staged: return "staged";
    case RowMapping::grouped: return "grouped";
  }
  return "?";
}

RowMapping parse_row_mapping(std::string_view s) {
  if (s == "auto") return RowMapping::automatic;
  if (s == "staged") return RowMapping::staged;
  if (s == "grouped") return RowMapping::grouped;
  throw InputError("--rows", "unknown row mapping '" + std::string(s) + "'; use auto, staged or grouped");
}

template <class T>
struct TaskJacobi<T>::Impl {
  // The runtimes of one row mapping's three graphs (built at their first run).
  template <RowMapping M>
  struct Graphs {
    std::unique_ptr<Runtime<PhaseJacobiGraph<T, M>>> phases;
    std::unique_ptr<Runtime<DependencyJacobiGraph<T, M>>> dependencies;
    std::unique_ptr<Runtime<InlineJacobiGraph<T, M>>> inline_stages;
  };

  // A partition of the matrix and what depends on its task count: one per task size, shared by
  // the schedulers whose resident workers ask for the same size.
  struct Sized {
    Partition part;
    sparse::DeviceBuffer<double> partial, split_sum;
    sparse::DeviceBuffer<int> split_arrivals;
    sparse::DeviceBuffer<int> waiting;       // stages_inline (held): 2 x tasks, successor not held
    sparse::DeviceBuffer<double> min_rels;   // stages_inline (held): each task's smallest checked residual
    Graphs<RowMapping::staged> staged;
    Graphs<RowMapping::grouped> grouped;

    explicit Sized(Partition p, index_t rows)
        : part(std::move(p)), partial(static_cast<std::size_t>(part.tasks)),
          split_sum(part.split_rows ? 2 * static_cast<std::size_t>(rows) : 1),
          split_arrivals(part.split_rows ? 2 * static_cast<std::size_t>(rows) : 1),
          waiting(2 * static_cast<std::size_t>(part.tasks)), min_rels(static_cast<std::size_t>(part.tasks)) {}
  };

  TaskInputs<T> in;
  Params p;
  TaskOptions options;
  std::map<int, std::unique_ptr<Sized>> by_task_nnz;
  int ring = 0;
  sparse::DeviceBuffer<T> x;
  sparse::DeviceBuffer<double> global_sum;
  sparse::DeviceBuffer<unsigned> arrivals;
  sparse::DeviceBuffer<unsigned> resident_takes;
  sparse::DeviceBuffer<TaskProblem<T>> problem;
  std::vector<JacobiItem> seed;  // stages_inline: iteration 0

  Impl(const TaskInputs<T>& inputs, const Params& params, const TaskOptions& o)
      : in(inputs), p(params), options(o), global_sum(3), arrivals(3), resident_takes(1), problem(1) {}

  // Resident Jacobi workers per scheduler and row mapping (their graphs' kernels differ in
  // registers and shared memory), asked once: the occupancy query reads the device's
  // properties, and run() (timed by the benchmark) asks for them on every solve.
  std::map<std::pair<Scheduler, RowMapping>, long long> slots_by_kind;
  long long slots(Scheduler s, RowMapping m) {
    if (auto it = slots_by_kind.find({s, m}); it != slots_by_kind.end()) return it->second;
    const long long n = m == RowMapping::staged ? worker_slots<T, RowMapping::staged>(options, s)
                                                : worker_slots<T, RowMapping::grouped>(options, s);
    return slots_by_kind[{s, m}] = n;
  }

  // How version v runs under scheduler s: the row mapping (automatic decided on the staged
  // rows' task size) and the task size for the workers of that mapping's graph (lowered by
  // fit_resident where that keeps the rows in their blocks). Asked once per pair: fitting
  // builds partitions.
  struct Shape {
    RowMapping rows;
    int task_nnz;
  };
  std::map<std::pair<TaskVersion, Scheduler>, Shape> shapes;
  Shape shape(TaskVersion v, Scheduler s) {
    if (auto it = shapes.find({v, s}); it != shapes.end()) return it->second;
    auto task_nnz = [&](RowMapping m) {
      return auto_task_nnz(in.a, options.task_nnz, slots(Scheduler::megakernel, m), slots(wave_scheduler(v, s), m));
    };
    const RowMapping first = options.rows == RowMapping::grouped ? RowMapping::grouped : RowMapping::staged;
    const int first_nnz = task_nnz(first);
    const RowMapping m = resolve(options.rows, first_nnz, in.max_row_nnz, in.group);
    Shape sh{m, m == first ? first_nnz : task_nnz(m)};
    if (may_fit_resident(v, s, sh.rows)) sh.task_nnz = balance_per_sm(fit_resident(sh.task_nnz));
    return shapes[{v, s}] = sh;
  }

  // Resident rows (task_graph.cuh) keep a task's arrays in the memory of its staging area, so
  // they need tasks small enough: the half-wave fp64 tasks of the mid-size matrices (A5,
  // finan512_like, g2_circuit_like: about 2,000 non-zeros, 41-50 KB of arrays against 40 KB)
  // did not fit and were staged every iteration. Where successors are held and the task size
  // is automatic, the size is lowered until the largest task fits, as long as the tasks stay
  // within one megakernel wave (every task then has a block to be held in); else it stays.
  bool may_fit_resident(TaskVersion v, Scheduler s, RowMapping m) const {
    return v == TaskVersion::stages_inline && s == Scheduler::megakernel && m == RowMapping::staged &&
           options.hold_successors && options.fit_resident && options.task_nnz == 0 &&
           options.partition == PartitionKind::row_blocks && in.max_row_nnz <= staged_long_row_nnz;
  }
  static constexpr std::size_t resident_capacity = sizeof(ResidentRows<T>::data);
  // Whether the largest task's arrays fit (the largest task by non-zeros and by rows: a bound).
  static bool fits_resident(const Partition& part) {
    return ResidentRows<T>::bytes_for(part.max_task_nnz, part.max_rows_per_task) <= resident_capacity;
  }
  int fit_resident(int task_nnz) {
    const long long wave = slots(Scheduler::megakernel, RowMapping::staged);
    int target = task_nnz;
    for (int step = 0; step < 6 && target >= min_auto_task_nnz; ++step) {
      const Partition& part = sized(target).part;
      if (part.tasks > wave) break;
      if (fits_resident(part)) return target;
      // A task's arrays grow about linearly with its size; 2% under, so few steps are needed.
      const double scale = 0.98 * static_cast<double>(resident_capacity) /
                           static_cast<double>(ResidentRows<T>::bytes_for(part.max_task_nnz, part.max_rows_per_task));
      target = std::min(target - 1, static_cast<int>(target * scale));
    }
    return task_nnz;
  }

  // Held tasks stay in the block that first ran them (one per 128-thread block), and the
  // megakernel gets k = ceil(T / SMs) blocks per SM for T tasks (with_megakernel_blocks). T
  // between two multiples of the SM count leaves some SMs k tasks and others fewer, and the
  // SMs with k set the iteration's pace. So the tasks are made smaller until there are k per
  // SM, where that keeps them within the megakernel's wave, with their rows resident and, for
  // k > 1, at 512 non-zeros or more (the automatic minimum). With fewer tasks than SMs (k = 1)
  // any size goes: an SM without a task idles. A/B on an H200, stages (inl), MK
  // (docs/jacobi.md, "Kept: held tasks balanced over the SMs"): fp64 A5 285 -> 396 tasks 0.83x
  // the time, g2_circuit_like 342 -> 396 0.88x, finan512_like 377 -> 396 0.99x; a sweep with
  // one task per SM: lap2D_5pt_n100 fp64 97 -> 132 tasks 0.95x per iteration, gr_30_30 16 ->
  // 132 0.96x.
  int balance_per_sm(int task_nnz) {
    const Partition& part = sized(task_nnz).part;
    const long long sms = std::max(in.sm_count, 1), wave = slots(Scheduler::megakernel, RowMapping::staged);
    const long long k = (static_cast<long long>(part.tasks) + sms - 1) / sms;
    if (part.tasks % sms == 0 || k * sms > wave) return task_nnz;
    // ceil(nnz / target) shares, so at most k x SMs tasks (partition.cu: a row block begins
    // at each multiple of the target).
    const long long target = (static_cast<long long>(in.a.nnz) + k * sms - 1) / (k * sms);
    const long long minimum = k == 1 ? 1 : min_auto_task_nnz;
    if (target < minimum || target >= task_nnz) return task_nnz;
    const Partition& balanced = sized(static_cast<int>(target)).part;
    return balanced.tasks <= k * sms && fits_resident(balanced) ? static_cast<int>(target) : task_nnz;
  }

  // The partition into tasks of `task_nnz` non-zeros, built on the GPU at its first use.
  Sized& sized(int task_nnz) {
    auto& slot = by_task_nnz[task_nnz];
    if (!slot) slot = std::make_unique<Sized>(build_partition(in.a, options.partition, task_nnz), in.a.rows);
    return *slot;
  }

  // Whether stages_inline holds its successors (InlineJacobiGraph, task_graph.cuh): under the
  // megakernel, for tasks of at most half its wave, or one wave where every task's rows stay in
  // its block (resident rows; fit_resident sizes tasks so), unless --hold-successors off. Same-machine
  // A/B on an H100 (fp64, MK, against spawning them all from the last task in the dependency
  // graph): 0.79-0.95x the time on the mid-size matrices (half-wave tasks, bound by what
  // each task costs), but one-wave tasks lost: powerlaw_dd_1m 1.28x (the 128-thread blocks
  // alone, without holding: 1.19x), the 10^6-row Laplacians 0.95-0.99x; under TSK and PDC,
  // which cannot hold, the narrow blocks cost 1.2-1.5x (docs/jacobi.md).
  bool holds_successors(TaskVersion v, Scheduler s, const Partition& part, RowMapping m) {
    const long long wave = slots(Scheduler::megakernel, m);
    const bool all_resident = may_be_resident(part, m) && fits_resident(part);
    return v == TaskVersion::stages_inline && s == Scheduler::megakernel && options.hold_successors &&
           (part.tasks <= wave / 2 || (all_resident && part.tasks <= wave));
  }

  // Resident rows: staged rows, none split across tasks or longer than one thread sums.
  bool may_be_resident(const Partition& part, RowMapping m) const {
    return m == RowMapping::staged && part.split_rows == 0 && in.max_row_nnz <= staged_long_row_nnz;
  }
  bool resident_rows(bool held, const Partition& part, RowMapping m) const { return held && may_be_resident(part, m); }

  // The autonomous version keeps check_every + 1 iterates, stages_inline with held successors
  // three (the deciding iteration's successors write one more, task_graph.cuh), the others two.
  void ensure_ring(TaskVersion v, bool held) {
    const int needed = v == TaskVersion::autonomous ? std::max(2, p.check_every + 1) : held ? 3 : 2;
    if (needed <= ring) return;
    const double bytes = static_cast<double>(needed) * in.a.rows * sizeof(T);
    if (bytes > 8e9)
      throw InputError("--check-every", "the autonomous version keeps check_every + 1 = " + std::to_string(needed) +
                                            " iterates (" + std::to_string(bytes / 1e9) +
                                            " GB); lower check_every");
    x = sparse::DeviceBuffer<T>(static_cast<std::size_t>(needed) * in.a.rows);
    ring = needed;
  }

  // A solve's initial state, set by the start kernel of the run that solves (Runtime's
  // fill_before_run / copy_before_run): x_0 = 0, the split rows' sums and arrivals, the
  // iteration sums and arrivals, each task's smallest checked residual (held successors), the
  // resident-take count, the DeviceState and the problem every task reads. (A kernel of its
  // own on the runtime's stream cost a launch in front of every solve, ~6 us of host time
  // measured on an H100, and eight memsets and copies before that.)
  template <class Rt>
  void reset(TaskVersion v, Sized& z, bool held, Rt& rt) {
    ensure_ring(v, held);
    DeviceState initial{};
    initial.min_rel = INFINITY;
    initial.bnorm = in.bnorm;
    const Partition& part = z.part;
    TaskProblem<T> pr{};
    pr.a = in.a;
    pr.b = in.b;
    pr.d = in.d;
    pr.x = x.data();
    pr.ring = ring;
    pr.omega = static_cast<T>(p.omega);
    pr.p = p;
    pr.ranges = part.ranges.data();
    pr.neighbor_offsets = part.neighbor_offsets.data();
    pr.neighbors = part.neighbors.data();
    pr.pieces = part.row_pieces.data();
    pr.split_sum = z.split_sum.data();
    pr.split_arrivals = z.split_arrivals.data();
    pr.partial = z.partial.data();
    pr.global_sum = global_sum.data();
    pr.arrivals = arrivals.data();
    pr.state = in.state;
    pr.tasks = part.tasks;
    pr.group = in.group;
    pr.mode = mode_of(v);
    pr.bnorm = in.bnorm;
    pr.waiting = z.waiting.data();
    pr.min_rels = z.min_rels.data();
    // Resident rows (task_graph.cuh): held successors run in their predecessor's block; rows
    // split across tasks or longer than a thread sums alone stay staged. (Only the staged
    // graph's tasks read the flag.)
    pr.resident_rows = resident_rows(held, part, RowMapping::staged) ? 1 : 0;
    pr.resident_takes = resident_takes.data();
    rt.fill_before_run(x.data(), T(0), static_cast<std::size_t>(in.a.rows));  // x_0 (slot 0 of the ring)
    rt.fill_before_run(z.split_sum.data(), 0.0, z.split_sum.size());
    rt.fill_before_run(z.split_arrivals.data(), 0, z.split_arrivals.size());
    if (held) rt.fill_before_run(z.min_rels.data(), static_cast<double>(INFINITY), static_cast<std::size_t>(part.tasks));
    rt.fill_before_run(global_sum.data(), 0.0, global_sum.size());
    rt.fill_before_run(arrivals.data(), 0u, arrivals.size());
    rt.fill_before_run(resident_takes.data(), 0u, resident_takes.size());
    rt.copy_before_run(in.state, initial);
    rt.copy_before_run(problem.data(), pr);
  }

  // Runs version v and returns its report with the solver state the run ended with.
  template <RowMapping M, class Graph>
  std::pair<Report, DeviceState> run_on(std::unique_ptr<Runtime<Graph>>& rt, Sized& z, TaskVersion v, Scheduler s,
                                        bool held) {
    constexpr bool inline_stages = std::is_same_v<Graph, InlineJacobiGraph<T, M>>;
    const Partition& part = z.part;
    if (!rt) {
      Config c = task_config(part.tasks, options);
      if (inline_stages) c.megakernel.block_threads = JacobiTask<T, M>::threads;  // a slot per task
      rt = std::make_unique<Runtime<Graph>>(with_megakernel_blocks<Graph, JacobiTask<T, M>>(c, part.tasks, options));
      rt->copy_at_end(in.state);  // the decision comes back with the run's summary
    }
    reset(v, z, held, *rt);
    rt->set_user_data(problem.data());
    if constexpr (inline_stages) {
      if (seed.size() != static_cast<std::size_t>(part.tasks)) {
        seed.resize(static_cast<std::size_t>(part.tasks));
        for (int t = 0; t < part.tasks; ++t) seed[static_cast<std::size_t>(t)] = JacobiItem{t, 0};
      }
      rt->template seed<JacobiTask<T, M>>(seed);
    } else {
      rt->template seed<CheckTask<T, M>>(std::vector<CheckItem>{CheckItem{-1}});
    }
    Report report = rt->run(s);
    return {std::move(report), rt->template copied_at_end<DeviceState>()};
  }

  template <RowMapping M>
  std::pair<Report, DeviceState> run_graph(Graphs<M>& g, Sized& z, TaskVersion v, Scheduler s, bool held) {
    if (v == TaskVersion::stages_phases) return run_on<M>(g.phases, z, v, s, held);
    if (held) return run_on<M>(g.inline_stages, z, v, s, held);
    return run_on<M>(g.dependencies, z, v, s, held);
  }
};

template <class T>
TaskJacobi<T>::TaskJacobi(const TaskInputs<T>& in, const Params& p, const TaskOptions& options)
    : impl_(std::make_unique<Impl>(in, p, options)) {}

template <class T>
TaskJacobi<T>::~TaskJacobi() = default;

template <class T>
Report TaskJacobi<T>::run(TaskVersion v, Scheduler s) {
  const auto shape = impl_->shape(v, s);
  auto& z = impl_->sized(shape.task_nnz);
  const bool held = impl_->holds_successors(v, s, z.part, shape.rows);
  auto [report, state] = shape.rows == RowMapping::staged ? impl_->run_graph(z.staged, z, v, s, held)
                                                           : impl_->run_graph(z.grouped, z, v, s, held);
  if (state.status == 0)
    throw Error("Jacobi task graph ended without a decision (internal error)\n" + report.format());
  return report;
}

template <class T>
const T* TaskJacobi<T>::iterate(int k) const {
  return impl_->x.data() + static_cast<std::size_t>(k % impl_->ring) * impl_->in.a.rows;
}

template <class T>
void TaskJacobi<T>::poison() {
  if (impl_->ring) impl_->x.fill_bytes(0xff);
  for (auto& [size, z] : impl_->by_task_nnz) z->partial.fill_bytes(0xff);
  APIARY_CUDA_CHECK(cudaDeviceSynchronize());
}

template <class T>
const Partition& TaskJacobi<T>::partition(TaskVersion v, Scheduler s) {
  return impl_->sized(impl_->shape(v, s).task_nnz).part;
}

template <class T>
bool TaskJacobi<T>::holds_successors(TaskVersion v, Scheduler s) {
  const auto shape = impl_->shape(v, s);
  return impl_->holds_successors(v, s, impl_->sized(shape.task_nnz).part, shape.rows);
}

template <class T>
bool TaskJacobi<T>::resident_rows(TaskVersion v, Scheduler s) {
  const auto shape = impl_->shape(v, s);
  const Partition& part = impl_->sized(shape.task_nnz).part;
  return impl_->resident_rows(impl_->holds_successors(v, s, part, shape.rows), part, shape.rows);
}

template <class T>
unsigned TaskJacobi<T>::resident_takes() const {
  unsigned takes = 0;
  APIARY_CUDA_CHECK(cudaMemcpy(&takes, impl_->resident_takes.data(), sizeof takes, cudaMemcpyDeviceToHost));
  return takes;
}

template <class T>
RowMapping TaskJacobi<T>::row_mapping(TaskVersion v, Scheduler s) {
  return impl_->shape(v, s).rows;
}

template class TaskJacobi<float>;
template class TaskJacobi<double>;

}  // namespace apiary::jacobi
