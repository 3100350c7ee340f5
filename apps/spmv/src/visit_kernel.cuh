#pragma once

#include "visit.hpp"

#include <apiary/balance/device_team.cuh>
#include <apiary/balance/layout.hpp>
#include <apiary/balance/schedules.hpp>
#include <apiary/cuda_check.hpp>

namespace apiary::spmv {

namespace detail {

// Writes each unit's work-item id. With staging (multi-phase) the ids go to shared memory
// first and leave in one coalesced pass per window: the "coalesced expansion".
struct VisitSink {
  index_t* __restrict__ out;
  unsigned* __restrict__ visits;
  index_t* stage = nullptr;
  index_t window_first = 0;
  bool staged = false;

  __device__ __forceinline__ void operator()(const balance::Run<index_t>& r) {
    for (index_t k = r.first; k < r.last; k += r.stride) {
      if (staged) stage[k - window_first] = r.tile;
      else out[k] = r.tile;
      if (visits) atomicAdd(visits + k, 1u);
    }
  }
  template <class TeamT>
  __device__ __forceinline__ void stage_in(TeamT&, index_t first, index_t) {
    window_first = first;
    staged = true;
  }
  template <class TeamT>
  __device__ __forceinline__ void stage_out(TeamT& team, index_t first, index_t last) {
    for (index_t k = static_cast<index_t>(team.rank()); k < last - first; k += static_cast<index_t>(team.size()))
      out[first + k] = stage[k];
    staged = false;
  }
};

}  // namespace detail

template <ScheduleKind K>
__global__ void __launch_bounds__(256) visit_kernel(const index_t* __restrict__ offsets, index_t rows, index_t* out,
                                                    unsigned* visits, balance::ScheduleParams<index_t> params) {
  extern __shared__ __align__(16) unsigned char shared[];
  auto procs = balance::grid_processors();
  const balance::OffsetsLayout<index_t> layout{offsets, rows};
  using Sched = balance::schedule_t<K, balance::Processors<balance::BlockTeam>, balance::OffsetsLayout<index_t>>;
  // Same shared layout as the SpMV kernel with 4-byte values: staging window, then scratch.
  std::size_t stage_bytes = 0;
  if constexpr (K == ScheduleKind::multi_phase)
    stage_bytes = (static_cast<std::size_t>(blockDim.x) * params.items_per_thread * sizeof(index_t) + 15) / 16 * 16;
  Sched sched(procs, layout, params, shared + stage_bytes);
  detail::VisitSink sink{out, visits};
  if constexpr (K == ScheduleKind::multi_phase) {
    sink.stage = reinterpret_cast<index_t*>(shared);
    sched.run(sink);
  } else {
    struct Plain {
      detail::VisitSink* s;
      __device__ __forceinline__ void operator()(const balance::Run<index_t>& r) { (*s)(r); }
    } plain{&sink};
    sched.run(plain);
  }
}

template <ScheduleKind K>
void launch_visit_kind(const LaunchConfig& config, const index_t* offsets, index_t rows, index_t* out, unsigned* visits,
                       cudaStream_t stream) {
  if (config.shared_bytes > 48 * 1024) {
    static bool raised = false;
    if (!raised) {
      APIARY_CUDA_CHECK(cudaFuncSetAttribute(visit_kernel<K>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             static_cast<int>(config.shared_bytes)));
      raised = true;
    }
  }
  visit_kernel<K><<<config.grid, config.block, config.shared_bytes, stream>>>(offsets, rows, out, visits, config.params);
  APIARY_CUDA_CHECK(cudaGetLastError());
}

}  // namespace apiary::spmv
