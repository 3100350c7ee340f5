// Merge-path (work-oriented) schedule (Merrill and Garland; seed 000 4.4.2.1): tiles and atoms
// each count as one item, and every thread gets an equal share of the tiles + atoms items.
// Two-level search as in CUB: one thread per team finds the team's start and end on the merge
// path, then each thread searches only inside the team's tile range. Runs are contiguous;
// a tile is `store` when one thread holds all of it, `atomic` otherwise.
#pragma once

#include <apiary/balance/layout.hpp>
#include <apiary/balance/params.hpp>
#include <apiary/balance/run.hpp>
#include <apiary/balance/search.hpp>

#include <cstddef>

namespace apiary::balance {

template <class Procs, class Layout>
class MergePath {
 public:
  using I = typename Layout::index_type;
  static constexpr bool may_split = true;
  static std::size_t scratch_bytes(unsigned, const ScheduleParams<I>&) { return 4 * sizeof(I); }

  APIARY_NO_EXEC_CHECK
  APIARY_HD MergePath(Procs& procs, const Layout& layout, const ScheduleParams<I>& params, void* scratch)
      : procs_(procs), layout_(layout), items_(params.items_per_thread ? params.items_per_thread : 1),
        bounds_(static_cast<I*>(scratch)) {}

  APIARY_NO_EXEC_CHECK
  template <class Sink>
  APIARY_HD void run(Sink& sink) {
    auto& team = procs_.team;
    const unsigned size = team.size(), rank = team.rank();
    const I tiles = layout_.num_tiles(), atoms = layout_.num_atoms();
    const std::int64_t total = static_cast<std::int64_t>(tiles) + atoms;
    const std::int64_t team_items = static_cast<std::int64_t>(size) * items_;
    auto ends_at = [this](I t) { return layout_.tile_begin(t); };
    for (std::int64_t chunk = procs_.team_index; chunk * team_items < total; chunk += procs_.team_count) {
      const std::int64_t d0 = chunk * team_items;
      const std::int64_t d1 = d0 + team_items < total ? d0 + team_items : total;
      if (rank == 0) {
        const auto c0 = merge_path_search(d0, ends_at, tiles, atoms);
        const auto c1 = merge_path_search(d1, ends_at, tiles, atoms);
        bounds_[0] = c0.tile;
        bounds_[1] = c1.tile;
      }
      team.sync();
      const I tile_lo = bounds_[0], tile_hi = bounds_[1];
      const std::int64_t my0 = d0 + static_cast<std::int64_t>(rank) * items_;
      const std::int64_t my1 = my0 + items_ < d1 ? my0 + items_ : d1;
      if (my0 < my1) {
        auto c = merge_path_search(my0, ends_at, tiles, atoms, tile_lo, tile_hi);
        const auto e = merge_path_search(my1, ends_at, tiles, atoms, tile_lo, tile_hi);
        consume(c, e, sink);
      }
      team.sync();  // bounds_ is rewritten next chunk
    }
  }

  // The runs between two merge-path coordinates (shared with the SpMV kernels).
  APIARY_NO_EXEC_CHECK
  template <class Sink>
  APIARY_HD void consume(MergeCoordinate<I> c, MergeCoordinate<I> e, Sink& sink) const {
    I t = c.tile, a = c.atom;
    for (; t < e.tile; ++t) {
      const I begin = layout_.tile_begin(t), end = layout_.tile_end(t);
      sink(Run<I>{t, a, end, I{1}, a == begin ? Combine::store : Combine::atomic, 1u});
      a = end;
    }
    if (a < e.atom) sink(Run<I>{t, a, e.atom, I{1}, Combine::atomic, 1u});
  }

 private:
  Procs& procs_;
  const Layout& layout_;
  unsigned items_;
  I* bounds_;
};

}  // namespace apiary::balance
