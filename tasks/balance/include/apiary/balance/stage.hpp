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

// Further optional hooks for a schedule that walks chunks of consecutive windows:
// stage_chunk(team, first, last) says, before any window of a chunk is staged, that the chunk
// holds atoms [first, last); a sink whose staging needs nothing of the schedule's own loads
// (no tile offsets) says so with `static constexpr bool stages_without_offsets = true`, and the
// schedule may then stage a chunk's first window while it loads the chunk's offsets.
template <class Sink, class TeamT, class I>
concept ChunkStagingSink = requires(Sink& sink, TeamT& team, I first, I last) { sink.stage_chunk(team, first, last); };

template <class Sink>
concept StagesWithoutOffsets = requires { requires Sink::stages_without_offsets; };

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
