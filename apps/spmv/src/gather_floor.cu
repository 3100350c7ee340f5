#include "gather_floor.hpp"
#include "group_sum.cuh"

#include <apiary/cuda_check.hpp>

namespace apiary::spmv {

using sparse::index_t;

namespace {

constexpr unsigned floor_threads = 256;

// Grid-stride over the non-zeros in quads: 16-byte loads of four column indices and four
// values, four independent gathers of x in flight per thread.
template <class T>
__global__ void __launch_bounds__(floor_threads) gather_floor_kernel(sparse::CsrView<T> a, const T* __restrict__ x,
                                                                    T* __restrict__ partials) {
  const index_t nnz = a.nnz;
  const index_t quads = nnz / 4;
  const index_t stride = static_cast<index_t>(gridDim.x * blockDim.x);
  const int4* cols4 = reinterpret_cast<const int4*>(a.col_indices);
  T sum = 0;
  for (index_t q = static_cast<index_t>(blockIdx.x * blockDim.x + threadIdx.x); q < quads; q += stride) {
    const int4 c = __ldg(cols4 + q);
    const T* v = a.values + 4 * static_cast<std::int64_t>(q);
    sum += __ldg(v) * __ldg(x + c.x) + __ldg(v + 1) * __ldg(x + c.y) + __ldg(v + 2) * __ldg(x + c.z) +
           __ldg(v + 3) * __ldg(x + c.w);
  }
  for (index_t k = 4 * quads + static_cast<index_t>(blockIdx.x * blockDim.x + threadIdx.x); k < nnz; k += stride)
    sum += __ldg(a.values + k) * __ldg(x + __ldg(a.col_indices + k));
  sum = detail::block_sum(sum);
  if (threadIdx.x == 0) partials[blockIdx.x] = sum;
}

}  // namespace

unsigned gather_floor_blocks(int sm_count) { return static_cast<unsigned>(sm_count > 0 ? sm_count : 1) * 8; }

template <class T>
void launch_gather_floor(sparse::CsrView<T> a, const T* x, T* partials, unsigned blocks, cudaStream_t stream) {
  gather_floor_kernel<T><<<blocks, floor_threads, 0, stream>>>(a, x, partials);
  APIARY_CUDA_CHECK(cudaGetLastError());
}

template <class T>
GatherFloor<T>::GatherFloor(sparse::CsrView<T> a, const T* x, int sm_count)
    : a_(a), x_(x), blocks_(gather_floor_blocks(sm_count)), partials_(blocks_) {}

template <class T>
CheckResult GatherFloor<T>::run_checked(const std::vector<double>& ref, const std::vector<double>& magnitude) {
  partials_.fill_bytes(0xff);
  run();
  APIARY_CUDA_CHECK(cudaDeviceSynchronize());
  return check_total<T>(partials_.download(), ref, magnitude);
}

template <class T>
void GatherFloor<T>::run() {
  launch_gather_floor<T>(a_, x_, partials_.data(), blocks_, nullptr);
}

template class GatherFloor<float>;
template class GatherFloor<double>;
template void launch_gather_floor<float>(sparse::CsrView<float>, const float*, float*, unsigned, cudaStream_t);
template void launch_gather_floor<double>(sparse::CsrView<double>, const double*, double*, unsigned, cudaStream_t);

}  // namespace apiary::spmv
