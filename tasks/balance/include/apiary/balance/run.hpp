// What a schedule hands to the code that consumes it: runs of atoms of one tile.
//
// A run is the atoms first, first + stride, ... < last of `tile`, processed by the calling
// thread. `combine` says how this thread's partial result for the tile combines with others:
//   store  - the run holds every atom of the tile and no other thread touches it: write.
//   group  - the tile is shared by the `group_size` consecutive team ranks starting at a
//            multiple of group_size (group_size <= 32 or == team size); they all receive a run
//            of this tile in the same call, in uniform control flow: reduce over the group,
//            then one of them writes.
//   atomic - other threads hold other atoms of the tile: combine atomically (the consumer
//            initialises the output first; schedules whose runs can be atomic say so through
//            `may_split`).
// `edges` (runs of emit_contiguous only; 0 elsewhere) tells an atomic run's consumer where it
// lies in its tile without reading the tile's bounds again: whether it begins at the tile's
// first atom and whether it reaches the tile's end; `tile_first` and `tile_last`
// (emit_contiguous only) are the tile's atoms [tile_first, tile_last), so a consumer may gather
// the rest of a tile itself.
#pragma once

#include <apiary/balance/config.hpp>

#include <cstdint>

namespace apiary::balance {

enum class Combine : std::uint8_t { store, group, atomic };

template <class I>
struct Run {
  I tile;
  I first;
  I last;
  I stride;
  Combine combine;
  unsigned group_size;  // for Combine::group
  std::uint8_t edges = 0;  // RunEdge bits, when known
  I tile_first = 0;        // the tile's first atom, when edges are known
  I tile_last = 0;         // one past the tile's last atom, when edges are known

  APIARY_HD bool edges_known() const { return (edges & known_edges) != 0; }
  APIARY_HD bool begins_tile() const { return (edges & begins_tile_edge) != 0; }
  APIARY_HD bool ends_tile() const { return (edges & ends_tile_edge) != 0; }

  static constexpr std::uint8_t known_edges = 1, begins_tile_edge = 2, ends_tile_edge = 4;
};

// Runs for the contiguous atom range [first, last) that starts in tile `tile`: emits one
// run per tile touched. `offsets_at(t)` returns the first atom of tile t (any callable, so
// offsets may sit in shared or global memory). A run is `store` when it spans its whole tile.
APIARY_NO_EXEC_CHECK
template <class I, class OffsetsAt, class Sink>
APIARY_HD void emit_contiguous(I tile, I first, I last, I num_tiles, OffsetsAt&& offsets_at, Sink& sink) {
  while (first < last && tile < num_tiles) {
    const I begin = offsets_at(tile), end = offsets_at(tile + 1);
    const I stop = end < last ? end : last;
    if (stop > first) {
      const bool begins = first == begin, ends = stop == end;
      const auto edges = static_cast<std::uint8_t>(Run<I>::known_edges | (begins ? Run<I>::begins_tile_edge : 0) |
                                                   (ends ? Run<I>::ends_tile_edge : 0));
      sink(Run<I>{tile, first, stop, I{1}, begins && ends ? Combine::store : Combine::atomic, 1u, edges, begin, end});
    }
    first = stop > first ? stop : first;
    ++tile;
  }
}

}  // namespace apiary::balance
