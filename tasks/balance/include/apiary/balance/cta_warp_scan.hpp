// CTA+warp+scan (Merrill et al., seed 001 2.3.2). The team takes a batch of one tile per
// thread. Tiles above the CTA threshold are processed by the whole team, one at a time,
// chosen by "strip-mined gathering" (threads race to write their rank, the winner's tile is
// processed); tiles above the warp threshold likewise by their warp; the rest are scanned and
// their atoms balanced over the team (equal contiguous shares here, see group_scan_mapped.hpp).
#pragma once

#include <apiary/balance/layout.hpp>
#include <apiary/balance/params.hpp>
#include <apiary/balance/run.hpp>
#include <apiary/balance/search.hpp>
#include <apiary/balance/team_scan.hpp>

#include <cstddef>

namespace apiary::balance {

template <class Procs, class Layout>
class CtaWarpScan {
 public:
  using I = typename Layout::index_type;
  static constexpr bool may_split = true;
  // Scan buffers (2/thread), exclusive offsets (1/thread), winners (1 + 1 per warp).
  static std::size_t scratch_bytes(unsigned team_size, const ScheduleParams<I>&) {
    return sizeof(I) * (3 * static_cast<std::size_t>(team_size) + 1 + team_size);
  }

  APIARY_NO_EXEC_CHECK
  APIARY_HD CtaWarpScan(Procs& procs, const Layout& layout, const ScheduleParams<I>& params, void* scratch)
      : procs_(procs), layout_(layout), scratch_(static_cast<I*>(scratch)) {
    cta_th_ = params.cta_threshold > 0 ? params.cta_threshold : static_cast<I>(procs.team.size());
    warp_th_ = params.warp_threshold > 0 ? params.warp_threshold : static_cast<I>(procs.team.warp_size());
  }

  APIARY_NO_EXEC_CHECK
  template <class Sink>
  APIARY_HD void run(Sink& sink) {
    auto& team = procs_.team;
    const unsigned size = team.size(), rank = team.rank();
    const unsigned ws = team.warp_size(), lane = rank % ws, warp = rank / ws;
    I* scan = scratch_;
    I* exclusive = scratch_ + 2 * size;
    I& cta_winner = scratch_[3 * size];
    I* warp_winner = scratch_ + 3 * size + 1;
    const I tiles = layout_.num_tiles();
    for (std::int64_t round = procs_.team_index; round * size < tiles; round += procs_.team_count) {
      const I first_tile = static_cast<I>(round * size);
      const I tile = first_tile + static_cast<I>(rank);
      I begin = 0, end = 0;
      if (tile < tiles) {
        begin = layout_.tile_begin(tile);
        end = layout_.tile_end(tile);
      }
      bool pending = end > begin;

      // CTA phase.
      for (;;) {
        if (rank == 0) DeviceAtomic<I>(cta_winner).store(-1, mo::relaxed);
        team.sync();
        if (pending && end - begin > cta_th_) DeviceAtomic<I>(cta_winner).store(static_cast<I>(rank), mo::relaxed);
        team.sync();
        const I w = DeviceAtomic<I>(cta_winner).load(mo::relaxed);
        if (w < 0) break;  // uniform: every thread read the same value
        const I t = first_tile + w;
        sink(Run<I>{t, static_cast<I>(layout_.tile_begin(t) + static_cast<I>(rank)), layout_.tile_end(t),
                    static_cast<I>(size), Combine::group, size});
        if (static_cast<I>(rank) == w) pending = false;
        team.sync();  // everyone has read the winner before it is reset
      }

      // Warp phase: the same with warp barriers and one winner slot per warp.
      for (;;) {
        if (lane == 0) DeviceAtomic<I>(warp_winner[warp]).store(-1, mo::relaxed);
        team.sync_warp();
        if (pending && end - begin > warp_th_) DeviceAtomic<I>(warp_winner[warp]).store(static_cast<I>(lane), mo::relaxed);
        team.sync_warp();
        const I w = DeviceAtomic<I>(warp_winner[warp]).load(mo::relaxed);
        if (w < 0) break;
        const I t = first_tile + static_cast<I>(warp * ws) + w;
        sink(Run<I>{t, static_cast<I>(layout_.tile_begin(t) + static_cast<I>(lane)), layout_.tile_end(t),
                    static_cast<I>(ws), Combine::group, ws});
        if (static_cast<I>(lane) == w) pending = false;
        team.sync_warp();
      }

      // Scan phase over what is left.
      I total = 0;
      const I before = group_exclusive_scan<false>(team, size, pending ? end - begin : I{0}, scan, total);
      exclusive[rank] = before;
      team.sync();
      const I share = ceil_div<I>(total, static_cast<I>(size));
      const I lo = static_cast<I>(rank) * share, hi = min_of<I>(total, lo + share);
      if (lo < hi) {
        const I count = min_of<I>(static_cast<I>(size), tiles - first_tile);
        auto rel = [&](I k) { return k < count ? exclusive[k] : total; };
        I k = binary_tile_search(rel, I{0}, count, lo);
        I first = lo;
        for (; k < count && first < hi; ++k) {
          const I tb = rel(k), te = rel(k + 1);
          const I stop = min_of(te, hi);
          if (stop <= first) continue;  // a tile taken by the CTA/warp phase (size 0 here)
          const I t = first_tile + k;
          const I atom0 = layout_.tile_begin(t);
          const bool whole = first == tb && stop == te;
          sink(Run<I>{t, atom0 + (first - tb), atom0 + (stop - tb), I{1}, whole ? Combine::store : Combine::atomic, 1u});
          first = stop;
        }
      }
      team.sync();
    }
  }

 private:
  Procs& procs_;
  const Layout& layout_;
  I* scratch_;
  I cta_th_, warp_th_;
};

}  // namespace apiary::balance
