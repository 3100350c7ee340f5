// Group and block sums for the SpMV kernels' reductions.
#pragma once

namespace apiary::spmv::detail {

// Sum over an aligned group of g <= 32 lanes (the mask names only the group, so groups of
// one warp may diverge from each other).
template <class T>
__device__ __forceinline__ T group_sum(T v, unsigned g) {
  const unsigned lane = threadIdx.x & 31u;
  const unsigned mask = g >= 32 ? 0xffffffffu : (((1u << g) - 1u) << (lane & ~(g - 1u)));
  for (unsigned offset = g / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(mask, v, offset);
  return v;
}

// Sum over the whole block (every thread calls it).
template <class T>
__device__ __forceinline__ T block_sum(T v) {
  __shared__ T partial[32];
  v = group_sum(v, 32);
  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  T total = 0;
  if (warp == 0) {
    total = lane < warps ? partial[lane] : T(0);
    total = group_sum(total, 32);
  }
  __syncthreads();  // partial[] is reused by the next call
  return total;
}

}  // namespace apiary::spmv::detail
