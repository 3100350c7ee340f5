// Tuning knobs shared by the schedules; each schedule reads the ones it needs.
#pragma once

#include <apiary/balance/search.hpp>

#include <cstdint>

namespace apiary::balance {

template <class I>
struct ScheduleParams {
  // Group-based schedules: threads per tile group (power of two <= 32), 0 = the whole team.
  unsigned group_size = 32;
  // Atoms (or merge items) per thread per step: merge-path, two-phase, multi-phase, block search.
  unsigned items_per_thread = 7;
  // Multi-phase: expansion iterations per partition chunk (the "iteration factor" IS).
  unsigned iterations = 2;
  // Block search: tiles per maxi chunk (0 = 4 * team size).
  unsigned tiles_per_chunk = 0;
  // CTA+warp+scan: tiles longer than these go to the whole team / one warp (0 = team size / warp size).
  I cta_threshold = 0;
  I warp_threshold = 0;
  // Dynamic virtual warps: tiles longer than this escalate to the whole team (0 = 8 * group size).
  I escalate_threshold = 0;
  // Multi-phase partition search.
  SearchKind search = SearchKind::binary;
  // Two-phase and multi-phase: the partition array (num_chunks + 1 tile indices) filled by
  // the schedule's partition() in a preceding pass.
  const I* partition = nullptr;
};

}  // namespace apiary::balance
