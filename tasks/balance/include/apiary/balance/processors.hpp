// "The processors at hand": every schedule runs over a set of teams of threads. A team is a
// group that can synchronise (a CUDA block, a cooperative-groups tile, the threads of one
// apiary task worker, simulated CPU threads); the schedule sees the team plus its index among
// `team_count` teams. A plain kernel is grid_processors() (team = block, count = grid); one
// task worker is worker_processors(worker) (team = the worker, count = 1).
#pragma once

#include <apiary/balance/config.hpp>

#include <concepts>
#include <cstdint>

namespace apiary::balance {

// rank() in [0, size()), sync() a barrier over the team. warp_size() is the number of
// consecutive ranks that form a hardware warp (min(32, size) on the GPU) and sync_warp() a
// barrier over the caller's warp; schedules that use warp-level phases need both.
template <class T>
concept Team = requires(T& team) {
  { team.rank() } -> std::convertible_to<unsigned>;
  { team.size() } -> std::convertible_to<unsigned>;
  team.sync();
  { team.warp_size() } -> std::convertible_to<unsigned>;
  team.sync_warp();
};

template <class TeamT>
struct Processors {
  TeamT team;
  unsigned team_index = 0;
  unsigned team_count = 1;

  APIARY_NO_EXEC_CHECK
  APIARY_HD std::int64_t global_rank() const {
    return static_cast<std::int64_t>(team_index) * team.size() + team.rank();
  }
  APIARY_NO_EXEC_CHECK
  APIARY_HD std::int64_t global_size() const { return static_cast<std::int64_t>(team_count) * team.size(); }
};

// Adapts anything with rank()/size()/sync() (an apiary task Worker) to the Team concept.
// Workers below 32 threads are one partial warp; above, the hardware warps of the block.
template <class W>
struct WorkerTeam {
  W worker;
  APIARY_NO_EXEC_CHECK
  APIARY_HD unsigned rank() const { return worker.rank(); }
  APIARY_NO_EXEC_CHECK
  APIARY_HD unsigned size() const { return worker.size(); }
  APIARY_NO_EXEC_CHECK
  APIARY_HD void sync() { worker.sync(); }
  APIARY_NO_EXEC_CHECK
  APIARY_HD unsigned warp_size() const { return worker.size() < 32 ? worker.size() : 32u; }
  APIARY_NO_EXEC_CHECK
  APIARY_HD void sync_warp() {
#if APIARY_DEVICE_CODE
    if (worker.size() < 32) worker.sync();
    else __syncwarp();
#else
    worker.sync();
#endif
  }
};

template <class W>
APIARY_HD Processors<WorkerTeam<W>> worker_processors(W worker, unsigned index = 0, unsigned count = 1) {
  return {WorkerTeam<W>{worker}, index, count};
}

}  // namespace apiary::balance
