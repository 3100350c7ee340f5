// Two-phase search (Davidson, Green, Baxter; seed 001 2.4.4): a partition phase finds the
// tile range of each chunk of team_size * K atoms (partition.hpp, one search per chunk in
// global memory), then in the expansion phase a team loads its chunk's offsets into shared
// memory and each thread takes K consecutive atoms, finding its first tile with a search in
// shared memory. Balanced across threads, warps and teams; the per-thread runs are
// K atoms apart (not coalesced), which multi_phase.hpp fixes.
#pragma once

#include <apiary/balance/layout.hpp>
#include <apiary/balance/params.hpp>
#include <apiary/balance/partition.hpp>
#include <apiary/balance/run.hpp>
#include <apiary/balance/search.hpp>

#include <cstddef>

namespace apiary::balance {

template <class Procs, class Layout>
class TwoPhase {
 public:
  using I = typename Layout::index_type;
  static constexpr bool may_split = true;
  static std::int64_t chunk_atoms(unsigned team_size, const ScheduleParams<I>& params) {
    return static_cast<std::int64_t>(team_size) * params.items_per_thread;
  }
  static std::size_t offsets_capacity(unsigned team_size, const ScheduleParams<I>& params) {
    return static_cast<std::size_t>(chunk_atoms(team_size, params)) + 2;
  }
  static std::size_t scratch_bytes(unsigned team_size, const ScheduleParams<I>& params) {
    return sizeof(I) * offsets_capacity(team_size, params);
  }

  APIARY_NO_EXEC_CHECK
  APIARY_HD TwoPhase(Procs& procs, const Layout& layout, const ScheduleParams<I>& params, void* scratch)
      : procs_(procs), layout_(layout), params_(params), offsets_(static_cast<I*>(scratch)) {}

  APIARY_NO_EXEC_CHECK
  template <class Sink>
  APIARY_HD void run(Sink& sink) {
    auto& team = procs_.team;
    const unsigned size = team.size(), rank = team.rank();
    const std::int64_t chunk = static_cast<std::int64_t>(size) * params_.items_per_thread;
    const I atoms = layout_.num_atoms(), tiles = layout_.num_tiles();
    const I chunks = partition_chunks(layout_, chunk);
    const I capacity = static_cast<I>(chunk + 2);
    for (I c = static_cast<I>(procs_.team_index); c < chunks; c += static_cast<I>(procs_.team_count)) {
      const I t0 = params_.partition[c], t1 = params_.partition[c + 1];
      const I count = t1 - t0 + 1;  // tiles that may hold atoms of this chunk
      const bool cached = count + 1 <= capacity;
      if (cached)
        for (I k = static_cast<I>(rank); k <= count; k += static_cast<I>(size)) offsets_[k] = layout_.tile_begin(t0 + k);
      team.sync();
      const I chunk_first = static_cast<I>(c * chunk);
      const I lo = static_cast<I>(chunk_first + static_cast<std::int64_t>(rank) * params_.items_per_thread);
      const I hi = min_of<I>(atoms, static_cast<I>(lo + static_cast<I>(params_.items_per_thread)));
      if (lo < hi) {
        if (cached) {
          auto local = [this](I k) { return offsets_[k]; };
          const I k = binary_tile_search(local, I{0}, count, lo);
          auto shifted = [&](I t) { return offsets_[t - t0]; };
          emit_contiguous(t0 + k, lo, hi, t0 + count, shifted, sink);
        } else {
          // More (empty) tiles than shared memory holds: search the global offsets instead.
          auto global = [this](I t) { return layout_.tile_begin(t); };
          const I t = binary_tile_search(global, t0, min_of<I>(tiles, t1 + 1), lo);
          emit_contiguous(t, lo, hi, tiles, global, sink);
        }
      }
      team.sync();
    }
  }

 private:
  Procs& procs_;
  const Layout& layout_;
  ScheduleParams<I> params_;
  I* offsets_;
};

}  // namespace apiary::balance
