#include "visit_kernel.cuh"

namespace apiary::spmv {
template void launch_visit_kind<ScheduleKind::thread_mapped>(const LaunchConfig&, const index_t*, index_t, index_t*, unsigned*, cudaStream_t);
template void launch_visit_kind<ScheduleKind::warp_mapped>(const LaunchConfig&, const index_t*, index_t, index_t*, unsigned*, cudaStream_t);
template void launch_visit_kind<ScheduleKind::block_mapped>(const LaunchConfig&, const index_t*, index_t, index_t*, unsigned*, cudaStream_t);
template void launch_visit_kind<ScheduleKind::virtual_warp>(const LaunchConfig&, const index_t*, index_t, index_t*, unsigned*, cudaStream_t);
template void launch_visit_kind<ScheduleKind::group_mapped>(const LaunchConfig&, const index_t*, index_t, index_t*, unsigned*, cudaStream_t);
template void launch_visit_kind<ScheduleKind::dynamic_virtual_warp>(const LaunchConfig&, const index_t*, index_t, index_t*, unsigned*, cudaStream_t);
template void launch_visit_kind<ScheduleKind::cta_warp_scan>(const LaunchConfig&, const index_t*, index_t, index_t*, unsigned*, cudaStream_t);
}  // namespace apiary::spmv
