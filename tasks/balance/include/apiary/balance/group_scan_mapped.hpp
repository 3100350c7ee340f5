// Osama's group-mapped schedule (seed 000, 4.4.2.3): a group takes as many tiles as it has
// threads, scans their sizes in shared memory and then balances the concatenated atoms over
// its threads; the tile of an atom is found by a search in the scanned sizes. Here each
// thread takes an equal contiguous share, so a thread's partial sums combine with at most two
// atomics per round.
#pragma once

#include <apiary/balance/layout.hpp>
#include <apiary/balance/params.hpp>
#include <apiary/balance/run.hpp>
#include <apiary/balance/search.hpp>
#include <apiary/balance/team_scan.hpp>

#include <cstddef>

namespace apiary::balance {

template <class Procs, class Layout>
class GroupScanMapped {
 public:
  using I = typename Layout::index_type;
  static constexpr bool may_split = true;
  // Scan buffers (2 per thread) plus one exclusive offset per thread and the group totals.
  static std::size_t scratch_bytes(unsigned team_size, const ScheduleParams<I>&) {
    return sizeof(I) * (3 * static_cast<std::size_t>(team_size) + 1);
  }

  APIARY_NO_EXEC_CHECK
  APIARY_HD GroupScanMapped(Procs& procs, const Layout& layout, const ScheduleParams<I>& params, void* scratch)
      : procs_(procs), layout_(layout), scratch_(static_cast<I*>(scratch)) {
    const unsigned team_size = procs.team.size();
    group_ = params.group_size == 0 || params.group_size > team_size ? team_size : params.group_size;
  }

  APIARY_NO_EXEC_CHECK
  template <class Sink>
  APIARY_HD void run(Sink& sink) {
    auto& team = procs_.team;
    const unsigned size = team.size(), rank = team.rank();
    const unsigned lane = rank % group_, base_rank = rank - lane;
    I* scan = scratch_;
    I* exclusive = scratch_ + 2 * size;
    const I tiles = layout_.num_tiles();
    // Rounds are uniform over the team (every thread runs the same number), so the scans can
    // use team barriers whatever the group size.
    for (std::int64_t round = procs_.team_index; round * size < tiles; round += procs_.team_count) {
      const I team_first = static_cast<I>(round * size);
      const I my_tile = team_first + static_cast<I>(rank);
      const I size_of_mine = my_tile < tiles ? static_cast<I>(layout_.tile_end(my_tile) - layout_.tile_begin(my_tile)) : I{0};
      I total = 0;
      const I before = group_exclusive_scan<false>(team, group_, size_of_mine, scan, total);
      exclusive[rank] = before;
      team.sync();
      // This thread's contiguous share of the group's atoms.
      const I share = ceil_div<I>(total, static_cast<I>(group_));
      const I lo = static_cast<I>(lane) * share;
      const I hi = min_of<I>(total, lo + share);
      if (lo < hi) {
        const I group_first_tile = team_first + static_cast<I>(base_rank);
        const I group_tiles = min_of<I>(static_cast<I>(group_), tiles - group_first_tile);
        // Offsets relative to the group: exclusive[base_rank + k] for k < group_tiles, total after.
        auto rel = [&](I k) { return k < group_tiles ? exclusive[base_rank + static_cast<unsigned>(k)] : total; };
        const I k = binary_tile_search(rel, I{0}, group_tiles, lo);
        // Translate relative positions to atoms of the layout.
        I first = lo;
        for (I t = k; t < group_tiles && first < hi; ++t) {
          const I tb = rel(t), te = rel(t + 1);
          const I stop = min_of(te, hi);
          if (stop > first) {
            const I tile = group_first_tile + t;
            const I atom0 = layout_.tile_begin(tile);
            const bool whole = first == tb && stop == te;
            sink(Run<I>{tile, atom0 + (first - tb), atom0 + (stop - tb), I{1}, whole ? Combine::store : Combine::atomic, 1u});
            first = stop;
          }
        }
      }
      team.sync();  // exclusive[] is rewritten next round
    }
  }

 private:
  Procs& procs_;
  const Layout& layout_;
  I* scratch_;
  unsigned group_;
};

}  // namespace apiary::balance
