// The partition phase of the two-phase and multi-phase mappings: the atoms are cut into
// chunks of equal size and, for each chunk boundary, the tile holding it is found by a search
// over the whole offsets array. One search per chunk (not per atom); results go to a global
// array read by the expansion phase. Run it with one thread per chunk boundary.
#pragma once

#include <apiary/balance/layout.hpp>
#include <apiary/balance/search.hpp>

#include <cstdint>

namespace apiary::balance {

template <class Layout>
APIARY_HD typename Layout::index_type partition_chunks(const Layout& layout, std::int64_t chunk_atoms) {
  using I = typename Layout::index_type;
  return static_cast<I>((layout.num_atoms() + chunk_atoms - 1) / chunk_atoms);
}

// partition[c] for c in [0, chunks]: the tile holding atom c * chunk_atoms, and for c ==
// chunks the tile holding the last atom (so [partition[c], partition[c + 1]] bounds the tiles
// of chunk c).
APIARY_NO_EXEC_CHECK
template <class Layout>
APIARY_HD typename Layout::index_type partition_boundary(const Layout& layout, std::int64_t chunk_atoms, SearchKind kind,
                                                         typename Layout::index_type c) {
  using I = typename Layout::index_type;
  const I atoms = layout.num_atoms();
  if (atoms == 0) return 0;
  const std::int64_t first = static_cast<std::int64_t>(c) * chunk_atoms;
  const I atom = first < atoms ? static_cast<I>(first) : static_cast<I>(atoms - 1);
  auto offsets_at = [&layout](I t) { return layout.tile_begin(t); };
  return hybrid_tile_search(kind, offsets_at, I{0}, layout.num_tiles(), atom);
}

}  // namespace apiary::balance
