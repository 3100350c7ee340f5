#include "visit_kernel.cuh"

#include <apiary/error.hpp>

namespace apiary::spmv {
extern template void launch_visit_kind<ScheduleKind::thread_mapped>(const LaunchConfig&, const index_t*, index_t, index_t*, unsigned*, cudaStream_t);
extern template void launch_visit_kind<ScheduleKind::warp_mapped>(const LaunchConfig&, const index_t*, index_t, index_t*, unsigned*, cudaStream_t);
extern template void launch_visit_kind<ScheduleKind::block_mapped>(const LaunchConfig&, const index_t*, index_t, index_t*, unsigned*, cudaStream_t);
extern template void launch_visit_kind<ScheduleKind::virtual_warp>(const LaunchConfig&, const index_t*, index_t, index_t*, unsigned*, cudaStream_t);
extern template void launch_visit_kind<ScheduleKind::group_mapped>(const LaunchConfig&, const index_t*, index_t, index_t*, unsigned*, cudaStream_t);
extern template void launch_visit_kind<ScheduleKind::dynamic_virtual_warp>(const LaunchConfig&, const index_t*, index_t, index_t*, unsigned*, cudaStream_t);
extern template void launch_visit_kind<ScheduleKind::cta_warp_scan>(const LaunchConfig&, const index_t*, index_t, index_t*, unsigned*, cudaStream_t);
template void launch_visit_kind<ScheduleKind::local_warp_search>(const LaunchConfig&, const index_t*, index_t, index_t*, unsigned*, cudaStream_t);
template void launch_visit_kind<ScheduleKind::direct_search>(const LaunchConfig&, const index_t*, index_t, index_t*, unsigned*, cudaStream_t);
template void launch_visit_kind<ScheduleKind::block_search>(const LaunchConfig&, const index_t*, index_t, index_t*, unsigned*, cudaStream_t);
template void launch_visit_kind<ScheduleKind::two_phase>(const LaunchConfig&, const index_t*, index_t, index_t*, unsigned*, cudaStream_t);
template void launch_visit_kind<ScheduleKind::merge_path>(const LaunchConfig&, const index_t*, index_t, index_t*, unsigned*, cudaStream_t);
template void launch_visit_kind<ScheduleKind::multi_phase>(const LaunchConfig&, const index_t*, index_t, index_t*, unsigned*, cudaStream_t);

void launch_visit(ScheduleKind kind, const LaunchConfig& config, const index_t* offsets, index_t rows, index_t* out,
                  unsigned* visits, cudaStream_t stream) {
  switch (kind) {
#define APIARY_CASE(k) \
  case ScheduleKind::k: return launch_visit_kind<ScheduleKind::k>(config, offsets, rows, out, visits, stream);
    APIARY_CASE(thread_mapped)
    APIARY_CASE(warp_mapped)
    APIARY_CASE(block_mapped)
    APIARY_CASE(virtual_warp)
    APIARY_CASE(group_mapped)
    APIARY_CASE(dynamic_virtual_warp)
    APIARY_CASE(cta_warp_scan)
    APIARY_CASE(local_warp_search)
    APIARY_CASE(direct_search)
    APIARY_CASE(block_search)
    APIARY_CASE(two_phase)
    APIARY_CASE(merge_path)
    APIARY_CASE(multi_phase)
#undef APIARY_CASE
  }
  throw Error("unknown schedule");
}
}  // namespace apiary::spmv
