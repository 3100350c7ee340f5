// Names of the schedules, for command lines, JSON and reports.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <type_traits>

namespace apiary::balance {

enum class ScheduleKind : std::uint8_t {
  thread_mapped,         // tile per thread
  warp_mapped,           // tile per warp (group of 32)
  block_mapped,          // tile per team
  virtual_warp,          // tile per group of 2..16 (static size)
  group_mapped,          // Osama's group-mapped: tile sizes scanned, atoms balanced in the group
  dynamic_virtual_warp,  // run-time virtual-warp size, long tiles escalate to the team
  cta_warp_scan,         // Merrill's CTA + warp + scan
  local_warp_search,     // warp loads 32 tiles, lanes search their atoms
  direct_search,         // atom per thread, global search
  block_search,          // maxi chunk of tiles per team, search in shared memory
  two_phase,             // partition + expansion
  merge_path,            // work-oriented, tiles + atoms balanced
  multi_phase,           // hybrid partition + iterative coalesced expansion
};

inline constexpr std::array<ScheduleKind, 13> all_schedules{
    ScheduleKind::thread_mapped,     ScheduleKind::warp_mapped,   ScheduleKind::block_mapped,
    ScheduleKind::virtual_warp,      ScheduleKind::group_mapped,  ScheduleKind::dynamic_virtual_warp,
    ScheduleKind::cta_warp_scan,     ScheduleKind::local_warp_search, ScheduleKind::direct_search,
    ScheduleKind::block_search,      ScheduleKind::two_phase,     ScheduleKind::merge_path,
    ScheduleKind::multi_phase};

constexpr std::string_view name(ScheduleKind kind) {
  switch (kind) {
    case ScheduleKind::thread_mapped: return "thread_mapped";
    case ScheduleKind::warp_mapped: return "warp_mapped";
    case ScheduleKind::block_mapped: return "block_mapped";
    case ScheduleKind::virtual_warp: return "virtual_warp";
    case ScheduleKind::group_mapped: return "group_mapped";
    case ScheduleKind::dynamic_virtual_warp: return "dynamic_virtual_warp";
    case ScheduleKind::cta_warp_scan: return "cta_warp_scan";
    case ScheduleKind::local_warp_search: return "local_warp_search";
    case ScheduleKind::direct_search: return "direct_search";
    case ScheduleKind::block_search: return "block_search";
    case ScheduleKind::two_phase: return "two_phase";
    case ScheduleKind::merge_path: return "merge_path";
    case ScheduleKind::multi_phase: return "multi_phase";
  }
  return "?";
}

constexpr std::optional<ScheduleKind> parse_schedule(std::string_view text) {
  for (ScheduleKind k : all_schedules)
    if (name(k) == text) return k;
  return std::nullopt;
}

// Calls f(std::integral_constant<ScheduleKind, kind>{}) for a run-time kind: the one place
// that turns a schedule name into a compile-time schedule (launch code, shared-memory sizes).
template <class F>
decltype(auto) visit_schedule(ScheduleKind kind, F&& f) {
  switch (kind) {
#define APIARY_SCHEDULE_CASE(k) \
  case ScheduleKind::k: return f(std::integral_constant<ScheduleKind, ScheduleKind::k>{});
    APIARY_SCHEDULE_CASE(thread_mapped)
    APIARY_SCHEDULE_CASE(warp_mapped)
    APIARY_SCHEDULE_CASE(block_mapped)
    APIARY_SCHEDULE_CASE(virtual_warp)
    APIARY_SCHEDULE_CASE(group_mapped)
    APIARY_SCHEDULE_CASE(dynamic_virtual_warp)
    APIARY_SCHEDULE_CASE(cta_warp_scan)
    APIARY_SCHEDULE_CASE(local_warp_search)
    APIARY_SCHEDULE_CASE(direct_search)
    APIARY_SCHEDULE_CASE(block_search)
    APIARY_SCHEDULE_CASE(two_phase)
    APIARY_SCHEDULE_CASE(merge_path)
    APIARY_SCHEDULE_CASE(multi_phase)
#undef APIARY_SCHEDULE_CASE
  }
  throw std::invalid_argument("unknown schedule kind");
}

}  // namespace apiary::balance
