// Explicit instantiations of the SpMV kernel (search schedules); split over several
// translation units to keep nvcc times and memory reasonable.
#include "spmv_kernel.cuh"

namespace apiary::spmv {
APIARY_SPMV_INSTANTIATE(local_warp_search)
APIARY_SPMV_INSTANTIATE(direct_search)
APIARY_SPMV_INSTANTIATE(block_search)
}  // namespace apiary::spmv
