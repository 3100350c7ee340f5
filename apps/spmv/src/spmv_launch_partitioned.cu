// Explicit instantiations of the SpMV kernel (partitioned schedules); split over several
// translation units to keep nvcc times and memory reasonable.
#include "spmv_kernel.cuh"

namespace apiary::spmv {
APIARY_SPMV_INSTANTIATE(two_phase)
APIARY_SPMV_INSTANTIATE(merge_path)
APIARY_SPMV_INSTANTIATE(multi_phase)
}  // namespace apiary::spmv
