// Multi-phase mapping (Busato and Bombieri, seed 001 section 3).
//  1. Hybrid partitioning: the atoms are cut into chunks of team_size * K * IS; the tile of
//     each chunk boundary is found with interpolation search for near-uniform tiles and the
//     optimized binary search otherwise (partition.hpp, choose_search()).
//  2. Iterative coalesced expansion: a team loads its chunk's offsets into shared memory once,
//     then walks the chunk in IS windows of team_size * K atoms. For each window the sink may
//     stage the window through shared memory in coalesced order (stage.hpp); each thread then
//     takes K consecutive atoms of the window, finds its first tile with the optimized binary
//     search in shared memory and emits its runs; then the sink may flush the window coalesced.
//     A sink may also learn each chunk's atoms (stage_chunk, stage.hpp) and, if its staging
//     needs no offsets, have a chunk's first window staged while the offsets load.
// The iteration factor IS amortises the partition search and the offsets load over IS windows.
#pragma once

#include <apiary/balance/layout.hpp>
#include <apiary/balance/params.hpp>
#include <apiary/balance/partition.hpp>
#include <apiary/balance/run.hpp>
#include <apiary/balance/search.hpp>
#include <apiary/balance/stage.hpp>

#include <cstddef>

namespace apiary::balance {

template <class Procs, class Layout>
class MultiPhase {
 public:
  using I = typename Layout::index_type;
  static constexpr bool may_split = true;
  static std::int64_t window_atoms(unsigned team_size, const ScheduleParams<I>& params) {
    return static_cast<std::int64_t>(team_size) * params.items_per_thread;
  }
  static std::int64_t chunk_atoms(unsigned team_size, const ScheduleParams<I>& params) {
    return window_atoms(team_size, params) * (params.iterations ? params.iterations : 1);
  }
  static std::size_t offsets_capacity(unsigned team_size, const ScheduleParams<I>& params) {
    return static_cast<std::size_t>(chunk_atoms(team_size, params)) + 2;
  }
  static std::size_t scratch_bytes(unsigned team_size, const ScheduleParams<I>& params) {
    return sizeof(I) * offsets_capacity(team_size, params);
  }

  APIARY_NO_EXEC_CHECK
  APIARY_HD MultiPhase(Procs& procs, const Layout& layout, const ScheduleParams<I>& params, void* scratch)
      : procs_(procs), layout_(layout), params_(params), offsets_(static_cast<I*>(scratch)) {
    if (params_.iterations == 0) params_.iterations = 1;
  }

  APIARY_NO_EXEC_CHECK
  template <class Sink>
  APIARY_HD void run(Sink& sink) {
    auto& team = procs_.team;
    const unsigned size = team.size(), rank = team.rank();
    const I K = static_cast<I>(params_.items_per_thread);
    const std::int64_t window = static_cast<std::int64_t>(size) * K;
    const std::int64_t chunk = window * params_.iterations;
    const I atoms = layout_.num_atoms(), tiles = layout_.num_tiles();
    const I chunks = partition_chunks(layout_, chunk);
    const I capacity = static_cast<I>(chunk + 2);
    for (I c = static_cast<I>(procs_.team_index); c < chunks; c += static_cast<I>(procs_.team_count)) {
      const std::int64_t c0 = static_cast<std::int64_t>(c) * chunk;
      const I t0 = params_.partition[c], t1 = params_.partition[c + 1];
      const I count = t1 - t0 + 1;
      const bool cached = count + 1 <= capacity;
      constexpr bool staging = StagingSink<Sink, decltype(team), I>;
      if constexpr (ChunkStagingSink<Sink, decltype(team), I>)
        sink.stage_chunk(team, static_cast<I>(c0), static_cast<I>(min_of<std::int64_t>(atoms, c0 + chunk)));
      // A sink that stages without the offsets gets its first window's loads in flight with the
      // partition's and the offsets' (one round trip fewer before the first runs).
      constexpr bool early = staging && StagesWithoutOffsets<Sink>;
      if constexpr (early)
        stage_in(sink, team, static_cast<I>(c0), static_cast<I>(min_of<std::int64_t>(atoms, c0 + window)));
      if (cached) load_offsets(t0, count, rank, size);
      team.sync();
      I hint = 0;  // windows advance monotonically: each search starts where the last ended
      for (unsigned it = 0; it < params_.iterations; ++it) {
        const std::int64_t w0 = c0 + static_cast<std::int64_t>(it) * window;
        if (w0 >= atoms) break;  // uniform over the team
        const I first = static_cast<I>(w0);
        const I last = min_of<I>(atoms, static_cast<I>(w0 + window));
        if constexpr (staging) {
          if (!early || it != 0) {
            stage_in(sink, team, first, last);
            team.sync();
          }
        }
        const I lo = first + static_cast<I>(rank) * K;
        const I hi = min_of<I>(last, lo + K);
        if (lo < hi) {
          if (cached) {
            auto local = [this](I k) { return offsets_[k]; };
            const I k = binary_tile_search(local, hint, count, lo);
            hint = k;
            auto shifted = [&](I t) { return offsets_[t - t0]; };
            emit_contiguous(t0 + k, lo, hi, t0 + count, shifted, sink);
          } else {
            auto global = [this](I t) { return layout_.tile_begin(t); };
            const I t = binary_tile_search(global, t0, min_of<I>(tiles, t1 + 1), lo);
            emit_contiguous(t, lo, hi, tiles, global, sink);
          }
        }
        if constexpr (staging) {
          team.sync();
          stage_out(sink, team, first, last);
          team.sync();  // the next window's stage_in reuses the sink's buffer
        }
      }
      team.sync();
    }
  }

 private:
  // offsets_[k] = tile_begin(t0 + k) for k in [0, count]: each thread issues a batch of loads
  // before it stores any, so a chunk's offsets cost one round trip, not one per entry.
  APIARY_HD void load_offsets(I t0, I count, unsigned rank, unsigned size) {
    constexpr int batch = 4;
    for (I base = static_cast<I>(rank); base <= count; base += static_cast<I>(batch * size)) {
      I v[batch] = {};
#pragma unroll
      for (int j = 0; j < batch; ++j) {
        const I k = base + static_cast<I>(j * size);
        if (k <= count) v[j] = layout_.tile_begin(t0 + k);
      }
#pragma unroll
      for (int j = 0; j < batch; ++j) {
        const I k = base + static_cast<I>(j * size);
        if (k <= count) offsets_[k] = v[j];
      }
    }
  }

  Procs& procs_;
  const Layout& layout_;
  ScheduleParams<I> params_;
  I* offsets_;
};

}  // namespace apiary::balance
