// Coverage: under every schedule, every atom is visited exactly once, runs stay inside their
// tile, `store` runs hold whole tiles that nobody else touches, and schedules that promise
// not to split tiles do not. The schedules run their real code on simulated teams (one CPU
// thread per GPU thread, std::barrier for syncs): random and adversarial tile sizes, several
// team shapes, a grid of teams and a single team (one task worker).
#include <apiary/balance/host_team.hpp>
#include <apiary/balance/schedules.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <cmath>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <utility>
#include <vector>

using namespace apiary::balance;

namespace {

struct Distribution {
  std::string name;
  std::vector<int> offsets;
};

std::vector<int> offsets_from(const std::vector<int>& sizes) {
  std::vector<int> off(sizes.size() + 1, 0);
  for (std::size_t i = 0; i < sizes.size(); ++i) off[i + 1] = off[i] + sizes[i];
  return off;
}

std::vector<Distribution> distributions() {
  std::mt19937 rng(2024);
  std::vector<Distribution> d;
  auto add = [&](std::string name, std::vector<int> sizes) { d.push_back({std::move(name), offsets_from(sizes)}); };
  {
    std::vector<int> s(517);
    std::uniform_int_distribution<int> len(0, 24);
    for (int& x : s) x = len(rng);
    add("random", s);
  }
  add("no tiles", {});
  add("all empty", std::vector<int>(300, 0));
  add("all equal", std::vector<int>(256, 8));
  add("single huge tile", {5000});
  {
    std::vector<int> s(400, 1);
    s[123] = 6000;  // one huge tile among short ones (circuit-like)
    add("one huge among short", s);
  }
  {
    std::vector<int> s(1000, 0);
    for (int i = 0; i < 1000; i += 97) s[i] = 1 + static_cast<int>(rng() % 300);
    add("mostly empty", s);
  }
  {
    std::vector<int> s(700);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    for (int& x : s) x = std::min(3000, static_cast<int>(1.0 / std::pow(1.0 - u(rng), 1.0 / 1.3)) - 1);
    add("power law", s);
  }
  add("tiles not a multiple of the team", std::vector<int>(33, 3));
  return d;
}

struct Counters {
  explicit Counters(std::size_t atoms, std::size_t tiles)
      : visits(atoms), store_runs(tiles), other_runs(tiles) {}
  std::vector<std::atomic<int>> visits;
  std::vector<std::atomic<int>> store_runs;
  std::vector<std::atomic<int>> other_runs;
  std::mutex mutex;
  std::vector<std::string> errors;
  void error(std::string e) {
    std::lock_guard lock(mutex);
    if (errors.size() < 10) errors.push_back(std::move(e));
  }
};

template <class Layout>
struct CoverageSink {
  const Layout* layout;
  Counters* counters;
  bool may_split;
  void operator()(const Run<int>& r) const {
    const int tiles = layout->num_tiles();
    if (r.tile < 0 || r.tile >= tiles) return counters->error("run outside the tiles: " + std::to_string(r.tile));
    const int b = layout->tile_begin(r.tile), e = layout->tile_end(r.tile);
    if (r.stride <= 0) return counters->error("non-positive stride");
    if (r.first < b || r.last > e) {
      if (r.first < r.last) return counters->error("run leaves its tile " + std::to_string(r.tile));
    }
    for (int a = r.first; a < r.last; a += r.stride) counters->visits[a].fetch_add(1);
    if (r.edges_known() && (r.begins_tile() != (r.first == b) || r.ends_tile() != (r.last == e)))
      counters->error("run edges of tile " + std::to_string(r.tile) + " do not match its bounds");
    switch (r.combine) {
      case Combine::store:
        if (r.first != b || r.last != e || r.stride != 1) counters->error("store run is not the whole tile " + std::to_string(r.tile));
        counters->store_runs[r.tile].fetch_add(1);
        break;
      case Combine::atomic:
        if (!may_split) counters->error("atomic run from a schedule that does not split tiles");
        counters->other_runs[r.tile].fetch_add(1);
        break;
      case Combine::group:
        if (r.group_size == 0) counters->error("group run without a group size");
        counters->other_runs[r.tile].fetch_add(1);
        break;
    }
  }
};

// A sink with staging hooks: checks that runs stay inside the staged window.
template <class Layout>
struct StagingSink {
  CoverageSink<Layout> inner;
  int* window;  // per team: [first, last) of the current window, written by rank 0
  std::atomic<int>* stage_calls;
  void stage_in(SimTeam& team, int first, int last) {
    if (team.rank() == 0) {
      window[0] = first;
      window[1] = last;
    }
    stage_calls->fetch_add(1);
  }
  void stage_out(SimTeam& team, int first, int last) {
    if (window[0] != first || window[1] != last) inner.counters->error("stage_out window differs from stage_in");
    (void)team;
  }
  void operator()(const Run<int>& r) const {
    if (r.first < r.last && (r.first < window[0] || r.last > window[1])) inner.counters->error("run outside the staged window");
    inner(r);
  }
};

template <ScheduleKind K, class Layout>
void check_schedule(const Layout& layout, const std::string& label, unsigned teams, unsigned team_size, unsigned warp,
                    ScheduleParams<int> params, bool staging = false) {
  using Sched = schedule_t<K, Processors<SimTeam>, Layout>;
  std::vector<int> partition;
  if (needs_partition(K)) {
    const std::int64_t chunk = partition_chunk_atoms(K, team_size, params);
    const int chunks = partition_chunks(layout, chunk);
    partition.assign(static_cast<std::size_t>(chunks) + 1, -1);
    // The partition pass runs on the simulated grid too: one boundary per thread, strided.
    simulate(teams, team_size, warp, 0, [&](Processors<SimTeam>& procs, void*) {
      for (std::int64_t c = procs.global_rank(); c <= chunks; c += procs.global_size())
        partition[c] = partition_boundary(layout, chunk, params.search, static_cast<int>(c));
    });
    params.partition = partition.data();
  }
  Counters counters(static_cast<std::size_t>(layout.num_atoms()), static_cast<std::size_t>(layout.num_tiles()));
  std::atomic<int> stage_calls{0};
  std::vector<int> windows(2 * teams, 0);
  const std::size_t scratch = Sched::scratch_bytes(team_size, params);
  simulate(teams, team_size, warp, scratch, [&](Processors<SimTeam>& procs, void* smem) {
    Sched sched(procs, layout, params, smem);
    CoverageSink<Layout> sink{&layout, &counters, Sched::may_split};
    if (staging) {
      StagingSink<Layout> staged{sink, windows.data() + 2 * procs.team_index, &stage_calls};
      sched.run(staged);
    } else {
      sched.run(sink);
    }
  });
  INFO(std::string(name(K)) << " on '" << label << "' with " << teams << " teams of " << team_size << " (warp " << warp
                            << "), group " << params.group_size << ", K " << params.items_per_thread);
  for (const auto& e : counters.errors) FAIL_CHECK(e);
  int wrong = 0, first_wrong = -1;
  for (std::size_t a = 0; a < counters.visits.size(); ++a)
    if (counters.visits[a].load() != 1) {
      if (first_wrong < 0) first_wrong = static_cast<int>(a);
      ++wrong;
    }
  INFO("first atom not visited exactly once: " << first_wrong
                                               << (first_wrong >= 0 ? " (visits " + std::to_string(counters.visits[first_wrong].load()) + ")" : ""));
  CHECK(wrong == 0);
  for (int t = 0; t < layout.num_tiles(); ++t) {
    const int stores = counters.store_runs[t].load(), others = counters.other_runs[t].load();
    if (stores > 1 || (stores == 1 && others > 0)) {
      FAIL_CHECK("tile " << t << " has a store run and other runs (" << stores << ", " << others << ")");
      break;
    }
  }
  if (staging && layout.num_atoms() > 0) CHECK(stage_calls.load() > 0);
}

template <ScheduleKind K, class Layout>
void check_all_shapes(const Layout& layout, const std::string& label, double mean, double stddev) {
  struct Shape {
    unsigned teams, team_size, warp;
  };
  // A grid of teams; one team alone (a task worker); a team of one warp; 16-wide "warps".
  for (Shape s : {Shape{3, 64, 32}, Shape{1, 64, 32}, Shape{2, 32, 32}, Shape{2, 32, 16}}) {
    ScheduleParams<int> p = default_params<int>(K, mean, stddev);
    if (K == ScheduleKind::warp_mapped) p.group_size = s.warp;
    check_schedule<K>(layout, label, s.teams, s.team_size, s.warp, p);
  }
  // Variants of the knobs.
  if constexpr (K == ScheduleKind::virtual_warp || K == ScheduleKind::group_mapped || K == ScheduleKind::dynamic_virtual_warp) {
    for (unsigned g : {2u, 8u}) {
      ScheduleParams<int> p = default_params<int>(K, mean, stddev);
      p.group_size = g;
      check_schedule<K>(layout, label, 2, 32, 32, p);
    }
  }
  if constexpr (K == ScheduleKind::two_phase || K == ScheduleKind::multi_phase || K == ScheduleKind::merge_path) {
    ScheduleParams<int> p = default_params<int>(K, mean, stddev);
    p.items_per_thread = 1;
    p.iterations = 3;
    check_schedule<K>(layout, label, 2, 32, 32, p);
    p.items_per_thread = 5;
    p.search = SearchKind::interpolation;
    check_schedule<K>(layout, label, 3, 32, 32, p);
  }
  if constexpr (K == ScheduleKind::multi_phase) {
    ScheduleParams<int> p = default_params<int>(K, mean, stddev);
    p.items_per_thread = 3;
    check_schedule<K>(layout, label, 2, 32, 32, p, /*staging=*/true);
    p.iterations = 4;  // several windows per chunk: offsets loaded in more than one batch
    check_schedule<K>(layout, label, 3, 32, 32, p, /*staging=*/true);
  }
  if constexpr (K == ScheduleKind::cta_warp_scan) {
    ScheduleParams<int> p = default_params<int>(K, mean, stddev);
    p.cta_threshold = 40;
    p.warp_threshold = 4;
    check_schedule<K>(layout, label, 2, 64, 32, p);
  }
  if constexpr (K == ScheduleKind::block_search) {
    ScheduleParams<int> p = default_params<int>(K, mean, stddev);
    p.tiles_per_chunk = 7;
    check_schedule<K>(layout, label, 2, 32, 32, p);
  }
}

template <class Layout>
void check_every_schedule(const Layout& layout, const std::string& label) {
  double mean = 0, sq = 0;
  const int tiles = layout.num_tiles();
  for (int t = 0; t < tiles; ++t) mean += layout.tile_end(t) - layout.tile_begin(t);
  mean = tiles ? mean / tiles : 0;
  for (int t = 0; t < tiles; ++t) sq += std::pow(layout.tile_end(t) - layout.tile_begin(t) - mean, 2);
  const double stddev = tiles ? std::sqrt(sq / tiles) : 0;
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (check_all_shapes<all_schedules[I]>(layout, label, mean, stddev), ...);
  }(std::make_index_sequence<all_schedules.size()>{});
}

}  // namespace

TEST_CASE("every schedule visits every atom exactly once (offsets layout)", "[balance][coverage]") {
  for (const Distribution& d : distributions()) {
    SECTION(d.name) {
      OffsetsLayout<int> layout{d.offsets.data(), static_cast<int>(d.offsets.size()) - 1};
      check_every_schedule(layout, d.name);
    }
  }
}

TEST_CASE("any layout drives any schedule: sorted COO and uniform layouts", "[balance][coverage][layout]") {
  // COO row indices of a random matrix; the schedules see rows as tiles through binary search.
  std::mt19937 rng(5);
  std::vector<int> rows;
  for (int r = 0; r < 150; ++r)
    for (int k = static_cast<int>(rng() % 12); k > 0; --k) rows.push_back(r);
  SortedCooLayout<int> coo{rows.data(), 150, static_cast<int>(rows.size())};
  check_every_schedule(coo, "sorted COO");
  UniformLayout<int> uniform{300, 5};
  check_every_schedule(uniform, "uniform");
}
