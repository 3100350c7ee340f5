// Direct search (seed 001, 2.4.1): one atom per thread (grid-stride), its tile found by a
// binary search over the whole offsets array. Perfect balance, log(tiles) scattered loads
// per atom.
#pragma once

#include <apiary/balance/layout.hpp>
#include <apiary/balance/params.hpp>
#include <apiary/balance/run.hpp>
#include <apiary/balance/search.hpp>

#include <cstddef>

namespace apiary::balance {

template <class Procs, class Layout>
class DirectSearch {
 public:
  using I = typename Layout::index_type;
  static constexpr bool may_split = true;
  static std::size_t scratch_bytes(unsigned, const ScheduleParams<I>&) { return 0; }

  APIARY_HD DirectSearch(Procs& procs, const Layout& layout, const ScheduleParams<I>&, void*)
      : procs_(procs), layout_(layout) {}

  APIARY_NO_EXEC_CHECK
  template <class Sink>
  APIARY_HD void run(Sink& sink) {
    const I atoms = layout_.num_atoms(), tiles = layout_.num_tiles();
    auto offsets_at = [this](I t) { return layout_.tile_begin(t); };
    for (std::int64_t a = procs_.global_rank(); a < atoms; a += procs_.global_size()) {
      const I atom = static_cast<I>(a);
      const I t = binary_tile_search(offsets_at, I{0}, tiles, atom);
      sink(Run<I>{t, atom, static_cast<I>(atom + 1), I{1}, Combine::atomic, 1u});
    }
  }

 private:
  Procs& procs_;
  const Layout& layout_;
};

}  // namespace apiary::balance
