// Host-owned tables behind a TreeView, built from a validated Spec. The device side copies the
// vectors to GPU memory and points a TreeView at the copies; the host model uses view().
#pragma once

#include <apiary/synthetic/spec.hpp>
#include <apiary/synthetic/tree_view.hpp>

#include <cstdint>
#include <vector>

namespace apiary::synthetic {

struct TreeTables {
  std::vector<TypeView> types;              // indexed by type
  std::vector<TransitionView> transitions;  // spawn edges only, grouped by source type
  std::vector<JoinView> joins;              // indexed by join (topological order of join types)
  std::vector<std::uint32_t> owned_joins;   // join indices, grouped by owner type
  std::uint64_t seed = 0;

  // Pointers into the vectors: valid while this object lives and is not modified.
  TreeView view() const;
};

TreeTables build_tree_tables(const Spec& spec);

// probability * 2^32 rounded to the nearest integer (exact for every probability that is a
// multiple of 2^-32); 1.0 gives `always`, 0.0 never fires.
std::uint64_t probability_threshold(double probability);

}  // namespace apiary::synthetic
