// Local warp search (seed 001, 2.4.2): a warp loads the sizes of warp-size consecutive tiles,
// scans them, and its lanes take the concatenated atoms in warp-stride order (coalesced),
// finding each atom's tile with a short search (log2(warp) steps) in the scanned sizes.
// Balanced inside a warp, not across warps.
#pragma once

#include <apiary/balance/layout.hpp>
#include <apiary/balance/params.hpp>
#include <apiary/balance/run.hpp>
#include <apiary/balance/search.hpp>
#include <apiary/balance/team_scan.hpp>

#include <cstddef>

namespace apiary::balance {

template <class Procs, class Layout>
class LocalWarpSearch {
 public:
  using I = typename Layout::index_type;
  static constexpr bool may_split = true;
  static std::size_t scratch_bytes(unsigned team_size, const ScheduleParams<I>&) {
    return sizeof(I) * 3 * static_cast<std::size_t>(team_size);
  }

  APIARY_NO_EXEC_CHECK
  APIARY_HD LocalWarpSearch(Procs& procs, const Layout& layout, const ScheduleParams<I>&, void* scratch)
      : procs_(procs), layout_(layout), scratch_(static_cast<I*>(scratch)) {}

  APIARY_NO_EXEC_CHECK
  template <class Sink>
  APIARY_HD void run(Sink& sink) {
    auto& team = procs_.team;
    const unsigned size = team.size(), rank = team.rank();
    const unsigned ws = team.warp_size(), lane = rank % ws, warp = rank / ws, warps = size / ws;
    I* scan = scratch_;
    I* exclusive = scratch_ + 2 * size;
    const I tiles = layout_.num_tiles();
    const std::int64_t global_warp = static_cast<std::int64_t>(procs_.team_index) * warps + warp;
    const std::int64_t total_warps = static_cast<std::int64_t>(procs_.team_count) * warps;
    for (std::int64_t base = global_warp * ws; base < tiles; base += total_warps * ws) {
      const I first_tile = static_cast<I>(base);
      const I count = min_of<I>(static_cast<I>(ws), tiles - first_tile);
      const I my_tile = first_tile + static_cast<I>(lane);
      const I my_size = static_cast<I>(lane) < count ? layout_.tile_end(my_tile) - layout_.tile_begin(my_tile) : I{0};
      I total = 0;
      const I before = group_exclusive_scan<true>(team, ws, my_size, scan, total);
      exclusive[rank] = before;
      team.sync_warp();
      const I* rel_base = exclusive + warp * ws;
      auto rel = [&](I k) { return k < count ? rel_base[k] : total; };
      for (I j = static_cast<I>(lane); j < total; j += static_cast<I>(ws)) {
        const I k = binary_tile_search(rel, I{0}, count, j);
        const I t = first_tile + k;
        const I atom = layout_.tile_begin(t) + (j - rel(k));
        sink(Run<I>{t, atom, static_cast<I>(atom + 1), I{1}, Combine::atomic, 1u});
      }
      team.sync_warp();
    }
  }

 private:
  Procs& procs_;
  const Layout& layout_;
  I* scratch_;
};

}  // namespace apiary::balance
