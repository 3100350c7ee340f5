// Tile per group: warp-mapped (group = 32), block-mapped (group = the team) and virtual
// warps (groups of 2..16, seed 001 2.2.2), all one schedule with the group size as a
// parameter (cooperative groups style, seed 000 4.4.2.2). The group's threads stride over
// the tile's atoms (coalesced), and reduce over the group.
#pragma once

#include <apiary/balance/layout.hpp>
#include <apiary/balance/params.hpp>
#include <apiary/balance/run.hpp>

#include <cstddef>

namespace apiary::balance {

template <class Procs, class Layout>
class GroupMapped {
 public:
  using I = typename Layout::index_type;
  static constexpr bool may_split = false;
  static std::size_t scratch_bytes(unsigned, const ScheduleParams<I>&) { return 0; }

  APIARY_NO_EXEC_CHECK
  APIARY_HD GroupMapped(Procs& procs, const Layout& layout, const ScheduleParams<I>& params, void*)
      : procs_(procs), layout_(layout) {
    const unsigned team_size = procs.team.size();
    group_ = params.group_size == 0 || params.group_size > team_size ? team_size : params.group_size;
  }

  APIARY_HD unsigned group_size() const { return group_; }

  APIARY_NO_EXEC_CHECK
  template <class Sink>
  APIARY_HD void run(Sink& sink) {
    const unsigned team_size = procs_.team.size();
    const unsigned per_team = team_size / group_;
    const unsigned lane = procs_.team.rank() % group_;
    const unsigned group = procs_.team.rank() / group_;
    const std::int64_t first = static_cast<std::int64_t>(procs_.team_index) * per_team + group;
    const std::int64_t groups = static_cast<std::int64_t>(procs_.team_count) * per_team;
    // Ranks past the last whole group (team size not a multiple of the group) sit out.
    if (group >= per_team) return;
    for (std::int64_t t = first; t < layout_.num_tiles(); t += groups) {
      const I tile = static_cast<I>(t);
      sink(Run<I>{tile, static_cast<I>(layout_.tile_begin(tile) + static_cast<I>(lane)), layout_.tile_end(tile),
                  static_cast<I>(group_), Combine::group, group_});
    }
  }

 private:
  Procs& procs_;
  const Layout& layout_;
  unsigned group_;
};

}  // namespace apiary::balance
