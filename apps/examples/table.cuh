// The thesis's table example (chapters 4 and 5): legs and tabletops are made, then tables
// are assembled. With phases the assembly waits for a whole phase; with individual
// dependencies each table waits only for its own five parts.
#pragma once

#include <apiary/apiary.cuh>

#include <cstdint>
#include <vector>

namespace table_example {

inline constexpr int legs_per_table = 4;
inline constexpr int parts_per_table = legs_per_table + 1;

struct Workshop {
  float* parts;      // table * parts_per_table + part (the top is part 4)
  float* tables;     // assembled value per table
};

struct PartJob {
  Workshop shop;
  std::uint32_t table;
  std::uint32_t part;
};
struct TableJob {
  Workshop shop;
  std::uint32_t table;
};

// What a part is worth: the sum over the worker's threads of (table * 7 + part * 3 + rank)
// mod 17 — computed cooperatively so that the per-worker barrier and shared memory matter.
__host__ __device__ inline float part_term(std::uint32_t table, std::uint32_t part, std::uint32_t rank) {
  return float((table * 7u + part * 3u + rank) % 17u);
}
inline float part_value_reference(std::uint32_t table, std::uint32_t part, std::uint32_t threads) {
  float sum = 0;
  for (std::uint32_t r = 0; r < threads; ++r) sum += part_term(table, part, r);
  return sum;
}

// A worker-wide sum through shared memory, using only Worker::sync().
__device__ inline float worker_sum(apiary::Worker w, float value) {
  float* scratch = w.shared<float>();
  scratch[w.rank()] = value;
  w.sync();
  float sum = 0;
  if (w.rank() == 0)
    for (std::uint32_t r = 0; r < w.size(); ++r) sum += scratch[r];
  w.sync();
  return sum;
}

template <unsigned Threads>
__device__ void make_part(apiary::Worker w, const PartJob& job) {
  const float value = worker_sum(w, part_term(job.table, job.part, w.rank()));
  if (w.rank() == 0) job.shop.parts[job.table * parts_per_table + job.part] = value;
}

template <bool Individual>
struct CreateLeg {
  using Item = PartJob;
  static constexpr unsigned threads = 32;
  static constexpr unsigned shared_bytes = threads * sizeof(float);
  static constexpr const char* name = "CreateLeg";
  template <class Ctx>
  __device__ void operator()(apiary::Worker w, const Item& job, Ctx& ctx) const {
    make_part<threads>(w, job);
    if constexpr (Individual) {
      w.sync();  // the whole leg is written before the table may be assembled
      if (w.rank() == 0) ctx.resolve(ctx.dependency(job.table));
    }
  }
};

struct AssembleTable {
  using Item = TableJob;
  static constexpr unsigned threads = 64;
  static constexpr unsigned shared_bytes = threads * sizeof(float);
  static constexpr const char* name = "AssembleTable";
  template <class Ctx>
  __device__ void operator()(apiary::Worker w, const Item& job, Ctx&) const {
    const float part = w.rank() < parts_per_table ? job.shop.parts[job.table * parts_per_table + w.rank()] : 0.f;
    const float sum = worker_sum(w, part);
    if (w.rank() == 0) job.shop.tables[job.table] = sum;
  }
};

// The tabletop worker also orders the table: it spawns the four legs and the assembly.
template <bool Individual>
struct CreateTabletop {
  using Item = PartJob;
  static constexpr unsigned threads = 64;
  static constexpr unsigned shared_bytes = threads * sizeof(float);
  static constexpr const char* name = "CreateTabletop";
  template <class Ctx>
  __device__ void operator()(apiary::Worker w, const Item& job, Ctx& ctx) const {
    if (w.rank() < legs_per_table)
      ctx.template spawn<CreateLeg<Individual>>(PartJob{job.shop, job.table, w.rank()});
    if constexpr (Individual) {
      if (w.rank() == 0)
        ctx.template spawn_when<AssembleTable>(ctx.dependency(job.table), TableJob{job.shop, job.table},
                                               parts_per_table);
    } else {
      if (w.rank() == 0) ctx.template spawn<AssembleTable>(TableJob{job.shop, job.table});
    }
    make_part<threads>(w, job);
    if constexpr (Individual) {
      w.sync();
      if (w.rank() == 0) ctx.resolve(ctx.dependency(job.table));
    }
  }
};

// Phases: legs and tops in phase 1, assembly in phase 2.
using PhasedGraph = apiary::PhaseQueue<apiary::Phase<CreateLeg<false>, CreateTabletop<false>>,
                                       apiary::Phase<AssembleTable>>;
// Individual dependencies: no phases; each assembly waits for its five parts.
using DependencyGraph =
    apiary::PhaseQueue<apiary::Phaseless<CreateLeg<true>, CreateTabletop<true>, AssembleTable>>;

inline std::vector<float> reference_tables(std::uint32_t tables) {
  std::vector<float> out(tables);
  for (std::uint32_t t = 0; t < tables; ++t) {
    float sum = 0;
    for (std::uint32_t p = 0; p < legs_per_table; ++p) sum += part_value_reference(t, p, 32);
    sum += part_value_reference(t, legs_per_table, 64);
    out[t] = sum;
  }
  return out;
}

}  // namespace table_example
