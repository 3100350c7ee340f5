// The index math every schedule is built on, against std:: algorithms.
#include <apiary/balance/ranges.hpp>
#include <apiary/balance/search.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <vector>

using namespace apiary::balance;

namespace {
std::vector<int> random_offsets(std::mt19937& rng, int tiles, int max_len, double empty_share) {
  std::vector<int> off(tiles + 1, 0);
  std::uniform_int_distribution<int> len(0, max_len);
  std::bernoulli_distribution empty(empty_share);
  for (int t = 0; t < tiles; ++t) off[t + 1] = off[t] + (empty(rng) ? 0 : len(rng));
  return off;
}
int reference_tile(const std::vector<int>& off, int atom) {
  return static_cast<int>(std::upper_bound(off.begin(), off.end() - 1, atom) - off.begin()) - 1;
}
}  // namespace

TEST_CASE("binary and interpolation tile search find the tile holding each atom", "[balance][search]") {
  std::mt19937 rng(42);
  for (int round = 0; round < 200; ++round) {
    const int tiles = 1 + static_cast<int>(rng() % 300);
    const auto off = random_offsets(rng, tiles, 1 + static_cast<int>(rng() % 40), (rng() % 3) * 0.3);
    auto at = [&](int t) { return off[t]; };
    for (int atom = 0; atom < off.back(); ++atom) {
      const int expect = reference_tile(off, atom);
      REQUIRE(binary_tile_search(at, 0, tiles, atom) == expect);
      REQUIRE(interpolation_tile_search(at, 0, tiles, atom) == expect);
      REQUIRE(hybrid_tile_search(SearchKind::interpolation, at, 0, tiles, atom) == expect);
    }
  }
}

TEST_CASE("merge-path search splits tiles + atoms consistently", "[balance][search]") {
  std::mt19937 rng(7);
  for (int round = 0; round < 100; ++round) {
    const int tiles = static_cast<int>(rng() % 200);
    const auto off = random_offsets(rng, tiles, 1 + static_cast<int>(rng() % 30), 0.3);
    auto at = [&](int t) { return off[t]; };
    const int atoms = off.back();
    MergeCoordinate<int> previous{0, 0};
    for (std::int64_t d = 0; d <= tiles + atoms; ++d) {
      const auto c = merge_path_search(d, at, tiles, atoms);
      REQUIRE(c.tile + c.atom == d);
      // Monotone, one step at a time, and inside the tile's atom range.
      REQUIRE(c.tile >= previous.tile);
      REQUIRE(c.atom >= previous.atom);
      if (c.tile < tiles) {
        REQUIRE(off[c.tile] <= c.atom);
        REQUIRE(c.atom <= off[c.tile + 1]);
      } else {
        REQUIRE(c.atom == atoms);
      }
      previous = c;
    }
  }
}

TEST_CASE("step and infinite ranges", "[balance][ranges]") {
  std::vector<int> seen;
  for (int i : step_range(3, 20, 5)) seen.push_back(i);
  REQUIRE(seen == std::vector<int>{3, 8, 13, 18});
  REQUIRE(step_range(3, 20, 5).size() == 4);
  REQUIRE(step_range(5, 5, 1).size() == 0);
  seen.clear();
  for (int i : stride_range(0, 10, 2, 4)) seen.push_back(i);
  REQUIRE(seen == std::vector<int>{2, 6});
  seen.clear();
  for (int i : infinite_range(1, 3)) {
    if (i > 10) break;
    seen.push_back(i);
  }
  REQUIRE(seen == std::vector<int>{1, 4, 7, 10});
}

TEST_CASE("choose_search follows Busato and Bombieri's thresholds", "[balance][search]") {
  REQUIRE(choose_search(2.1, 0.5) == SearchKind::interpolation);
  REQUIRE(choose_search(96.2, 1033.1) == SearchKind::binary);
  REQUIRE(choose_search(8.0, 9.0) == SearchKind::binary);
}
