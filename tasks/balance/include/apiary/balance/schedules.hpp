// Every schedule, and the map from ScheduleKind to its class template.
#pragma once

#include <apiary/balance/block_search.hpp>
#include <apiary/balance/cta_warp_scan.hpp>
#include <apiary/balance/direct_search.hpp>
#include <apiary/balance/dynamic_virtual_warp.hpp>
#include <apiary/balance/group_mapped.hpp>
#include <apiary/balance/group_scan_mapped.hpp>
#include <apiary/balance/local_warp_search.hpp>
#include <apiary/balance/merge_path.hpp>
#include <apiary/balance/multi_phase.hpp>
#include <apiary/balance/schedule_kind.hpp>
#include <apiary/balance/thread_mapped.hpp>
#include <apiary/balance/two_phase.hpp>

namespace apiary::balance {

// warp_mapped, block_mapped and virtual_warp are GroupMapped with group sizes 32, 0 (team)
// and 2..16; the caller sets ScheduleParams::group_size (default_params() does).
template <ScheduleKind K, class Procs, class Layout>
struct ScheduleFor;
#define APIARY_BALANCE_MAP(kind, cls)              \
  template <class Procs, class Layout>             \
  struct ScheduleFor<ScheduleKind::kind, Procs, Layout> { \
    using type = cls<Procs, Layout>;               \
  };
APIARY_BALANCE_MAP(thread_mapped, ThreadMapped)
APIARY_BALANCE_MAP(warp_mapped, GroupMapped)
APIARY_BALANCE_MAP(block_mapped, GroupMapped)
APIARY_BALANCE_MAP(virtual_warp, GroupMapped)
APIARY_BALANCE_MAP(group_mapped, GroupScanMapped)
APIARY_BALANCE_MAP(dynamic_virtual_warp, DynamicVirtualWarp)
APIARY_BALANCE_MAP(cta_warp_scan, CtaWarpScan)
APIARY_BALANCE_MAP(local_warp_search, LocalWarpSearch)
APIARY_BALANCE_MAP(direct_search, DirectSearch)
APIARY_BALANCE_MAP(block_search, BlockSearch)
APIARY_BALANCE_MAP(two_phase, TwoPhase)
APIARY_BALANCE_MAP(merge_path, MergePath)
APIARY_BALANCE_MAP(multi_phase, MultiPhase)
#undef APIARY_BALANCE_MAP

template <ScheduleKind K, class Procs, class Layout>
using schedule_t = typename ScheduleFor<K, Procs, Layout>::type;

// Whether the schedule needs its partition pass (partition.hpp) before running.
constexpr bool needs_partition(ScheduleKind k) { return k == ScheduleKind::two_phase || k == ScheduleKind::multi_phase; }

// Atoms per partition chunk for the partitioned schedules.
template <class I>
std::int64_t partition_chunk_atoms(ScheduleKind k, unsigned team_size, const ScheduleParams<I>& p) {
  const std::int64_t window = static_cast<std::int64_t>(team_size) * p.items_per_thread;
  return k == ScheduleKind::multi_phase ? window * (p.iterations ? p.iterations : 1) : window;
}

// Sensible defaults per schedule (group sizes; items per thread).
template <class I>
ScheduleParams<I> default_params(ScheduleKind k, double mean_atoms_per_tile = 8, double stddev = 0) {
  ScheduleParams<I> p;
  switch (k) {
    case ScheduleKind::warp_mapped: p.group_size = 32; break;
    case ScheduleKind::block_mapped: p.group_size = 0; break;
    case ScheduleKind::virtual_warp: p.group_size = 4; break;
    case ScheduleKind::group_mapped: p.group_size = 32; break;
    case ScheduleKind::dynamic_virtual_warp: p.group_size = choose_virtual_warp(mean_atoms_per_tile); break;
    case ScheduleKind::multi_phase: p.search = choose_search(mean_atoms_per_tile, stddev); break;
    default: break;
  }
  return p;
}

}  // namespace apiary::balance
