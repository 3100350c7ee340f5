// The layout contract: what a schedule needs to know about any sparse format. A layout has
// tiles (rows, columns, vertices...) made of atoms (non-zeros, edges...), and the atoms of
// tile t are the contiguous index range [tile_begin(t), tile_end(t)). Any format that can
// answer these four questions drives any schedule (seed 000, 4.2.1).
#pragma once

#include <apiary/balance/config.hpp>

#include <concepts>

namespace apiary::balance {

template <class L>
concept TileLayout = requires(const L& layout, typename L::index_type t) {
  typename L::index_type;
  { layout.num_tiles() } -> std::convertible_to<typename L::index_type>;
  { layout.num_atoms() } -> std::convertible_to<typename L::index_type>;
  { layout.tile_begin(t) } -> std::convertible_to<typename L::index_type>;
  { layout.tile_end(t) } -> std::convertible_to<typename L::index_type>;
};

// Offsets array (CSR row offsets, CSC column offsets, a graph's prefix-sum array): the
// layout of every compressed format. `offsets` has num_tiles + 1 entries.
template <class I>
struct OffsetsLayout {
  using index_type = I;
  const I* offsets = nullptr;
  I tiles = 0;

  APIARY_HD I num_tiles() const { return tiles; }
  APIARY_HD I num_atoms() const { return offsets[tiles]; }
  APIARY_HD I tile_begin(I t) const { return offsets[t]; }
  APIARY_HD I tile_end(I t) const { return offsets[t + 1]; }
  APIARY_HD I tile_size(I t) const { return offsets[t + 1] - offsets[t]; }
};

// COO sorted by row: tile boundaries found by binary search in the row index array, so a
// COO matrix drives any schedule without building offsets first (at log(nnz) per query).
template <class I>
struct SortedCooLayout {
  using index_type = I;
  const I* row_indices = nullptr;
  I tiles = 0;
  I atoms = 0;

  APIARY_HD I num_tiles() const { return tiles; }
  APIARY_HD I num_atoms() const { return atoms; }
  APIARY_HD I tile_begin(I t) const { return first_not_less(t); }
  APIARY_HD I tile_end(I t) const { return first_not_less(t + 1); }

 private:
  APIARY_HD I first_not_less(I row) const {
    I lo = 0, hi = atoms;
    while (lo < hi) {
      const I mid = lo + (hi - lo) / 2;
      if (row_indices[mid] < row) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
};

// Every tile has the same number of atoms (dense rows, fixed-degree graphs): no memory at all.
template <class I>
struct UniformLayout {
  using index_type = I;
  I tiles = 0;
  I atoms_per_tile = 0;

  APIARY_HD I num_tiles() const { return tiles; }
  APIARY_HD I num_atoms() const { return tiles * atoms_per_tile; }
  APIARY_HD I tile_begin(I t) const { return t * atoms_per_tile; }
  APIARY_HD I tile_end(I t) const { return (t + 1) * atoms_per_tile; }
};

static_assert(TileLayout<OffsetsLayout<int>>);
static_assert(TileLayout<SortedCooLayout<int>>);
static_assert(TileLayout<UniformLayout<int>>);

}  // namespace apiary::balance
