// Explicit instantiations of the SpMV kernel (static schedules); split over several
// translation units to keep nvcc times and memory reasonable.
#include "spmv_kernel.cuh"

namespace apiary::spmv {
APIARY_SPMV_INSTANTIATE(thread_mapped)
APIARY_SPMV_INSTANTIATE(warp_mapped)
APIARY_SPMV_INSTANTIATE(block_mapped)
APIARY_SPMV_INSTANTIATE(virtual_warp)
}  // namespace apiary::spmv
