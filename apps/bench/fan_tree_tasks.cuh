// The fan-out/fan-in tree's task types (the fan_tree benchmark; the runtime GPU test of trees
// on queues a level fills). A Fork task (worker size 32) spawns F Leaf tasks (worker size 32)
// and, with spawn_when(dep, next, F), the Fork of the next level, which runs once all F leaves
// resolved `dep`. The next-level Fork is the join of this level and the fork of the next one;
// a tree of depth D runs D + 1 Forks and D * F Leaves. Dependency tree * D + level of the
// runtime's pool belongs to level `level` of tree `tree`.
#pragma once

#include <apiary/apiary.cuh>

#include <cstdint>

namespace apiary_bench::fan_tree {

struct Leaf {
  struct Item {
    std::uint32_t dependency;  // index in the runtime's pool
  };
  static constexpr unsigned threads = 32;
  static constexpr unsigned shared_bytes = 0;
  static constexpr const char* name = "Leaf";
  template <class Ctx>
  __device__ void operator()(apiary::Worker w, const Item& item, Ctx& ctx) const {
    if (w.rank() == 0) ctx.resolve(ctx.dependency(item.dependency));
  }
};

struct Fork {
  struct Item {
    std::uint32_t tree;
    std::uint32_t level;   // 0 = root; level == depth: the last join, spawns nothing
    std::uint32_t depth;
    std::uint32_t fan_out;  // a multiple of 32
  };
  static constexpr unsigned threads = 32;
  static constexpr unsigned shared_bytes = 0;
  static constexpr const char* name = "Fork";
  template <class Ctx>
  __device__ void operator()(apiary::Worker w, const Item& item, Ctx& ctx) const {
    if (item.level >= item.depth) return;
    const std::uint32_t d = item.tree * item.depth + item.level;
    if (w.rank() == 0) {
      Item next = item;
      next.level = item.level + 1;
      ctx.template spawn_when<Fork>(ctx.dependency(d), next, std::int32_t(item.fan_out));
    }
    const std::uint32_t per_lane = item.fan_out / 32;
    for (std::uint32_t j = 0; j < per_lane; ++j) ctx.template spawn<Leaf>(Leaf::Item{d});
  }
};

using FanGraph = apiary::PhaseQueue<apiary::Phaseless<Fork, Leaf>>;

}  // namespace apiary_bench::fan_tree
