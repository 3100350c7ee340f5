// Tile per thread (seed 000 listing 4.2; seed 001 2.2.1 "work-items to threads"): no
// overhead, no balance. The right choice for very regular, short tiles.
#pragma once

#include <apiary/balance/layout.hpp>
#include <apiary/balance/params.hpp>
#include <apiary/balance/ranges.hpp>
#include <apiary/balance/run.hpp>

#include <cstddef>

namespace apiary::balance {

template <class Procs, class Layout>
class ThreadMapped {
 public:
  using I = typename Layout::index_type;
  static constexpr bool may_split = false;
  static std::size_t scratch_bytes(unsigned, const ScheduleParams<I>&) { return 0; }

  APIARY_HD ThreadMapped(Procs& procs, const Layout& layout, const ScheduleParams<I>&, void*)
      : procs_(procs), layout_(layout) {}

  // The tiles of this thread, for range-based loops: for (auto t : sched.tiles()) ...
  APIARY_NO_EXEC_CHECK
  APIARY_HD StepRange<I> tiles() const {
    return {static_cast<I>(procs_.global_rank()), layout_.num_tiles(), static_cast<I>(procs_.global_size())};
  }
  APIARY_HD StepRange<I> atoms(I tile) const { return {layout_.tile_begin(tile), layout_.tile_end(tile), I{1}}; }

  APIARY_NO_EXEC_CHECK
  template <class Sink>
  APIARY_HD void run(Sink& sink) {
    for (I t : tiles()) sink(Run<I>{t, layout_.tile_begin(t), layout_.tile_end(t), I{1}, Combine::store, 1u});
  }

 private:
  Procs& procs_;
  const Layout& layout_;
};

}  // namespace apiary::balance
