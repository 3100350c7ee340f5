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

// A further optional hook for sinks that need a chunk's bounds: before the windows of a chunk
// of consecutive windows, stage_chunk(team, first, last, row_end) says that the chunk holds
// atoms [first, last) and that the tile holding its last atom ends at row_end (>= last: past
// the chunk where that tile goes on into the next one).
template <class Sink, class TeamT, class I>
concept ChunkStagingSink = requires(Sink& sink, TeamT& team, I first, I last, I row_end) {
  sink.stage_chunk(team, first, last, row_end);
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
