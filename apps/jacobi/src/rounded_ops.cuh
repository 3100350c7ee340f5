// Explicitly rounded arithmetic, never contracted into FMA: with one thread per row the GPU
// versions do exactly the CPU reference's operations (x + (omega * r) / d, row-ordered sums),
// so x is bitwise equal to the reference's under any math flags.
#pragma once

namespace apiary::jacobi {

__device__ inline float mul_rn(float a, float b) { return __fmul_rn(a, b); }
__device__ inline double mul_rn(double a, double b) { return __dmul_rn(a, b); }
__device__ inline float add_rn(float a, float b) { return __fadd_rn(a, b); }
__device__ inline double add_rn(double a, double b) { return __dadd_rn(a, b); }
__device__ inline float sub_rn(float a, float b) { return __fsub_rn(a, b); }
__device__ inline double sub_rn(double a, double b) { return __dsub_rn(a, b); }
__device__ inline float div_rn(float a, float b) { return __fdiv_rn(a, b); }
__device__ inline double div_rn(double a, double b) { return __ddiv_rn(a, b); }

// x_{k+1} = x_k + omega * r / d, the reference's operation order.
template <class T>
__device__ inline T damped_update(T x, T omega, T r, T d) {
  return add_rn(x, div_rn(mul_rn(omega, r), d));
}

}  // namespace apiary::jacobi
