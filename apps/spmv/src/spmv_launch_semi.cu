// Explicit instantiations of the SpMV kernel (semi schedules); split over several
// translation units to keep nvcc times and memory reasonable.
#include "spmv_kernel.cuh"

namespace apiary::spmv {
APIARY_SPMV_INSTANTIATE(group_mapped)
APIARY_SPMV_INSTANTIATE(dynamic_virtual_warp)
APIARY_SPMV_INSTANTIATE(cta_warp_scan)
}  // namespace apiary::spmv
