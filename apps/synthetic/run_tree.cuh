// Runs a synthetic task tree on the GPU: builds the phase table and device tables from a
// validated Spec, seeds the roots, runs, and compares the counts with the host model.
#pragma once

#include <apiary/apiary.cuh>
#include <apiary/device_buffer.hpp>
#include <apiary/synthetic/model.hpp>
#include <apiary/synthetic/spec.hpp>
#include <apiary/synthetic/synthetic_task.cuh>
#include <apiary/synthetic/tree_tables.hpp>

#include <string>
#include <vector>

namespace apiary::synthetic {

struct TreeRunOptions {
  Scheduler scheduler = Scheduler::megakernel;
  bool trace = false;
  Config base;  // watchdog, block size...; capacities come from the spec and the model
};

struct TreeRunResult {
  Report report;
  std::vector<std::uint64_t> executed_per_type;  // indexed like spec.types
  bool counts_match = false;
  Trace trace;
};

// The runtime config for a tree: capacities from the spec, "auto" ones from the model.
inline Config tree_config(const Spec& spec, const Plan& plan, const TreeRunOptions& options) {
  Config c = options.base;
  c.scheduler = options.scheduler;
  c.trace = options.trace;
  if (options.trace) {
    c.trace_capacity = std::max<std::uint64_t>(plan.total_tasks, 1);
    c.trace_event_capacity = std::max<std::uint64_t>(4 * plan.total_tasks, 1);
  }
  c.queue_capacity = spec.capacities.queue.value_or(std::max<std::uint64_t>(plan.queue_needed, 1));
  c.waiting_storage_capacity =
      static_cast<std::uint32_t>(spec.capacities.waiting_storage.value_or(std::max<std::uint64_t>(plan.waiting_storage_needed, 1)));
  c.dependency_capacity =
      static_cast<std::uint32_t>(spec.capacities.dependencies.value_or(std::max<std::uint64_t>(plan.dependencies_needed, 1)));
  return c;
}

inline PhaseTable tree_phase_table(const Spec& spec, const Config& config) {
  std::vector<QueueLayout> queues;
  for (std::uint32_t t = 0; t < spec.types.size(); ++t) {
    const TaskTypeSpec& type = spec.types[t];
    QueueLayout q;
    q.name = type.name;
    q.item_size = sizeof(Item);
    q.capacity = config.queue_capacity;
    q.capacity_key = spec.source + ": capacities.queue";
    q.worker_size = type.worker_size;
    q.shared_bytes = type.shared_bytes + scratch_bytes;
    q.phase = spec.mode == DependencyMode::phases ? type.phase : no_phase;
    q.code = 0;
    queues.push_back(q);
  }
  return PhaseTable(std::move(queues), false);
}

template <class T>
DeviceBuffer<T> upload(const std::vector<T>& v) {
  DeviceBuffer<T> d(std::max<std::size_t>(v.size(), 1));
  if (!v.empty()) APIARY_CUDA_CHECK(cudaMemcpy(d.get(), v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

inline TreeRunResult run_tree(const Spec& spec, const Plan& plan, const TreeRunOptions& options) {
  check_capacities(spec, plan);
  const Config config = tree_config(spec, plan, options);
  const TreeTables tables = build_tree_tables(spec);
  Runtime<DataGraph<SyntheticTask>> rt(tree_phase_table(spec, config), config);

  // Device copies of the tree tables and the queue <-> type maps.
  auto types = upload(tables.types);
  auto transitions = upload(tables.transitions);
  auto joins = upload(tables.joins);
  auto owned = upload(tables.owned_joins);
  DeviceBuffer<float> sink(1);
  TreeParams params{};
  params.view = TreeView{types.get(), transitions.get(), joins.get(), owned.get(),
                         static_cast<std::uint32_t>(tables.types.size()),
                         static_cast<std::uint32_t>(tables.joins.size()), tables.seed};
  for (std::uint32_t t = 0; t < spec.types.size(); ++t) {
    const std::uint32_t q = rt.table().queue_index(spec.types[t].name);
    params.queue_of_type[t] = q;
    params.type_of_queue[q] = t;
  }
  params.individual = spec.mode == DependencyMode::individual ? 1u : 0u;
  params.sink = sink.get();
  DeviceBuffer<TreeParams> device_params(1);
  APIARY_CUDA_CHECK(cudaMemcpy(device_params.get(), &params, sizeof(params), cudaMemcpyHostToDevice));
  rt.set_user_data(device_params.get());

  const TreeView host_view = tables.view();
  for (std::uint32_t r = 0; r < spec.roots.size(); ++r) {
    std::vector<Item> roots(spec.roots[r].count);
    for (std::uint64_t k = 0; k < roots.size(); ++k) roots[k] = root_item(host_view, r, k);
    rt.seed_queue(params.queue_of_type[spec.roots[r].type], std::span<const Item>(roots));
  }

  TreeRunResult result;
  result.report = rt.run();
  result.counts_match = true;
  for (std::uint32_t t = 0; t < spec.types.size(); ++t) {
    const std::uint64_t executed = result.report.queues[params.queue_of_type[t]].executed;
    result.executed_per_type.push_back(executed);
    if (executed != plan.tasks_per_type[t]) result.counts_match = false;
  }
  if (options.trace) result.trace = rt.trace();
  return result;
}

}  // namespace apiary::synthetic
