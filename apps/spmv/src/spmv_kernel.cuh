// The SpMV kernel: one template for every schedule. The schedule decides which atoms
// (non-zeros) each thread gets as runs; the sink below turns runs into y = A x.
#pragma once

#include "group_sum.cuh"
#include "spmv.hpp"

#include <apiary/balance/device_team.cuh>
#include <apiary/balance/layout.hpp>
#include <apiary/balance/schedules.hpp>
#include <apiary/cuda_check.hpp>

namespace apiary::spmv {

namespace detail {

// Named barriers 1..15 (0 is __syncthreads): a pair of neighbouring warps meets on one, so
// blocks of up to 16 warps can pair every neighbour.
constexpr unsigned max_paired_warps = 16;
template <class T>
constexpr bool hand_over_edge_rows = sizeof(T) == 8;
__device__ __forceinline__ void named_barrier_arrive(unsigned id) {
  asm volatile("bar.arrive %0, 64;" ::"r"(id) : "memory");
}
__device__ __forceinline__ void named_barrier_sync(unsigned id) { asm volatile("bar.sync %0, 64;" ::"r"(id) : "memory"); }

template <class T>
struct alignas(16) Vec4;
template <>
struct alignas(16) Vec4<float> {
  float v[4];
};
template <>
struct alignas(16) Vec4<double> {
  double v[4];
};

// Turns runs into y. Atomic runs of the same row are accumulated in a register and written
// with one atomicAdd when the row changes (strided schedules hit the same row repeatedly).
// With staging (multi-phase), the window's products a_k * x[col_k] are computed in coalesced,
// vectorised order into shared memory and the runs add up shared values. The split rows of a
// window (a thread's K consecutive atoms start or end inside a row) are not written one
// atomicAdd per thread: each thread keeps at most two partials (the row it closes, the row it
// leaves open), and stage_out combines them over the warp with a segmented shuffle scan. A
// split row that starts and ends inside one warp's atoms is stored. A row that begins in warp
// w and ends in warp w + 1 of the same window is handed from w to w + 1 through shared memory
// (a named barrier per pair of neighbouring warps, so no warp waits for the whole block) and
// stored there too. Only rows that span more than two warps, or cross a window's edge, are
// added atomically: about one atomic per window instead of up to two per warp. This is for
// fp64 only, whose atomics on y cost the H200 far more than fp32 ones (docs/spmv.md); fp32
// keeps the atomics at every warp edge.
// With SplitRowStores (LaunchConfig::split_row_stores: every row non-empty and at most
// split_row_store_limit long) no split row is combined at all: every row is stored exactly
// once, by one thread that adds up all of its products itself, so y needs no clear before the
// kernel and takes no atomics. A row inside a chunk is stored by the thread holding its last
// atom; its earlier products lie in the window's staged values, and for the one row crossing
// the window's start, in a carry that the previous window's last thread left (stage_out). A row
// crossing a chunk's end belongs to that chunk: its last window stages split_row_store_limit - 1
// products past the chunk's end as well, the thread holding the chunk's last atom stores the
// row, and the next chunk skips it. Staging needs no row bounds, so multi-phase stages a chunk's
// first window while it loads the chunk's offsets (stages_without_offsets). (A template
// parameter, not a flag: as a run-time flag both ways in one kernel took 48 / 64 registers
// instead of 32 / 30, fp32 / fp64.)
template <class T, bool SplitRowStores = false>
struct SpmvSink {
  const index_t* __restrict__ cols;
  const T* __restrict__ vals;
  const T* __restrict__ x;
  T* __restrict__ y;
  T* stage = nullptr;  // shared memory window (multi-phase only)
  index_t window_first = 0;
  bool staged = false;
  index_t pending_row = -1;
  T pending = 0;
  // Staged mode, per window: the split row this thread closes (began in an earlier thread) and
  // the split row it leaves open (continues in the next thread); opens_right: that row begins
  // in this thread's atoms. A thread inside one row holds it as both (close_value stays 0).
  index_t close_row = -1, open_row = -1;
  T close_value = 0, open_value = 0;
  bool opens_right = false;

  // SplitRowStores: the row this thread leaves open at its last atom (its atoms [open_first,
  // open_end), this thread's share ending at open_last), the chunk's atoms, all atoms.
  index_t open_first = 0, open_last = 0, open_end = 0;
  index_t chunk_first = 0, chunk_last = 0, atoms = 0;
  static constexpr bool stages_without_offsets = SplitRowStores;

  __device__ __forceinline__ T product(index_t k) const { return __ldg(vals + k) * __ldg(x + __ldg(cols + k)); }

  // SplitRowStores: the share of the row crossing the current window's start that lies before it.
  __device__ __forceinline__ static T& split_row_carry() {
    __shared__ T carry;
    return carry;
  }
  // SplitRowStores: the staged products of atoms [max(row_first, window_first), end) of a row.
  __device__ __forceinline__ T staged_share(index_t row_first, index_t end) const {
    T share = 0;
#pragma unroll 1
    for (index_t k = row_first > window_first ? row_first : window_first; k < end; ++k) share += stage[k - window_first];
    return share;
  }
  // SplitRowStores: the atoms [row_first, first) of a row this thread closes.
  __device__ __forceinline__ T split_row_head(index_t row_first, index_t first) const {
    return (row_first < window_first ? split_row_carry() : T(0)) + staged_share(row_first, first);
  }

  __device__ __forceinline__ void operator()(const balance::Run<index_t>& r) {
    T sum = 0;
    if (staged) {
      for (index_t k = r.first; k < r.last; k += r.stride) sum += stage[k - window_first];
    } else if (r.stride == 1) {
      index_t k = r.first;
      // Independent partial sums: more loads in flight per thread.
      T s1 = 0;
      for (; k + 1 < r.last; k += 2) {
        sum += product(k);
        s1 += product(k + 1);
      }
      if (k < r.last) sum += product(k);
      sum += s1;
    } else {
      for (index_t k = r.first; k < r.last; k += r.stride) sum += product(k);
    }
    switch (r.combine) {
      case balance::Combine::store: y[r.tile] = sum; break;
      case balance::Combine::group:
        if (r.group_size <= 32) {
          sum = group_sum(sum, r.group_size);
          if ((threadIdx.x & (r.group_size - 1)) == 0) y[r.tile] = sum;
        } else {
          sum = block_sum(sum);
          if (threadIdx.x == 0) y[r.tile] = sum;
        }
        break;
      case balance::Combine::atomic:
        if (staged) {
          // Staged runs come from emit_contiguous, which says where they lie in their row.
          const bool ends = r.ends_tile(), begins = r.begins_tile();
          if constexpr (SplitRowStores) {
            if (ends) {  // the row's last atom is this thread's: it stores the row
              if (r.tile_first >= chunk_first) y[r.tile] = split_row_head(r.tile_first, r.first) + sum;
            } else {  // the row goes on after this thread (the last run of its atoms)
              open_row = r.tile;
              open_first = r.tile_first;
              open_last = r.last;
              open_end = r.tile_last;
            }
            break;
          }
          if (!ends) {  // continues after this thread: the last run of its atoms
            open_row = r.tile;
            open_value = sum;
            opens_right = begins;
            if (!begins) close_row = r.tile;  // passes through: no value of its own
          } else {  // began before this thread, ends here: the first run of its atoms
            close_row = r.tile;
            close_value = sum;
          }
          break;
        }
        if (r.tile != pending_row) {
          flush();
          pending_row = r.tile;
        }
        pending += sum;
        break;
    }
  }

  __device__ __forceinline__ void flush() {
    if (pending_row >= 0) atomicAdd(y + pending_row, pending);
    pending_row = -1;
    pending = 0;
  }

  template <class TeamT>
  __device__ __forceinline__ void stage_in(TeamT& team, index_t first, index_t last) {
    const unsigned rank = team.rank(), size = team.size();
    // SplitRowStores: a chunk's last window stages the products of a row going on past it too.
    if constexpr (SplitRowStores)
      if (last == chunk_last && last < atoms) last = balance::min_of<index_t>(atoms, last + index_t(split_row_store_limit - 1));
    const index_t n = last - first;
    index_t done = 0;
    // Windows start at multiples of block * K (a multiple of 4), so 16-byte vector loads of
    // the column indices are aligned; values likewise for float (and 2 x 16 B for double).
    if ((first & 3) == 0) {
      const index_t quads = n / 4;
      const int4* c4 = reinterpret_cast<const int4*>(cols + first);
      const Vec4<T>* v4 = reinterpret_cast<const Vec4<T>*>(vals + first);
      for (index_t q = rank; q < quads; q += size) {
        const int4 c = __ldg(c4 + q);
        Vec4<T> v;
        if constexpr (sizeof(T) == 4) {
          const float4 f = __ldg(reinterpret_cast<const float4*>(v4 + q));
          v.v[0] = f.x, v.v[1] = f.y, v.v[2] = f.z, v.v[3] = f.w;
        } else {
          const double2 a = __ldg(reinterpret_cast<const double2*>(v4 + q));
          const double2 b = __ldg(reinterpret_cast<const double2*>(v4 + q) + 1);
          v.v[0] = a.x, v.v[1] = a.y, v.v[2] = b.x, v.v[3] = b.y;
        }
        T* s = stage + 4 * q;
        s[0] = v.v[0] * __ldg(x + c.x);
        s[1] = v.v[1] * __ldg(x + c.y);
        s[2] = v.v[2] * __ldg(x + c.z);
        s[3] = v.v[3] * __ldg(x + c.w);
      }
      done = quads * 4;
    }
    for (index_t k = done + rank; k < n; k += size) stage[k] = product(first + k);
    window_first = first;
    staged = true;
  }
  // SplitRowStores: the chunk of consecutive windows about to be staged holds atoms [first, last).
  template <class TeamT>
    requires SplitRowStores
  __device__ __forceinline__ void stage_chunk(TeamT&, index_t first, index_t last) {
    chunk_first = first;
    chunk_last = last;
  }

  // Called by every thread of the team (uniform control flow): whole warps take part.
  template <class TeamT>
  __device__ __forceinline__ void stage_out(TeamT&, index_t, index_t last) {
    if constexpr (SplitRowStores) {  // every row that ended in the window was stored
      // The thread holding the window's last atom stores a row that goes on past the chunk
      // (its products are staged), or carries the share of one that goes on into the next
      // window (the window's runs are done: nobody reads the carry now).
      if (open_row >= 0 && open_last == last) {
        const bool chunk_ends = last == chunk_last;
        const T share = split_row_head(open_first, chunk_ends ? open_end : last);
        if (chunk_ends) y[open_row] = share;
        else split_row_carry() = share;
      }
      open_row = -1;
      staged = false;
      return;
    }
    constexpr unsigned all = 0xffffffffu;
    const unsigned lane = threadIdx.x & 31u;
    // Inclusive segmented scan of the open partials over the lanes, keyed by row. Rows are
    // non-decreasing over the lanes and a row open in lanes j and i is open in every lane
    // between, so equal keys at distance d mean one segment.
    T sum = open_value;
    int head = opens_right ? 1 : 0;
    for (unsigned d = 1; d < 32; d *= 2) {
      const T s_up = __shfl_up_sync(all, sum, d);
      const int h_up = __shfl_up_sync(all, head, d);
      const index_t k_up = __shfl_up_sync(all, open_row, d);
      if (lane >= d && open_row >= 0 && k_up == open_row) {
        sum += s_up;
        head |= h_up;
      }
    }
    const T prev_sum = __shfl_up_sync(all, sum, 1);
    const int prev_head = __shfl_up_sync(all, head, 1);
    const index_t prev_open = __shfl_up_sync(all, open_row, 1);
    const index_t next_close = __shfl_down_sync(all, close_row, 1);
    // Hand-over between neighbouring warps (fp64 only: measured, it halves multi-phase on large
    // fp64 matrices but slows fp32 by up to 1.5x where fp32 atomics were nearly free): warp w
    // publishes the row it leaves open if the row began in it, then receives what warp w - 1
    // published. Barrier w + 1 pairs warps w and w + 1.
    __shared__ index_t edge_row[max_paired_warps];  // the row warp w hands to w + 1 (-1: none)
    __shared__ T edge_value[max_paired_warps];       // and its share
    const unsigned warp = threadIdx.x / 32, warps = blockDim.x / 32;
    const bool pairs = hand_over_edge_rows<T> && warps <= max_paired_warps;
    const bool hands_over = pairs && warp + 1 < warps && lane == 31 && open_row >= 0 && head;
    if (pairs && warp + 1 < warps) {
      if (lane == 31) {
        edge_row[warp] = hands_over ? open_row : index_t(-1);
        edge_value[warp] = sum;
      }
      named_barrier_arrive(warp + 1);
    }
    index_t received_row = -1;
    T received = 0;
    if (pairs && warp > 0) {
      named_barrier_sync(warp);
      received_row = edge_row[warp - 1];
      received = edge_value[warp - 1];
    }
    if (close_row >= 0 && close_row != open_row) {  // this lane ends a split row
      const bool carried = lane > 0 && prev_open == close_row;
      const T total = close_value + (carried ? prev_sum : T(0));
      if (carried && prev_head) y[close_row] = total;                       // the whole row lies in this warp
      else if (close_row == received_row) y[close_row] = total + received;  // began in the previous warp
      else atomicAdd(y + close_row, total);
    }
    // An open row the next lane does not take over leaves the warp (or the window). A row
    // received from warp w - 1 that passes through this whole warp is added here with it.
    if (open_row >= 0 && (lane == 31 || next_close != open_row) && !hands_over)
      atomicAdd(y + open_row, sum + (open_row == received_row && close_row == open_row ? received : T(0)));
    close_row = open_row = -1;
    close_value = open_value = 0;
    opens_right = false;
    staged = false;
  }
};

}  // namespace detail

// Multi-phase: the shared-memory window, with room for a chunk's last row past its end
// (SplitRowStores: at most split_row_store_limit - 1 products).
template <class T>
__host__ __device__ std::size_t staging_bytes(unsigned block, const balance::ScheduleParams<index_t>& params) {
  const std::size_t slots = static_cast<std::size_t>(block) * params.items_per_thread + split_row_store_limit;
  return (slots * sizeof(T) + 15) / 16 * 16;
}

// The stored-split-rows kernel takes 48 registers (fp32 and fp64; 5 resident blocks per SM
// instead of 8): its first window's loads are in flight with the chunk's offsets. Held to 8
// blocks per SM it spills (48 / 72 bytes of stack), to 6 as well (24 / 40).
template <ScheduleKind K, class T, bool SplitRowStores = false>
__global__ void __launch_bounds__(256) spmv_kernel(sparse::CsrView<T> a, const T* __restrict__ x, T* __restrict__ y,
                                                   balance::ScheduleParams<index_t> params) {
  extern __shared__ __align__(16) unsigned char shared[];
  auto procs = balance::grid_processors();
  const balance::OffsetsLayout<index_t> layout{a.row_offsets, a.rows};
  using Sched = balance::schedule_t<K, balance::Processors<balance::BlockTeam>, balance::OffsetsLayout<index_t>>;
  // Staging buffer first (16-byte aligned), the schedule's scratch after it.
  std::size_t stage_bytes = 0;
  if constexpr (K == ScheduleKind::multi_phase) stage_bytes = staging_bytes<T>(blockDim.x, params);
  Sched sched(procs, layout, params, shared + stage_bytes);
  detail::SpmvSink<T, SplitRowStores> sink{a.col_indices, a.values, x, y};
  sink.atoms = a.nnz;
  if constexpr (K == ScheduleKind::multi_phase) {
    sink.stage = reinterpret_cast<T*>(shared);
    sched.run(sink);
  } else {
    // Plain sinks: no staging hooks, so the schedule reads global memory directly.
    struct Plain {
      detail::SpmvSink<T, SplitRowStores>* s;
      __device__ __forceinline__ void operator()(const balance::Run<index_t>& r) { (*s)(r); }
    } plain{&sink};
    sched.run(plain);
  }
  sink.flush();
}

template <ScheduleKind K, class T>
std::size_t shared_bytes_of(unsigned block, const balance::ScheduleParams<index_t>& params) {
  using Sched = balance::schedule_t<K, balance::Processors<balance::BlockTeam>, balance::OffsetsLayout<index_t>>;
  std::size_t stage = 0;
  if constexpr (K == ScheduleKind::multi_phase) stage = staging_bytes<T>(block, params);
  return stage + Sched::scratch_bytes(block, params);
}

template <ScheduleKind K, class T, bool SplitRowStores>
void launch_kernel(const LaunchConfig& config, sparse::CsrView<T> a, const T* x, T* y, cudaStream_t stream) {
  if (config.shared_bytes > 48 * 1024) {
    static bool raised = false;  // once per instantiation
    if (!raised) {
      APIARY_CUDA_CHECK(cudaFuncSetAttribute(spmv_kernel<K, T, SplitRowStores>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             static_cast<int>(config.shared_bytes)));
      raised = true;
    }
  }
  spmv_kernel<K, T, SplitRowStores><<<config.grid, config.block, config.shared_bytes, stream>>>(a, x, y, config.params);
  APIARY_CUDA_CHECK(cudaGetLastError());
}

template <ScheduleKind K, class T>
void launch_kind(const LaunchConfig& config, sparse::CsrView<T> a, const T* x, T* y, cudaStream_t stream) {
  if constexpr (K == ScheduleKind::multi_phase) {
    if (config.split_row_stores) return launch_kernel<K, T, true>(config, a, x, y, stream);
  }
  launch_kernel<K, T, false>(config, a, x, y, stream);
}

#define APIARY_SPMV_INSTANTIATE(K)                                                                                  \
  template void launch_kind<ScheduleKind::K, float>(const LaunchConfig&, sparse::CsrView<float>, const float*, float*, \
                                                    cudaStream_t);                                                  \
  template void launch_kind<ScheduleKind::K, double>(const LaunchConfig&, sparse::CsrView<double>, const double*,    \
                                                     double*, cudaStream_t);                                        \
  template std::size_t shared_bytes_of<ScheduleKind::K, float>(unsigned, const balance::ScheduleParams<index_t>&);   \
  template std::size_t shared_bytes_of<ScheduleKind::K, double>(unsigned, const balance::ScheduleParams<index_t>&);

#define APIARY_SPMV_EXTERN(K)                                                                                    \
  extern template void launch_kind<ScheduleKind::K, float>(const LaunchConfig&, sparse::CsrView<float>, const float*,   \
                                                           float*, cudaStream_t);                                       \
  extern template void launch_kind<ScheduleKind::K, double>(const LaunchConfig&, sparse::CsrView<double>, const double*, \
                                                            double*, cudaStream_t);                                     \
  extern template std::size_t shared_bytes_of<ScheduleKind::K, float>(unsigned, const balance::ScheduleParams<index_t>&); \
  extern template std::size_t shared_bytes_of<ScheduleKind::K, double>(unsigned, const balance::ScheduleParams<index_t>&);

}  // namespace apiary::spmv
