// Block search (Davidson et al., seed 001 2.4.3): a team loads the offsets of a fixed-size
// "maxi chunk" of tiles into shared memory and splits that chunk's atoms evenly over its
// threads, each finding its start with one search in shared memory. Balanced inside a team,
// not across teams (chunks of equal tile count hold different atom counts).
#pragma once

#include <apiary/balance/layout.hpp>
#include <apiary/balance/params.hpp>
#include <apiary/balance/run.hpp>
#include <apiary/balance/search.hpp>

#include <cstddef>

namespace apiary::balance {

template <class Procs, class Layout>
class BlockSearch {
 public:
  using I = typename Layout::index_type;
  static constexpr bool may_split = true;
  static unsigned chunk_tiles(unsigned team_size, const ScheduleParams<I>& params) {
    return params.tiles_per_chunk ? params.tiles_per_chunk : 4 * team_size;
  }
  static std::size_t scratch_bytes(unsigned team_size, const ScheduleParams<I>& params) {
    return sizeof(I) * (chunk_tiles(team_size, params) + 1);
  }

  APIARY_NO_EXEC_CHECK
  APIARY_HD BlockSearch(Procs& procs, const Layout& layout, const ScheduleParams<I>& params, void* scratch)
      : procs_(procs), layout_(layout), offsets_(static_cast<I*>(scratch)) {
    chunk_ = params.tiles_per_chunk ? params.tiles_per_chunk : 4 * procs.team.size();
  }

  APIARY_NO_EXEC_CHECK
  template <class Sink>
  APIARY_HD void run(Sink& sink) {
    auto& team = procs_.team;
    const unsigned size = team.size(), rank = team.rank();
    const I tiles = layout_.num_tiles();
    for (std::int64_t c = procs_.team_index; c * chunk_ < tiles; c += procs_.team_count) {
      const I first_tile = static_cast<I>(c * chunk_);
      const I count = min_of<I>(static_cast<I>(chunk_), tiles - first_tile);
      for (I k = static_cast<I>(rank); k <= count; k += static_cast<I>(size))
        offsets_[k] = k < count ? layout_.tile_begin(first_tile + k) : layout_.tile_end(first_tile + count - 1);
      team.sync();
      const I base = offsets_[0], total = offsets_[count] - base;
      const I share = ceil_div<I>(total, static_cast<I>(size));
      const I lo = base + static_cast<I>(rank) * share, hi = min_of<I>(base + total, lo + share);
      if (lo < hi) {
        auto at = [this](I k) { return offsets_[k]; };
        const I k = binary_tile_search(at, I{0}, count, lo);
        auto shifted = [&](I t) { return offsets_[t - first_tile]; };
        emit_contiguous(first_tile + k, lo, hi, first_tile + count, shifted, sink);
      }
      team.sync();
    }
  }

 private:
  Procs& procs_;
  const Layout& layout_;
  I* offsets_;
  unsigned chunk_;
};

}  // namespace apiary::balance
