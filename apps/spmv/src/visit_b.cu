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
  balance::visit_schedule(kind, [&](auto k) {
    launch_visit_kind<decltype(k)::value>(config, offsets, rows, out, visits, stream);
  });
}
}  // namespace apiary::spmv
