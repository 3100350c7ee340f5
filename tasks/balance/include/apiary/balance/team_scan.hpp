// Exclusive prefix sums over aligned groups of a team (Hillis-Steele in scratch memory),
// used by the group-mapped, CTA+warp+scan and local-warp-search schedules.
#pragma once

#include <apiary/balance/config.hpp>

namespace apiary::balance {

// Every team thread calls this in uniform control flow (the whole team when WarpLevel is
// false; the caller's whole warp when true, with width <= warp size). Groups are `width`
// consecutive ranks starting at multiples of width. scratch holds 2 * team.size() values.
// Returns the exclusive prefix of `value` in its group; `total` receives the group's sum.
APIARY_NO_EXEC_CHECK
template <bool WarpLevel, class TeamT, class I>
APIARY_HD I group_exclusive_scan(TeamT& team, unsigned width, I value, I* scratch, I& total) {
  auto barrier = [&team] {
    if constexpr (WarpLevel) team.sync_warp();
    else team.sync();
  };
  const unsigned r = team.rank(), lane = r % width, base = r - lane;
  I* in = scratch;
  I* out = scratch + team.size();
  in[r] = value;
  barrier();
  for (unsigned offset = 1; offset < width; offset <<= 1) {
    I v = in[r];
    if (lane >= offset) v += in[r - offset];
    out[r] = v;
    barrier();  // one barrier per step: the next step writes the buffer this one read
    I* t = in;
    in = out;
    out = t;
  }
  const I inclusive = in[r];
  total = in[base + width - 1];
  barrier();  // scratch may be reused right after
  return inclusive - value;
}

}  // namespace apiary::balance
