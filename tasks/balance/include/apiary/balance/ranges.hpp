// Ranges for range-based for loops in device code (seed 000, 4.4.1): a step range, an
// infinite range (persistent kernels) and grid/block/warp stride ranges.
#pragma once

#include <apiary/balance/config.hpp>

namespace apiary::balance {

// [begin, end) in steps of `step` (step > 0).
template <class I>
class StepRange {
 public:
  struct Iterator {
    I value, step;
    APIARY_HD I operator*() const { return value; }
    APIARY_HD Iterator& operator++() {
      value += step;
      return *this;
    }
    // A step may jump past the end, so "not equal" means "still below the end".
    APIARY_HD bool operator!=(const Iterator& end) const { return value < end.value; }
  };
  APIARY_HD StepRange(I begin, I end, I step = 1) : begin_(begin), end_(end), step_(step) {}
  APIARY_HD Iterator begin() const { return {begin_, step_}; }
  APIARY_HD Iterator end() const { return {end_, step_}; }
  APIARY_HD I size() const { return begin_ < end_ ? (end_ - begin_ + step_ - 1) / step_ : 0; }

 private:
  I begin_, end_, step_;
};

// begin, begin + step, ... forever: the loop body decides when to stop.
template <class I>
class InfiniteRange {
 public:
  struct Sentinel {};
  struct Iterator {
    I value, step;
    APIARY_HD I operator*() const { return value; }
    APIARY_HD Iterator& operator++() {
      value += step;
      return *this;
    }
    APIARY_HD bool operator!=(Sentinel) const { return true; }
  };
  APIARY_HD explicit InfiniteRange(I begin, I step = 1) : begin_(begin), step_(step) {}
  APIARY_HD Iterator begin() const { return {begin_, step_}; }
  APIARY_HD Sentinel end() const { return {}; }

 private:
  I begin_, step_;
};

template <class I>
APIARY_HD StepRange<I> step_range(I begin, I end, I step = 1) {
  return {begin, end, step};
}
template <class I>
APIARY_HD InfiniteRange<I> infinite_range(I begin, I step = 1) {
  return InfiniteRange<I>(begin, step);
}

// Stride ranges over the processors at hand: a thread of rank r among p visits r, r+p, ...
template <class I>
APIARY_HD StepRange<I> stride_range(I begin, I end, I rank, I processors) {
  return {begin + rank, end, processors};
}

#if defined(__CUDACC__)
// The classic CUDA stride loops.
template <class I>
__device__ StepRange<I> grid_stride_range(I begin, I end) {
  return {begin + static_cast<I>(blockIdx.x * blockDim.x + threadIdx.x), end, static_cast<I>(gridDim.x * blockDim.x)};
}
template <class I>
__device__ StepRange<I> block_stride_range(I begin, I end) {
  return {begin + static_cast<I>(threadIdx.x), end, static_cast<I>(blockDim.x)};
}
template <class I>
__device__ StepRange<I> warp_stride_range(I begin, I end) {
  return {begin + static_cast<I>(threadIdx.x % 32), end, I{32}};
}
#endif

}  // namespace apiary::balance
