// How the multi-phase SpMV finishes rows that are split between threads, so that y needs no
// clearing before the kernel (no memset launch in front of it, no atomics on y).
//
// A block walks its chunk in windows; each thread holds K consecutive atoms of a window. A
// row is split when it is not wholly inside one thread's atoms. Three levels finish it:
//  - inside one warp: a segmented shuffle scan (SpmvSink::stage_out) sums the lanes' shares;
//    a row that begins and ends in the warp is stored there;
//  - inside one chunk: every warp leaves at most two shares in shared memory, the row that
//    began before the warp and ends in it (`closing`) and the row it leaves open (`open`).
//    Warp 0 walks them in order with a running carry (also across the chunk's windows) and
//    stores every row that begins and ends in the chunk;
//  - across chunks (a row longer than what is left of a chunk): each chunk the row touches
//    writes its share to the plan's `parts` and counts itself in the row's arrival counter,
//    one per chunk (the row that continues past a chunk's end is unique to that chunk). The
//    last share to arrive sums the shares and stores y, then resets the counter for the next
//    run. No block waits for another, so nothing depends on the order blocks are scheduled in.
#pragma once

#include "group_sum.cuh"
#include "spmv.hpp"

namespace apiary::spmv::detail {

template <class T>
struct SplitRowMerger {
  SplitRowCarry<T> carry;
  const index_t* __restrict__ row_offsets;
  T* __restrict__ y;
  index_t atoms;
  // Shared memory, per warp: two shares (closing, open) and whether the open row began in
  // that warp.
  index_t* slot_row;
  T* slot_value;
  bool* slot_open_began;
  // Warp 0 only: the row left open by everything merged so far in this chunk, its share, and
  // whether it began in this chunk (so the merge needs no row offsets from global memory).
  index_t carry_row = -1;
  T carry_value = 0;
  bool carry_began = false;

  // Called by lane 0 of each warp, after its scan.
  __device__ __forceinline__ void leave(unsigned warp, index_t closing_row, T closing, index_t open_row, T open,
                                        bool open_began) {
    slot_row[2 * warp] = closing_row;
    slot_value[2 * warp] = closing;
    slot_row[2 * warp + 1] = open_row;
    slot_value[2 * warp + 1] = open;
    slot_open_began[warp] = open_began;
  }

  // Warp 0, every lane, after a barrier that follows every warp's leave() for the window
  // [first, last).
  __device__ __forceinline__ void merge_window(index_t first, index_t last) {
    const std::int64_t chunk = first / carry.chunk_atoms;
    const unsigned warps = blockDim.x / 32;
    for (unsigned w = 0; w < warps; ++w) {
      const index_t closing_row = slot_row[2 * w];
      if (closing_row >= 0) {  // began before warp w: in this chunk only if carried here
        const bool carried = closing_row == carry_row;
        finish(closing_row, slot_value[2 * w] + (carried ? carry_value : T(0)), chunk, carried && carry_began, false);
        carry_row = -1;
        carry_value = 0;
      }
      const index_t open_row = slot_row[2 * w + 1];
      if (open_row >= 0) {
        if (open_row == carry_row) {  // warp w lies inside the carried row
          carry_value += slot_value[2 * w + 1];
        } else {
          carry_row = open_row;
          carry_value = slot_value[2 * w + 1];
          carry_began = slot_open_began[w];
        }
      }
    }
    const std::int64_t chunk_end = (chunk + 1) * carry.chunk_atoms;
    if (carry_row >= 0 && (last >= atoms || last >= chunk_end)) {
      finish(carry_row, carry_value, chunk, carry_began, true);
      carry_row = -1;
      carry_value = 0;
    }
  }

 private:
  // This chunk's whole share of `row`; `continues`: the row goes on past the chunk's end.
  __device__ __forceinline__ void finish(index_t row, T share, std::int64_t chunk, bool began_here, bool continues) {
    if (began_here && !continues) {
      if ((threadIdx.x & 31u) == 0) y[row] = share;
      return;
    }
    // Slot 2c: chunk c's share of its first row (began earlier); 2c + 1: of its last row.
    combine_across_chunks(row, share, 2 * chunk + (began_here ? 1 : 0));
  }

  __device__ __forceinline__ void combine_across_chunks(index_t row, T share, std::int64_t slot) {
    constexpr unsigned all = 0xffffffffu;
    const unsigned lane = threadIdx.x & 31u;
    const index_t begin = __ldg(row_offsets + row), end = __ldg(row_offsets + row + 1);
    const std::int64_t c0 = begin / carry.chunk_atoms, c1 = (static_cast<std::int64_t>(end) - 1) / carry.chunk_atoms;
    unsigned arrived = 0;
    if (lane == 0) {
      __stcg(carry.parts + slot, share);
      __threadfence();  // the share is visible before the count that announces it
      arrived = atomicAdd(carry.arrivals + c0, 1u);
    }
    arrived = __shfl_sync(all, arrived, 0);
    if (arrived != static_cast<unsigned>(c1 - c0)) return;  // not the last share
    __threadfence();  // every share the count announced is visible
    T sum = 0;
    for (std::int64_t c = c0 + 1 + lane; c <= c1; c += 32) sum += __ldcg(carry.parts + 2 * c);
    sum = group_sum(sum, 32);
    if (lane == 0) {
      y[row] = sum + __ldcg(carry.parts + 2 * c0 + 1);
      carry.arrivals[c0] = 0;  // ready for the next run of the plan
    }
  }
};

}  // namespace apiary::spmv::detail
