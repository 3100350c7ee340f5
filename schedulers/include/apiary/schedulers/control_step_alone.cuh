// The control step of a controller that runs alone: nothing else runs between two of its
// rounds or waves (the timesliced control kernels between rounds, the PDC wave's controller
// after its graph completed), so nothing it reads changes meanwhile except through the host's
// abort. It reads every counter the idle step decides from in one memory round trip and
// decides with PhaseController::on_idle_alone (the same decisions as on_idle, which reads them
// one after the other: each a round trip on the round's path).
#pragma once

#include <apiary/device_graph.hpp>
#include <apiary/run_state.hpp>

#include <cstdint>

namespace apiary::detail {

// Warp 0, all lanes: every counter the idle step decides from, in one memory round trip (lane
// s reads pending[s] and s + 32). Relaxed loads: the caller runs alone and after the workers'
// grids completed.
__device__ inline IdleCounters read_idle_counters(const DeviceGraph& g) {
  RunState& s = *g.state;
  const std::uint32_t lane = threadIdx.x % 32, slots = g.table.num_phases + 1;
  const bool low = lane < slots && load_relaxed(s.pending[lane].value) != 0;
  const bool high = lane + 32 < slots && load_relaxed(s.pending[lane + 32].value) != 0;
  IdleCounters c;
  c.status_word = load_relaxed(s.status);
  c.error_code = load_relaxed(s.error.code);
  c.host_open = load_relaxed(s.host_open);
  c.pending_total = load_relaxed(s.pending_total.value);
  c.phase_word = load_relaxed(s.phase_word);
  c.parked = g.waiting.parked_hint();
  c.work = __ballot_sync(~0u, low) | (std::uint64_t(__ballot_sync(~0u, high)) << 32);
  return c;
}

// Warp 0 of a controller that runs alone: the step between two rounds or waves. Host input
// first, then the idle step (advance the phase or end the run) from counters read at once.
// Lane 0 gets whether the run goes on and the phase word after the step.
__device__ inline void control_step_alone(const DeviceGraph& g, bool& going, std::uint64_t& phase_word) {
  const PhaseController pc = g.controller();
  bool alive = true;
  if (g.mailbox != nullptr) {  // host input first: it adds pending tasks
    if (threadIdx.x == 0) {
      alive = pc.running();  // a run that ended takes no more host input
      if (alive) g.drain_host_input();
    }
    alive = __shfl_sync(~0u, alive, 0);
    __syncwarp();  // lane 0's queue and counter writes before the other lanes' reads
  }
  const IdleCounters counters = read_idle_counters(g);
  if (threadIdx.x != 0) return;
  phase_word = counters.phase_word;
  going = alive && pc.on_idle_alone(counters, phase_word);
}

}  // namespace apiary::detail
