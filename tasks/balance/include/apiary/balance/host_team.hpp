// Host simulation of teams: every simulated GPU thread is a CPU thread, team barriers are
// std::barrier. Host tests run the schedules' real code (the same templates the kernels
// instantiate) under this team, so every sync the schedules rely on is exercised.
#pragma once

#include <apiary/balance/processors.hpp>

#include <barrier>
#include <cstddef>
#include <cstring>
#include <exception>
#include <mutex>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

namespace apiary::balance {

namespace detail {
struct SimTeamState {
  explicit SimTeamState(unsigned size, unsigned warp)
      : team_barrier(static_cast<std::ptrdiff_t>(size)) {
    for (unsigned w = 0; w < size; w += warp)
      warp_barriers.push_back(std::make_unique<std::barrier<>>(static_cast<std::ptrdiff_t>(warp < size - w ? warp : size - w)));
  }
  std::barrier<> team_barrier;
  std::vector<std::unique_ptr<std::barrier<>>> warp_barriers;
};
}  // namespace detail

class SimTeam {
 public:
  SimTeam(detail::SimTeamState* state, unsigned rank, unsigned size, unsigned warp)
      : state_(state), rank_(rank), size_(size), warp_(warp) {}
  unsigned rank() const { return rank_; }
  unsigned size() const { return size_; }
  void sync() { state_->team_barrier.arrive_and_wait(); }
  unsigned warp_size() const { return warp_; }
  void sync_warp() { state_->warp_barriers[rank_ / warp_]->arrive_and_wait(); }

 private:
  detail::SimTeamState* state_;
  unsigned rank_, size_, warp_;
};

// Runs f(Processors<SimTeam>&, void* scratch) on team_size CPU threads per team, for
// team_count teams. `concurrent_teams` teams run at the same time (the rest queue, as blocks
// do on a GPU). Each team gets its own zeroed scratch ("shared memory") of scratch_bytes.
// Exceptions thrown by f are rethrown here.
template <class F>
void simulate(unsigned team_count, unsigned team_size, unsigned warp_size, std::size_t scratch_bytes, F&& f,
              unsigned concurrent_teams = 2) {
  if (team_size == 0 || warp_size == 0 || team_size % warp_size != 0)
    throw std::invalid_argument("simulate: team size must be a positive multiple of the warp size");
  std::exception_ptr error;
  std::mutex error_mutex;
  for (unsigned first = 0; first < team_count; first += concurrent_teams) {
    const unsigned last = first + concurrent_teams < team_count ? first + concurrent_teams : team_count;
    std::vector<std::unique_ptr<detail::SimTeamState>> states;
    std::vector<std::vector<std::max_align_t>> scratch;
    for (unsigned t = first; t < last; ++t) {
      states.push_back(std::make_unique<detail::SimTeamState>(team_size, warp_size));
      scratch.emplace_back((scratch_bytes + sizeof(std::max_align_t) - 1) / sizeof(std::max_align_t) + 1);
    }
    std::vector<std::thread> threads;
    for (unsigned t = first; t < last; ++t)
      for (unsigned r = 0; r < team_size; ++r)
        threads.emplace_back([&, t, r] {
          Processors<SimTeam> procs{SimTeam(states[t - first].get(), r, team_size, warp_size), t, team_count};
          try {
            f(procs, static_cast<void*>(scratch[t - first].data()));
          } catch (...) {
            std::lock_guard lock(error_mutex);
            if (!error) error = std::current_exception();
            std::terminate();  // a thread that leaves early would deadlock the barriers
          }
        });
    for (auto& th : threads) th.join();
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace apiary::balance
