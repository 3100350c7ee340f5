// A data-dependent floor for SpMV on one matrix: the loads every CSR SpMV must make for its
// non-zeros (values and column indices, streamed once) and the gathers of x they cause, with
// no rows: no row offsets, no y, no split rows, a perfectly even share per thread. Its time
// bounds what row-aware schedules can reach on that matrix better than the copy bandwidth
// does, because the gathers of x (whole 32-byte sectors from L2 or DRAM for scattered
// columns) are not in the compulsory bytes the bandwidth figures count.
#pragma once

#include "reference.hpp"

#include <apiary/sparse/device_buffer.hpp>
#include <apiary/sparse/index.hpp>
#include <apiary/sparse/views.hpp>

#include <cuda_runtime_api.h>

#include <vector>

namespace apiary::spmv {

// Per-block partial sums of vals[k] * x[cols[k]] over all k, into `partials` (one per block;
// their total equals the sum of y = A x, which the caller checks).
template <class T>
void launch_gather_floor(sparse::CsrView<T> a, const T* x, T* partials, unsigned blocks, cudaStream_t stream);

// Blocks the floor kernel uses on a device with `sm_count` SMs (enough to keep every SM busy).
unsigned gather_floor_blocks(int sm_count);

// The floor as both benchmarks measure it: its blocks' partial sums in a buffer of its own,
// checked once against the reference before any timing, then relaunched unchanged.
template <class T>
class GatherFloor {
 public:
  GatherFloor(sparse::CsrView<T> a, const T* x, int sm_count);

  // Poisons the partials (NaN: a block that writes nothing fails), runs the kernel once on the
  // default stream and compares the partials' total with the sum of the reference y.
  CheckResult run_checked(const std::vector<double>& ref, const std::vector<double>& magnitude);

  // One launch on the default stream (what the caller times).
  void run();

 private:
  sparse::CsrView<T> a_;
  const T* x_;
  unsigned blocks_;
  sparse::DeviceBuffer<T> partials_;
};

}  // namespace apiary::spmv
