// Dynamic virtual warps (seed 001, 2.3.1): the virtual-warp size is chosen at run time from
// the average tile size, and tiles longer than a threshold escalate. The original hands those
// to dynamic-parallelism child kernels; here the whole team takes them over (no device
// runtime needed, which FACTS.md warns slows other kernels), which keeps the schedule usable
// inside one task worker too.
#pragma once

#include <apiary/balance/layout.hpp>
#include <apiary/balance/params.hpp>
#include <apiary/balance/run.hpp>

#include <cstddef>

namespace apiary::balance {

// Power of two in [2, 32] closest to the average tile size (seed 001: 1 is excluded as it
// degenerates to tile per thread; coalescing grows with the size).
inline unsigned choose_virtual_warp(double mean_atoms_per_tile) {
  unsigned v = 2;
  while (v < 32 && v * 1.5 < mean_atoms_per_tile) v *= 2;
  return v;
}

template <class Procs, class Layout>
class DynamicVirtualWarp {
 public:
  using I = typename Layout::index_type;
  static constexpr bool may_split = false;
  // The escalation list (one slot per thread) and its length.
  static std::size_t scratch_bytes(unsigned team_size, const ScheduleParams<I>&) {
    return sizeof(I) * (static_cast<std::size_t>(team_size) + 1);
  }

  APIARY_NO_EXEC_CHECK
  APIARY_HD DynamicVirtualWarp(Procs& procs, const Layout& layout, const ScheduleParams<I>& params, void* scratch)
      : procs_(procs), layout_(layout), scratch_(static_cast<I*>(scratch)) {
    const unsigned team_size = procs.team.size();
    vw_ = params.group_size == 0 || params.group_size > team_size ? team_size : params.group_size;
    threshold_ = params.escalate_threshold > 0 ? params.escalate_threshold : static_cast<I>(8 * vw_);
  }

  APIARY_NO_EXEC_CHECK
  template <class Sink>
  APIARY_HD void run(Sink& sink) {
    auto& team = procs_.team;
    const unsigned size = team.size(), rank = team.rank();
    const unsigned lane = rank % vw_, vwarp = rank / vw_, vwarps = size / vw_;
    I* list = scratch_;
    I& count = scratch_[size];
    const I tiles = layout_.num_tiles();
    for (std::int64_t round = procs_.team_index; round * size < tiles; round += procs_.team_count) {
      if (rank == 0) count = 0;
      team.sync();
      // Phase 1: each virtual warp walks its tiles of this round's batch of team-size tiles.
      const I first = static_cast<I>(round * size);
      const I last = min_of<I>(tiles, first + static_cast<I>(size));
      for (I t = first + static_cast<I>(vwarp); vwarp < vwarps && t < last; t += static_cast<I>(vwarps)) {
        const I b = layout_.tile_begin(t), e = layout_.tile_end(t);
        if (e - b > threshold_) {
          if (lane == 0) list[DeviceAtomic<I>(count).fetch_add(1, mo::relaxed)] = t;
          continue;
        }
        sink(Run<I>{t, static_cast<I>(b + static_cast<I>(lane)), e, static_cast<I>(vw_), Combine::group, vw_});
      }
      team.sync();
      // Phase 2: the team takes the escalated tiles one by one.
      const I escalated = DeviceAtomic<I>(count).load(mo::relaxed);
      for (I k = 0; k < escalated; ++k) {
        const I t = list[k];
        sink(Run<I>{t, static_cast<I>(layout_.tile_begin(t) + static_cast<I>(rank)), layout_.tile_end(t),
                    static_cast<I>(size), Combine::group, size});
      }
      team.sync();
    }
  }

 private:
  Procs& procs_;
  const Layout& layout_;
  I* scratch_;
  unsigned vw_;
  I threshold_;
};

}  // namespace apiary::balance
