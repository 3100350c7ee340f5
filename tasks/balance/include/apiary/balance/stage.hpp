// Optional staging hooks of a sink. Schedules that process a team-wide window of consecutive
// atoms (multi-phase mapping) let the sink move the window through shared memory in coalesced
// order before the runs (stage_in) and after them (stage_out): seed 001's "iterative
// coalesced expansion". Sinks without the hooks read and write global memory directly.
#pragma once

#include <apiary/balance/config.hpp>

namespace apiary::balance {

template <class Sink, class TeamT, class I>
concept StagingSink = requires(Sink& sink, TeamT& team, I first, I last) {
  sink.stage_in(team, first, last);
  sink.stage_out(team, first, last);
};

// A further optional hook for sinks that need a chunk's start: after stage_in of the first
// window of a chunk of consecutive windows (before the team's barrier and the runs),
// stage_chunk(team, tile_first, first) says that the chunk begins at atom `first`, inside the
// tile whose first atom is `tile_first` (<= first).
template <class Sink, class TeamT, class I>
concept ChunkStagingSink = requires(Sink& sink, TeamT& team, I tile_first, I first) {
  sink.stage_chunk(team, tile_first, first);
};

APIARY_NO_EXEC_CHECK
template <class Sink, class TeamT, class I>
APIARY_HD void stage_in(Sink& sink, TeamT& team, I first, I last) {
  if constexpr (StagingSink<Sink, TeamT, I>) sink.stage_in(team, first, last);
}

APIARY_NO_EXEC_CHECK
template <class Sink, class TeamT, class I>
APIARY_HD void stage_out(Sink& sink, TeamT& team, I first, I last) {
  if constexpr (StagingSink<Sink, TeamT, I>) sink.stage_out(team, first, last);
}

}  // namespace apiary::balance
