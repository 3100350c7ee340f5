// The dependency pool and blocks' shares of it (dependency_pool.hpp) under concurrency: CPU
// threads grouped into "blocks" allocate through their block's share, as megakernel tasks do
// through ctx.new_dependency. Every index is handed out once, the indices the shares keep stay
// within one share per block, and a pool with the runtime's slack never runs out before the
// configured capacity.
#include "host_structures.hpp"

#include <apiary/dependency_pool.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

using namespace apiary;
using namespace apiary::testing;

namespace {

struct Allocation {
  std::vector<std::uint32_t> taken;  // every index handed out, all threads
  std::uint32_t cursor = 0;          // the pool's cursor afterwards
};

// `blocks` shares, `threads_per_block` threads each taking `per_thread` indices (a block of
// one thread takes them all itself: no concurrency inside it). `shares`: false for blocks
// that end with their launch (reset_without_share), which take every index from the pool.
Allocation allocate(std::uint32_t limit, unsigned blocks, unsigned threads_per_block, std::uint32_t per_thread,
                    bool shares = true) {
  std::uint32_t next = 0;
  const DependencyPool pool{nullptr, &next, limit, limit};
  std::vector<BlockDependencies> block_shares(blocks);
  for (auto& s : block_shares) {
    if (shares) s.reset();
    else s.reset_without_share();
  }
  std::vector<std::vector<std::uint32_t>> got(blocks * threads_per_block);
  run_threads(blocks * threads_per_block, [&](unsigned t) {
    BlockDependencies& share = block_shares[t / threads_per_block];
    for (std::uint32_t i = 0; i < per_thread; ++i) got[t].push_back(share.take(pool));
  });
  Allocation a;
  for (auto& g : got) a.taken.insert(a.taken.end(), g.begin(), g.end());
  a.cursor = next;
  return a;
}

}  // namespace

TEST_CASE("dependency pool: blocks' shares hand out every index once and keep at most a share per block",
          "[dependency][stress]") {
  const unsigned blocks = GENERATE(1u, 2u, 4u);
  const unsigned threads_per_block = stress_threads() / blocks;
  const auto per_thread = static_cast<std::uint32_t>(scaled(200'000));
  const std::uint32_t total = per_thread * blocks * threads_per_block;
  const Allocation a = allocate(0xffffffffu, blocks, threads_per_block, per_thread);
  std::vector<std::uint32_t> sorted = a.taken;
  std::sort(sorted.begin(), sorted.end());
  REQUIRE(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end());  // no index twice
  REQUIRE(sorted.size() == total);
  REQUIRE(a.cursor >= total);
  REQUIRE(a.cursor - total <= blocks * (DependencyPool::share - 1));  // kept in the shares, unused
}

TEST_CASE("dependency pool: with one share per block of slack, the configured capacity is always there",
          "[dependency][stress]") {
  const unsigned blocks = 4, threads_per_block = stress_threads() / blocks;
  const std::uint32_t per_thread = 1 + static_cast<std::uint32_t>(scaled(50'000));
  const std::uint32_t capacity = per_thread * blocks * threads_per_block;
  SECTION("exactly the capacity: every allocation succeeds") {
    const Allocation a = allocate(capacity + blocks * DependencyPool::share, blocks, threads_per_block, per_thread);
    REQUIRE(std::all_of(a.taken.begin(), a.taken.end(), [&](std::uint32_t i) { return i < capacity + blocks * DependencyPool::share; }));
  }
  SECTION("without the slack, the shares' unused indices make it run out before the capacity") {
    // One thread per block, so each block's last share is certainly left partly unused when the
    // allocation count is not a multiple of the share.
    const std::uint32_t odd = DependencyPool::share * 3 + 1;
    const Allocation a = allocate(odd * blocks, blocks, 1, odd);
    const auto failed = std::count_if(a.taken.begin(), a.taken.end(), [&](std::uint32_t i) { return i >= odd * blocks; });
    REQUIRE(failed > 0);
  }
}

TEST_CASE("dependency pool: blocks without a share take every index from the pool and keep none",
          "[dependency][stress]") {
  const unsigned blocks = GENERATE(1u, 4u);
  const unsigned threads_per_block = stress_threads() / blocks;
  const auto per_thread = static_cast<std::uint32_t>(scaled(50'000));
  const std::uint32_t total = per_thread * blocks * threads_per_block;
  const Allocation a = allocate(0xffffffffu, blocks, threads_per_block, per_thread, false);
  std::vector<std::uint32_t> sorted = a.taken;
  std::sort(sorted.begin(), sorted.end());
  REQUIRE(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end());  // no index twice
  REQUIRE(sorted.size() == total);
  REQUIRE(a.cursor == total);  // nothing kept back: indices 0..total-1, each once
  REQUIRE(sorted.back() == total - 1);
}
