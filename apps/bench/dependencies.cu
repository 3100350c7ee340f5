// dependency_resolution: throughput of ctx.resolve() and of the releases it triggers.
// dependency_chain: latency of one link of a chain of tasks, each spawning the next, or each
// releasing the next, which waits parked from the start (mode "parked").
#include "bench_tasks.cuh"

namespace apiary_bench {
namespace {

// ---- dependency_resolution -------------------------------------------------------------
//
// Phase 0: owners (worker size 32) park one waiter per lane on dependency d with fan-in k.
// Phase 1: N = M * k host-seeded producers (worker size 1) resolve them; producers j*k ..
// j*k + k - 1 resolve dependency j (siblings resolving their parent's dependency), and the
// k-th resolution moves the waiter from the waiting storage to its queue.
// The same graph runs a base case with the same task counts in which owners spawn waiters
// directly and producers resolve nothing; the difference is what the dependency machinery
// (park, k resolutions, release) costs.

struct Waiter {
  struct Item {
    std::uint32_t index;  // its dependency
  };
  static constexpr unsigned threads = 1;
  static constexpr unsigned shared_bytes = 0;
  static constexpr const char* name = "Waiter";
  template <class Ctx>
  __device__ void operator()(apiary::Worker, const Item& item, Ctx&) const {
    touch(item.index);
  }
};

struct Producer {
  struct Item {
    std::uint32_t index;    // the dependency it resolves
    std::uint32_t resolve;  // 0 in the base case
  };
  static constexpr unsigned threads = 1;
  static constexpr unsigned shared_bytes = 0;
  static constexpr const char* name = "Producer";
  template <class Ctx>
  __device__ void operator()(apiary::Worker, const Item& item, Ctx& ctx) const {
    if (item.resolve) ctx.resolve(ctx.dependency(item.index));
    else touch(item.index);
  }
};

struct Owner {
  struct Item {
    std::uint32_t first;   // dependency of lane 0
    std::uint32_t fan_in;  // resolutions each waiter needs
    std::uint32_t park;    // 0 in the base case: spawn the waiter directly
  };
  static constexpr unsigned threads = 32;
  static constexpr unsigned shared_bytes = 0;
  static constexpr const char* name = "Owner";
  template <class Ctx>
  __device__ void operator()(apiary::Worker w, const Item& item, Ctx& ctx) const {
    const std::uint32_t d = item.first + w.rank();
    if (item.park) ctx.template spawn_when<Waiter>(ctx.dependency(d), Waiter::Item{d}, std::int32_t(item.fan_in));
    else ctx.template spawn<Waiter>(Waiter::Item{d});
  }
};

using DependencyGraph = apiary::PhaseQueue<apiary::Phase<Owner>, apiary::Phase<Producer, Waiter>>;

struct FanInRun {
  std::uint32_t fan_in;
  std::uint64_t producers;
  std::uint64_t waiters;
};

Measurement time_fan_in(apiary::Runtime<DependencyGraph>& rt, const Options& o, const FanInRun& run, bool park) {
  std::vector<Owner::Item> owners(run.waiters / 32);
  for (std::uint64_t i = 0; i < owners.size(); ++i)
    owners[i] = Owner::Item{std::uint32_t(i * 32), run.fan_in, park ? 1u : 0u};
  std::vector<Producer::Item> producers(run.producers);
  for (std::uint64_t j = 0; j < run.producers; ++j)
    producers[j] = Producer::Item{std::uint32_t(j / run.fan_in), park ? 1u : 0u};

  Measurement m;
  m.benchmark = "dependency_resolution";
  m.tasks = run.producers;
  time_runs(
      rt, o.repeats, m.benchmark,
      [&](auto& r) {
        r.template seed<Owner>(owners);
        r.template seed<Producer>(producers);
      },
      [&](const apiary::Report& report) {
        for (auto [type, want] : {std::pair<const char*, std::uint64_t>{Owner::name, owners.size()},
                                  {Producer::name, run.producers},
                                  {Waiter::name, run.waiters}}) {
          std::string problem = expect_executed(report, type, want);
          if (!problem.empty()) return problem;
        }
        return expect_clean(report);
      },
      m);
  return m;
}

}  // namespace

void bench_dependency_resolution(const Options& o, const Sink& sink) {
  const std::uint64_t producers = o.quick ? (1ull << 20) : (1ull << 22);
  const std::uint32_t fan_ins[] = {1, 4, 32};
  const std::uint64_t max_waiters = producers / fan_ins[0];

  // One runtime for every fan-in, sized for the most waiters parked at once.
  apiary::Config config = bench_config(o);
  config.queue_capacities = {{Owner::name, max_waiters / 32}, {Producer::name, producers}, {Waiter::name, max_waiters}};
  config.dependency_capacity = static_cast<std::uint32_t>(max_waiters);
  // Half full at most: parking probes the waiting storage linearly from a hashed start.
  config.waiting_storage_capacity = static_cast<std::uint32_t>(2 * max_waiters);
  apiary::Runtime<DependencyGraph> rt{config};

  for (const std::uint32_t fan_in : fan_ins) {
    const FanInRun run{fan_in, producers, producers / fan_in};
    const Measurement base = time_fan_in(rt, o, run, false);
    Measurement m = time_fan_in(rt, o, run, true);
    const double ms = median(m.ms), base_ms = median(base.ms);
    m.config = {Field::num("fan_in", fan_in), Field::num("waiters", double(run.waiters)),
                Field::num("producer_worker_size", Producer::threads), Field::num("block_threads", o.block_threads)};
    m.extra = {Field::num("resolutions_per_second", double(run.producers) / (ms * 1e-3)),
               Field::num("releases_per_second", double(run.waiters) / (ms * 1e-3)),
               Field::num("base_median_ms", base_ms),
               Field::num("base_min_ms", minimum(base.ms)),
               // What parking, resolving and releasing add to the same tasks run without them.
               Field::num("marginal_ns_per_resolution", (ms - base_ms) * 1e6 / double(run.producers)),
               Field::num("marginal_ns_per_waiter", (ms - base_ms) * 1e6 / double(run.waiters))};
    m.baseline = "none";
    sink(m);
  }
}

namespace {

// ---- dependency_chain ------------------------------------------------------------------
//
// One task at a time: link i spawns link i + 1 and ends. Modes: "spawn" spawns the next link
// with ctx.spawn (always through the queue); "next" with ctx.spawn_next (a continuation: the
// block's hand-off slot where it can); "dependency" spawns it with spawn_when on a fresh
// dependency and then resolves that itself, so every hop parks, resolves and releases (the
// release goes to the hand-off slot where it can); "held" does the same with
// ctx.spawn_next_when, so the next link waits in the block's hand-off slot where it can
// (megakernel) and the block polls the dependency. The time per link is the latency of a hop
// through the scheduler (nothing else runs). Each mode runs with the hand-off on
// (Config::handoff, the default) and off, in the same run.

enum class ChainMode : std::uint32_t { spawn, next, dependency, held };
inline const char* name_of(ChainMode m) {
  switch (m) {
    case ChainMode::spawn: return "spawn";
    case ChainMode::next: return "next";
    case ChainMode::dependency: return "dependency";
    case ChainMode::held: return "held";
  }
  return "?";
}

struct Link {
  struct Item {
    std::uint32_t remaining;
    ChainMode mode;
  };
  static constexpr unsigned threads = 1;
  static constexpr unsigned shared_bytes = 0;
  static constexpr const char* name = "Link";
  template <class Ctx>
  __device__ void operator()(apiary::Worker, const Item& item, Ctx& ctx) const {
    if (item.remaining == 0) return;
    const Item next{item.remaining - 1, item.mode};
    if (item.mode == ChainMode::spawn) {
      ctx.template spawn<Link>(next);
      return;
    }
    if (item.mode == ChainMode::next) {
      ctx.template spawn_next<Link>(next);
      return;
    }
    apiary::Dependency* dep = ctx.new_dependency();
    if (dep == nullptr) return;  // pool exhausted: the run reports the error
    if (item.mode == ChainMode::held) ctx.template spawn_next_when<Link>(*dep, next, 1);
    else ctx.template spawn_when<Link>(*dep, next, 1);
    ctx.resolve(*dep);
  }
};

using ChainGraph = apiary::PhaseQueue<apiary::Phaseless<Link>>;

// A chain of `links` hops ran all links + 1 tasks and left nothing behind.
std::string expect_chain_ran(const apiary::Report& report, const char* link_type, std::uint32_t links) {
  const std::string problem = expect_executed(report, link_type, links + 1ull);
  return problem.empty() ? expect_clean(report) : problem;
}

// The JSON config of a chain measurement (every mode).
std::vector<Field> chain_config(const Options& o, const char* mode, std::uint32_t links, bool handoff) {
  return {Field::str("mode", mode), Field::num("links", links), Field::num("block_threads", o.block_threads),
          Field::num("blocks_per_sm", o.blocks_per_sm), Field::str("handoff", handoff ? "on" : "off")};
}

void time_chain(apiary::Runtime<ChainGraph>& rt, const Options& o, const Sink& sink, std::uint32_t links,
                ChainMode mode, bool handoff) {
  const std::vector<Link::Item> head{Link::Item{links, mode}};
  Measurement m;
  m.benchmark = "dependency_chain";
  m.config = chain_config(o, name_of(mode), links, handoff);
  m.tasks = links;  // hops; the run executes links + 1 tasks
  time_runs(
      rt, o.repeats, m.benchmark, [&](auto& r) { r.template seed<Link>(head); },
      [&](const apiary::Report& report) { return expect_chain_ran(report, Link::name, links); },
      m);
  sink(m);
}

// ---- dependency_chain, mode "parked" -----------------------------------------------------
//
// A chain whose links all wait before it starts, as in a task graph built ahead of its
// inputs: phase 0 parks links 1..N, link i on pool dependency i (Parker tasks, one link per
// lane); in phase 1 the host-seeded link 0 runs and every link i resolves dependency i + 1,
// which releases link i + 1 (to the block's hand-off slot, or its queue with the hand-off
// off). A hop is resolve -> release -> run, without the parking that mode "dependency" puts
// on every hop. The time per link includes phase 0 (one wave of N / 32 Parker tasks) and one
// phase change, a few ns per link at N = 10^4.

struct Relay {
  struct Item {
    std::uint32_t index;  // the link's place in the chain, 0..links
    std::uint32_t links;
  };
  static constexpr unsigned threads = 1;
  static constexpr unsigned shared_bytes = 0;
  static constexpr const char* name = "Relay";
  template <class Ctx>
  __device__ void operator()(apiary::Worker, const Item& item, Ctx& ctx) const {
    touch(item.index);
    if (item.index < item.links) ctx.resolve(ctx.dependency(item.index + 1));
  }
};

struct Parker {
  struct Item {
    std::uint32_t first;  // link of lane 0
    std::uint32_t links;
  };
  static constexpr unsigned threads = 32;
  static constexpr unsigned shared_bytes = 0;
  static constexpr const char* name = "Parker";
  template <class Ctx>
  __device__ void operator()(apiary::Worker w, const Item& item, Ctx& ctx) const {
    const std::uint32_t link = item.first + w.rank();
    if (link >= 1 && link <= item.links)
      ctx.template spawn_when<Relay>(ctx.dependency(link), Relay::Item{link, item.links}, 1);
  }
};

using ParkedChainGraph = apiary::PhaseQueue<apiary::Phase<Parker>, apiary::Phase<Relay>>;

void time_parked_chain(const Options& o, const Sink& sink, std::uint32_t links, bool handoff) {
  apiary::Config config = bench_config(o);
  config.handoff = handoff;
  config.queue_capacities = {{Parker::name, links / 32 + 1}, {Relay::name, 1024}};
  config.dependency_capacity = links + 1;
  config.waiting_storage_capacity = 2 * links;  // half full: parking probes linearly
  apiary::Runtime<ParkedChainGraph> rt{config};
  std::vector<Parker::Item> parkers;
  for (std::uint32_t first = 0; first <= links; first += 32) parkers.push_back(Parker::Item{first, links});
  const std::vector<Relay::Item> head{Relay::Item{0, links}};
  Measurement m;
  m.benchmark = "dependency_chain";
  m.config = chain_config(o, "parked", links, handoff);
  m.tasks = links;
  time_runs(
      rt, o.repeats, m.benchmark,
      [&](auto& r) {
        r.template seed<Parker>(parkers);
        r.template seed<Relay>(head);
      },
      [&](const apiary::Report& report) { return expect_chain_ran(report, Relay::name, links); },
      m);
  sink(m);
}

}  // namespace

void bench_dependency_chain(const Options& o, const Sink& sink) {
  const std::uint32_t links = o.quick ? 2000 : 10000;  // the issue's chain of 10^4 tasks
  apiary::Config config = bench_config(o);
  config.queue_capacity = 1024;
  config.dependency_capacity = links;
  config.waiting_storage_capacity = 1024;
  for (const bool handoff : {true, false}) {
    config.handoff = handoff;
    {
      apiary::Runtime<ChainGraph> rt{config};
      for (const ChainMode mode : {ChainMode::spawn, ChainMode::next, ChainMode::dependency, ChainMode::held})
        time_chain(rt, o, sink, links, mode, handoff);
    }
    time_parked_chain(o, sink, links, handoff);
  }
}

}  // namespace apiary_bench
