// Searches over a non-decreasing offsets sequence, used by every schedule that maps atoms
// back to tiles. All take an `offsets_at(t)` callable so the sequence may live in global
// memory, shared memory, or be computed (layouts).
#pragma once

#include <apiary/balance/config.hpp>

#include <cstdint>

namespace apiary::balance {

enum class SearchKind : std::uint8_t { binary, interpolation };

// The tile holding `atom`: the last t in [lo, hi) with offsets_at(t) <= atom. Requires
// offsets_at(lo) <= atom. Branch-free form with one load per step and a fixed step count
// (ceil(log2(hi - lo))): the "optimized binary search" of seed 001, 3.1.1, which keeps the
// threads of a warp in lockstep.
APIARY_NO_EXEC_CHECK
template <class I, class OffsetsAt>
APIARY_HD I binary_tile_search(OffsetsAt&& offsets_at, I lo, I hi, I atom) {
  I base = lo, n = hi - lo;
  while (n > 1) {
    const I half = n / 2;
    base = offsets_at(base + half) <= atom ? base + half : base;
    n -= half;
  }
  return base;
}

// Interpolation search (seed 001, 3.1.2) for the same question, with 64-bit integer
// arithmetic instead of floating point. Needs offsets_at(lo) <= atom < offsets_at(hi). After
// `max_steps` guesses (skewed data) it finishes with binary search, bounding the worst case.
APIARY_NO_EXEC_CHECK
template <class I, class OffsetsAt>
APIARY_HD I interpolation_tile_search(OffsetsAt&& offsets_at, I lo, I hi, I atom, int max_steps = 8) {
  for (int step = 0; step < max_steps && hi - lo > 1; ++step) {
    const I off_lo = offsets_at(lo), off_hi = offsets_at(hi);
    I guess = lo + static_cast<I>(static_cast<std::int64_t>(atom - off_lo) * (hi - lo) / (off_hi - off_lo));
    if (guess >= hi) guess = hi - 1;
    if (offsets_at(guess) <= atom) {
      if (offsets_at(guess + 1) > atom) return guess;
      lo = guess + 1;
    } else {
      hi = guess;
    }
  }
  return binary_tile_search(offsets_at, lo, hi, atom);
}

// The hybrid of seed 001 (3.1): interpolation for near-uniform tiles, binary otherwise.
APIARY_NO_EXEC_CHECK
template <class I, class OffsetsAt>
APIARY_HD I hybrid_tile_search(SearchKind kind, OffsetsAt&& offsets_at, I lo, I hi, I atom) {
  if (kind == SearchKind::interpolation && offsets_at(hi) > atom) return interpolation_tile_search(offsets_at, lo, hi, atom);
  return binary_tile_search(offsets_at, lo, hi, atom);
}

// Busato and Bombieri's switch (thresholds 8 and 9 from their experiments).
inline SearchKind choose_search(double mean_atoms_per_tile, double stddev_atoms_per_tile) {
  return stddev_atoms_per_tile <= 8.0 && mean_atoms_per_tile <= 9.0 ? SearchKind::interpolation : SearchKind::binary;
}

template <class I>
struct MergeCoordinate {
  I tile;  // tiles fully consumed before this point
  I atom;  // atoms consumed before this point
};

// Merge-path search (Merrill and Garland): the point where diagonal `diagonal` crosses the
// merge of the tile-end list A[t] = offsets_at(t + 1) and the atom list B[k] = k. Tiles and
// atoms count as one unit of work each. [tile_lo, tile_hi] narrows the search when the caller
// knows bounds (two-level search).
APIARY_NO_EXEC_CHECK
template <class I, class OffsetsAt>
APIARY_HD MergeCoordinate<I> merge_path_search(std::int64_t diagonal, OffsetsAt&& offsets_at, I num_tiles, I num_atoms,
                                               I tile_lo = 0, I tile_hi = -1) {
  std::int64_t lo = diagonal - num_atoms > 0 ? diagonal - num_atoms : 0;
  std::int64_t hi = diagonal < num_tiles ? diagonal : num_tiles;
  if (tile_lo > lo) lo = tile_lo;
  if (tile_hi >= 0 && tile_hi < hi) hi = tile_hi;
  while (lo < hi) {
    const std::int64_t pivot = lo + (hi - lo) / 2;
    if (static_cast<std::int64_t>(offsets_at(static_cast<I>(pivot + 1))) <= diagonal - pivot - 1) lo = pivot + 1;
    else hi = pivot;
  }
  return {static_cast<I>(lo), static_cast<I>(diagonal - lo)};
}

}  // namespace apiary::balance
